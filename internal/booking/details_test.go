package booking

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"bokat"
)

// detailsOf decodes a details object as the HTTP layer does.
func detailsOf(t *testing.T, raw string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCheckDetailsFindsContactDataAnywhere(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		raw   string
		issue string // the field the one issue names
	}{
		{"english key", `{"phone": "x"}`, "details.phone"},
		{"camel case key", `{"phoneNumber": "x"}`, "details.phoneNumber"},
		{"swedish name", `{"namn": "Greta"}`, "details.namn"},
		{"swedish first name", `{"förnamn": "Greta"}`, "details.förnamn"},
		{"swedish last name", `{"Efternamn": "Gåsfot"}`, "details.Efternamn"},
		{"swedish phone", `{"telefon": "x"}`, "details.telefon"},
		{"swedish phone number", `{"telefonnummer": "x"}`, "details.telefonnummer"},
		{"swedish mobile", `{"mobil": "x"}`, "details.mobil"},
		{"swedish mobile number", `{"mobilnummer": "x"}`, "details.mobilnummer"},
		{"swedish e-mail hyphen", `{"e-post": "x"}`, "details.e-post"},
		{"swedish e-mail", `{"epost": "x"}`, "details.epost"},
		{"swedish mejl", `{"mejl": "x"}`, "details.mejl"},
		{"swedish address", `{"adress": "x"}`, "details.adress"},
		{"swedish street address", `{"gatuadress": "x"}`, "details.gatuadress"},
		{"personnummer key", `{"personnummer": "x"}`, "details.personnummer"},
		{"deep in objects", `{"a": {"b": {"c": {"d": {"e": {"telefon": "x"}}}}}}`, "details.a.b.c.d.e.telefon"},
		{"inside an array", `{"rooms": [{"kind": "kök"}, {"kontaktperson": "x"}]}`, "details.rooms[1].kontaktperson"},
		{"array of arrays", `{"x": [[{"email": "x"}]]}`, "details.x[0][0].email"},
		{"e-mail value", `{"note": "mejla greta.gasfot@example.se"}`, "details.note"},
		{"e-mail value in array", `{"notes": ["ok", "a@b.se"]}`, "details.notes[1]"},
		{"mobile value", `{"note": "ring 070-123 45 67"}`, "details.note"},
		{"mobile value compact", `{"x": "0701234567"}`, "details.x"},
		{"international phone", `{"x": "+46 70 123 45 67"}`, "details.x"},
		{"international phone with trunk zero", `{"x": "+46 (0)8 123 456 78"}`, "details.x"},
		{"landline", `{"x": "08-12 34 56"}`, "details.x"},
		{"0046 phone", `{"x": "0046701234567"}`, "details.x"},
		{"personnummer value", `{"x": "19800101-0001"}`, "details.x"},
		{"short personnummer value", `{"x": "800101-0001"}`, "details.x"},
		{"personnummer without separator", `{"x": "8001010001"}`, "details.x"},
		{"co-ordination number", `{"x": "800161-0008"}`, "details.x"},
		{"personnummer as a number", `{"x": 198001010001}`, "details.x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := checkDetails(detailsOf(t, tc.raw))
			var e *bokat.Error
			if !errors.As(err, &e) || e.Code != bokat.CodeValidationFailed {
				t.Fatalf("checkDetails(%s) = %v, want validation_failed", tc.raw, err)
			}
			if len(e.Issues) != 1 || !strings.HasPrefix(e.Issues[0], tc.issue+": ") {
				t.Errorf("issues = %q, want one naming %s", e.Issues, tc.issue)
			}
			for _, secret := range []string{"Greta", "Gåsfot", "greta.gasfot", "a@b.se", "123 45 67", "0701234567", "0001", "0008"} {
				if strings.Contains(strings.Join(e.Issues, " "), secret) {
					t.Errorf("an issue echoes %q: %q", secret, e.Issues)
				}
			}
		})
	}
}

func TestCheckDetailsKeepsOrdinaryDetails(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		`{"window_count": 12, "floor": 3, "area_m2": 120, "home_size_sqm": 58, "boxes": 20}`,
		`{"postcode": "113 45", "destination_postcode": "11451", "zip": 11345}`,
		`{"elevator_origin": true, "elevator_destination": false, "parking": null}`,
		`{"year_built": 1978, "rooms": ["kök", "badrum"], "levels": [1, 2]}`,
		`{"note": "Blandaren är en Grohe Eurosmart, 2 st, ca 15 år gammal."}`,
		`{"when": "2026-11-24 08:00-12:00", "date": "2026-03-02", "time": "08:00"}`,
		`{"product_name": "FMM 1000", "article_number": "1234567", "price_hint": 4995}`,
		`{"description": "Tvättmaskin i källaren, port 0, plan -1"}`,
		`{"budget": 15000, "reference": "Uppdrag 42", "contact_preference": "sms"}`,
		`{"serial": "8001010007"}`, // fails the Luhn check
	} {
		if err := checkDetails(detailsOf(t, raw)); err != nil {
			t.Errorf("checkDetails(%s) = %v, want nil", raw, err)
		}
	}
}

func TestCheckDetailsReportsEveryFieldOnce(t *testing.T) {
	t.Parallel()
	err := checkDetails(detailsOf(t, `{"namn": "x", "telefon": "0701234567", "rum": [{"epost": "a@b.se"}, "070 123 45 67"]}`))
	var e *bokat.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v", err)
	}
	var fields []string
	for _, i := range e.Issues {
		f, _, _ := strings.Cut(i, ": ")
		fields = append(fields, f)
	}
	want := []string{"details.namn", "details.rum[0].epost", "details.rum[1]", "details.telefon"}
	if !slices.Equal(fields, want) {
		t.Errorf("fields = %q, want %q", fields, want)
	}
}
