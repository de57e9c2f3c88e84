package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"bokat/internal/sqlstore/sqlstoretest"
)

// TestTwoServesSeeAProviderChange runs two serve programs on one database,
// as two processes behind one address would: each price a provider's system
// sets through the provider API of one is in the very next search of the
// other, and so is a whole day it blocks. The wall time from the change to
// that answer is reported for the figures (never asserted).
func TestTwoServesSeeAProviderChange(t *testing.T) {
	t.Parallel()
	for _, engine := range sqlstoretest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			dbURL := sqlstoretest.URL(t, engine)
			env := map[string]string{"BOKAT_SECRET_KEY": base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{5}, 32)),
				"BOKAT_TOKEN_PEPPER": base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{6}, 32))}
			args := []string{"--database", dbURL, "--rate-writes", "off", "--rate-search", "off", "--rate-reads", "off"}
			one, partner, _, stopOne := startServe(t, append([]string{"--demo"}, args...), env)
			defer stopOne()
			two, _, _, stopTwo := startServe(t, args, env)
			defer stopTwo()
			var out bytes.Buffer
			if err := run(context.Background(), []string{"provider", "token", "create", "prv_sthlm_vvs_1", "--scopes", "all",
				"--database", dbURL}, getenvFrom(env), &out, io.Discard); err != nil {
				t.Fatal(err)
			}
			var created struct {
				Token string `json:"token"`
			}
			if err := json.Unmarshal(out.Bytes(), &created); err != nil {
				t.Fatal(err)
			}

			var took []time.Duration
			for i := range 20 {
				price := 2000 + i
				began := time.Now()
				change(t, one, created.Token, "PUT", "/v1/provider/prices", fmt.Sprintf(
					`{"services":[{"service_id":"vvs_install_faucet_standard","price_sek":%d,"duration":{"fixed_minutes":90}}]}`, price))
				options := searchOptions(t, two, partner)
				took = append(took, time.Since(began))
				if len(options) == 0 || options[0].price != price {
					t.Fatalf("change %d: the other serve's next search offers %+v, want the price %d", i, options, price)
				}
			}
			slices.Sort(took)
			t.Logf("%s: a price set on one serve → seen by the other's next search: p50 %v, p99 %v (%d changes)",
				engine, took[len(took)/2], took[len(took)*99/100], len(took))

			day := searchOptions(t, two, partner)[0].day
			change(t, one, created.Token, "POST", "/v1/provider/blocks", `{"kind":"days","from":"`+day+`"}`)
			for _, o := range searchOptions(t, two, partner) {
				if o.day == day {
					t.Errorf("the other serve offers %s on the day blocked on the first", o.start)
				}
			}
		})
	}
}

// change sends one keyed write of the provider API and fails the test
// unless it is answered 200.
func change(t *testing.T, base, token, method, path, body string) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", fmt.Sprintf("change-%d", time.Now().UnixNano()))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
}

type offered struct {
	start, day string
	price      int
}

// searchOptions searches for a faucet installation in 113 45 within two
// weeks and returns the options of prv_sthlm_vvs_1.
func searchOptions(t *testing.T, base, partner string) []offered {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/v1/booking-options", strings.NewReader(`{"spec_version":"public_bookings_api_v1",`+
		`"vertical_id":"vvs","job_type_id":"install_faucet","description":"Byta köksblandare, ny blandare finns.",`+
		`"location":{"country_code":"SE","postcode":"113 45","city":"Stockholm"},"timing":{"preferred_time_text":"inom två veckor"},"locale":"sv-SE"}`))
	req.Header.Set("Authorization", "Bearer "+partner)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var res struct {
		Options []struct {
			Provider struct {
				ID string `json:"id"`
			} `json:"provider"`
			Slot struct {
				Start string `json:"start_at"`
			} `json:"slot"`
			Price struct {
				AmountSEK int `json:"amount_sek"`
			} `json:"price"`
		} `json:"options"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("search: %d %v", resp.StatusCode, err)
	}
	var out []offered
	for _, o := range res.Options {
		if o.Provider.ID == "prv_sthlm_vvs_1" {
			out = append(out, offered{start: o.Slot.Start, day: o.Slot.Start[:10], price: o.Price.AmountSEK})
		}
	}
	return out
}
