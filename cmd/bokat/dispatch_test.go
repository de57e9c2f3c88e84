package main

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"bokat/internal/catalog"
	"bokat/internal/notify/notifytest"
	"bokat/internal/supply"
)

// TestServeHandsFollowUpRequestsToProviders runs the real program on the
// demo supply with a real SMTP server: a request created through the API
// reaches each Stockholm plumber by e-mail, and the log shows no contact
// data.
func TestServeHandsFollowUpRequestsToProviders(t *testing.T) {
	t.Parallel()
	smtpServer := notifytest.NewServer(t, notifytest.Options{})
	dbURL := migratedSQLite(t)
	baseURL, token, logs, stop := startServe(t, []string{"--demo", "--database", dbURL,
		"--smtp-url", "smtp://" + smtpServer.Addr + "?starttls=none", "--mail-from", "Bokat <bokning@bokat.example>"}, nil)

	const (
		name  = "Viveka Östergren-Lund"
		phone = "+46 70 555 83 21"
		email = "viveka.ol.5521@kund.example"
	)
	body := `{"vertical_id":"vvs","job_type_id":"install_faucet","description":"Byta köksblandaren, den nya finns hemma.",
		"user_consent_confirmed":true,"customer":{"name":"` + name + `","phone":"` + phone + `","email":"` + email + `"},
		"location":{"address":"Ringvägen 100","postcode":"118 60"},"timing":{"preferred_time_text":"nästa vecka"}}`
	req, err := http.NewRequest("POST", baseURL+"/v1/requests", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var created struct {
		Request struct {
			ID         string `json:"id"`
			Candidates []struct {
				ID string `json:"id"`
			} `json:"provider_candidates"`
		} `json:"request"`
	}
	err = json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 201 || len(created.Request.Candidates) != 2 {
		t.Fatalf("create request: status %d, err %v, %+v", resp.StatusCode, err, created)
	}

	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	providers, err := supply.Parse(supply.DemoName, supply.Demo(), cat)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, c := range created.Request.Candidates {
		for _, p := range providers {
			if p.ID == c.ID {
				want = append(want, p.Email)
			}
		}
	}
	msgs := smtpServer.Wait(t, 2)
	var got []string
	for _, r := range msgs {
		got = append(got, r.To...)
		m := notifytest.Parse(t, r.Data)
		for _, w := range []string{name, phone, email, "Ringvägen 100", "inte en bokning", created.Request.ID} {
			if !strings.Contains(m.Text, w) {
				t.Errorf("the message to %v lacks %q", r.To, w)
			}
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) || len(want) != 2 {
		t.Errorf("messages went to %v, want the candidates' addresses %v", got, want)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	if !strings.Contains(out, "follow-up request sent to its providers") {
		t.Errorf("the log does not record the delivery:\n%s", out)
	}
	for _, secret := range append([]string{name, phone, email, "Viveka", "Ringvägen"}, want...) {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds %q", secret)
		}
	}
}
