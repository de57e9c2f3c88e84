package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"bokat/internal/notify/notifytest"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// TestServeTellsTheProviderTheJobSize: through the real program, a booking
// of 8 windows reaches the provider with the quantity priced, the unit
// price and the minimum charge that decided the price (8 × 89 kr is less
// than the demo provider's 795 kr).
func TestServeTellsTheProviderTheJobSize(t *testing.T) {
	t.Parallel()
	smtpServer := notifytest.NewServer(t, notifytest.Options{})
	baseURL, token, _, _ := startServe(t, []string{"--demo", "--database", sqlstoretest.URL(t, sqlstore.SQLite),
		"--smtp-url", "smtp://" + smtpServer.Addr + "?starttls=none", "--mail-from", "Bokat <bokning@mail.bokat.example>"}, nil)
	f := &e2eFlow{t: t, baseURL: baseURL, token: token, smtp: smtpServer, client: &http.Client{Timeout: 10 * time.Second}}
	res := f.call("POST", "/v1/booking-options", map[string]any{
		"vertical_id": "cleaning", "job_type_id": "cleaning_window", "description": "Fönsterputs, åtta fönster i en trea.",
		"location": map[string]any{"country_code": "SE", "postcode": "113 45"}, "details": map[string]any{"window_count": 8},
		"timing": map[string]any{"preferred_time_text": "inom två veckor"},
	})
	var option map[string]any
	for _, o := range res["options"].([]any) {
		if o := o.(map[string]any); o["provider"].(map[string]any)["id"] == "prv_sthlm_stad_1" {
			option = o
			break
		}
	}
	if option == nil {
		t.Fatalf("no option of prv_sthlm_stad_1: %v", res)
	}
	c := e2eCustomer{"Greta Gåsfot", "+46 70 555 83 24", "greta.g.8824@kund.example", "Hornsgatan 12"}
	id := f.call("POST", "/v1/bookings", c.confirm(option, "e2e-windows"))["booking"].(map[string]any)["id"].(string)
	m := f.message("bokningar@stadproffsen-stockholm.example", id, "Nytt bokat uppdrag: ")
	for _, want := range []string{"Pris: 795 kr (fast pris)", "Omfattning: 8 fönster à 89 kr = 712 kr",
		"Lägsta debitering: 795 kr", "Adress: Hornsgatan 12, 113 45"} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("the provider's message lacks %q:\n%s", want, m.Text)
		}
	}
	if _, ok := m.Attachments["invite.ics"]; !ok {
		t.Errorf("the provider's message has no invitation")
	}
}
