package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-ical"

	"bokat"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// badUTF8 stands for a raw invalid UTF-8 byte in a test body: JSON encoders
// cannot write one, so it is substituted after encoding.
const badUTF8 = "@@BAD-UTF8@@"

// rawBody encodes v as JSON and puts a raw 0xFF byte where badUTF8 was.
func rawBody(t testing.TB, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(strings.ReplaceAll(string(raw), badUTF8, "\xff"))
}

// storedRows counts the rows every write of the API adds to.
func (e *testEnv) storedRows(t testing.TB) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, table := range []string{"bookings", "idempotency_keys", "follow_up_requests", "webhook_endpoints", "outbox_events", "notification_jobs", "calendar_entries"} {
		out[table] = e.count(t, "SELECT COUNT(*) FROM "+table)
	}
	return out
}

func hasIssue(r response, want string) bool {
	issues, _ := r.JSON["issues"].([]any)
	for _, i := range issues {
		if s, _ := i.(string); strings.HasPrefix(s, want+": ") {
			return true
		}
	}
	return false
}

// TestBadTextIsRefusedAtTheEdge sends NUL, control characters, line breaks
// in one-line fields and invalid UTF-8 through every body, path and stored
// header of the API: each is a 400 validation_failed naming the field, on
// both engines, and nothing reaches the store.
func TestBadTextIsRefusedAtTheEdge(t *testing.T) {
	forEachWebhookEngine(t, false, func(t *testing.T, e *webhookEnv) {
		e.withDemoSupply()
		opts := e.options(t, faucetSearch())
		bkg := e.confirm(t, opts[0], "text-setup")
		bookingPath := "/v1/bookings/" + bkg["id"].(string)
		option := opts[1]

		type vector struct {
			name   string
			method string
			path   string
			body   any
			header map[string]string
			issue  string // the field the issue must name
			legacy bool
			// noContract: the path is not in the contract (served beside it).
			noContract bool
		}
		with := func(base map[string]any, path string, v any) map[string]any {
			raw, _ := json.Marshal(base) // a deep copy
			var m map[string]any
			_ = json.Unmarshal(raw, &m)
			return set(m, path, v)
		}
		auth := bearer(e.token)
		search, confirm, followUp := faucetSearch(), confirmBody(option, "text-confirm"), validRequestBody()
		followUp["idempotency_key"] = "text-request"
		cancel, reschedule := cancelBody("text-cancel"), rescheduleBody(option, "text-reschedule")
		hook := map[string]any{"url": "https://hooks.partner.se/bokat", "event_types": []string{"booking.confirmed"}}
		vectors := []vector{
			{name: "search description NUL", method: "POST", path: "/v1/booking-options", body: with(search, "description", "Byta\x00blandare"), issue: "description"},
			{name: "search postcode NUL", method: "POST", path: "/v1/booking-options", body: with(search, "location.postcode", "113\x0045"), issue: "location.postcode"},
			{name: "search time text line break", method: "POST", path: "/v1/booking-options", body: with(search, "timing.preferred_time_text", "nästa\nvecka"), issue: "timing.preferred_time_text"},
			{name: "search description raw 0xFF", method: "POST", path: "/v1/booking-options", body: rawBody(t, with(search, "description", "Byta "+badUTF8)), issue: "description"},
			{name: "search details member name", method: "POST", path: "/v1/booking-options", body: with(search, "details", map[string]any{"a\x00b": 1}), issue: "details.(member name)"},
			{name: "search details in array", method: "POST", path: "/v1/booking-options", body: with(search, "details", map[string]any{"rooms": []any{"kök", map[string]any{"note": "x\x00"}}}), issue: "details.rooms[1].note"},
			{name: "search details bare CR", method: "POST", path: "/v1/booking-options", body: with(search, "details", map[string]any{"note": "a\rb"}), issue: "details.note"},
			{name: "legacy search NUL", method: "POST", path: "/api/public/booking-options", body: with(search, "description", "\x00"), issue: "description", legacy: true},

			{name: "confirm customer name NUL", method: "POST", path: "/v1/bookings", body: with(confirm, "customer.name", "Greta\x00"), header: auth, issue: "customer.name"},
			{name: "confirm customer phone C1", method: "POST", path: "/v1/bookings", body: with(confirm, "customer.phone", "+4670\u0085123"), header: auth, issue: "customer.phone"},
			{name: "confirm customer email NUL", method: "POST", path: "/v1/bookings", body: with(confirm, "customer.email", "greta\x00@example.se"), header: auth, issue: "customer.email"},
			{name: "confirm customer name raw 0xFF", method: "POST", path: "/v1/bookings", body: rawBody(t, with(confirm, "customer.name", "Greta "+badUTF8)), header: auth, issue: "customer.name"},
			{name: "confirm address CR LF", method: "POST", path: "/v1/bookings", body: with(confirm, "service_location.address", "Drottninggatan 1\r\nATTENDEE:x"), header: auth, issue: "service_location.address"},
			{name: "confirm consent statement NUL", method: "POST", path: "/v1/bookings", body: with(confirm, "user_consent_statement", "ja\x00"), header: auth, issue: "user_consent_statement"},
			{name: "confirm consent source NUL", method: "POST", path: "/v1/bookings", body: with(confirm, "consent_source", "chat\x00"), header: auth, issue: "consent_source"},
			{name: "confirm source NUL", method: "POST", path: "/v1/bookings", body: with(confirm, "source", "app\x00"), header: auth, issue: "source"},
			{name: "confirm external reference DEL", method: "POST", path: "/v1/bookings", body: with(confirm, "external_reference", "ref\x7f"), header: auth, issue: "external_reference"},
			{name: "confirm idempotency key NUL", method: "POST", path: "/v1/bookings", body: with(confirm, "idempotency_key", "k\x00"), header: auth, issue: "idempotency_key"},
			{name: "confirm terms version NUL", method: "POST", path: "/v1/bookings", body: with(confirm, "booking_terms_version", "v\x00"), header: auth, issue: "booking_terms_version"},
			{name: "legacy confirm NUL", method: "POST", path: "/api/public/bookings", body: with(confirm, "customer.name", "\x00"), header: auth, issue: "customer.name", legacy: true},

			{name: "cancel notes NUL", method: "POST", path: bookingPath + "/cancel", body: with(cancel, "notes", "\x00"), header: auth, issue: "notes"},
			{name: "cancel notes bare CR", method: "POST", path: bookingPath + "/cancel", body: with(cancel, "notes", "a\rb"), header: auth, issue: "notes"},
			{name: "cancel key raw 0xFF", method: "POST", path: bookingPath + "/cancel", body: rawBody(t, with(cancel, "idempotency_key", badUTF8)), header: auth, issue: "idempotency_key"},
			{name: "reschedule address NUL", method: "POST", path: bookingPath + "/reschedule", body: with(reschedule, "service_location.address", "\x00"), header: auth, issue: "service_location.address"},
			{name: "reschedule key NUL", method: "POST", path: bookingPath + "/reschedule", body: with(reschedule, "idempotency_key", "\x00"), header: auth, issue: "idempotency_key"},

			{name: "request description NUL", method: "POST", path: "/v1/requests", body: with(followUp, "description", "Det droppar\x00 från röret under diskbänken."), header: auth, issue: "description"},
			{name: "request customer name raw 0xFF", method: "POST", path: "/v1/requests", body: rawBody(t, with(followUp, "customer.name", badUTF8)), header: auth, issue: "customer.name"},
			{name: "request address NUL", method: "POST", path: "/v1/requests", body: with(followUp, "location.address", "\x00"), header: auth, issue: "location.address"},
			{name: "request key header 0xFF", method: "POST", path: "/v1/requests", body: validRequestBody(),
				header: map[string]string{"Authorization": "Bearer " + e.token, "Idempotency-Key": "key\xff"}, issue: "Idempotency-Key (header)"},
			{name: "request key header C1", method: "POST", path: "/v1/requests", body: validRequestBody(),
				header: map[string]string{"Authorization": "Bearer " + e.token, "Idempotency-Key": "key\u0085"}, issue: "Idempotency-Key (header)"},
			{name: "legacy request NUL", method: "POST", path: "/api/public/requests", body: with(followUp, "customer.phone", "\x00"), header: auth, issue: "customer.phone", legacy: true},

			{name: "webhook url NUL", method: "POST", path: "/v1/webhook-endpoints", body: with(hook, "url", "https://hooks.partner.se/\x00"), header: auth, issue: "url"},
			{name: "webhook event type NUL", method: "POST", path: "/v1/webhook-endpoints", body: with(hook, "event_types", []string{"booking.confirmed\x00"}), header: auth, issue: "event_types[0]"},

			{name: "status id NUL", method: "GET", path: "/v1/bookings/bkg_%00x", header: auth, issue: "booking_id (path)"},
			{name: "status id 0xFF", method: "GET", path: "/v1/bookings/bkg_%ff", header: auth, issue: "booking_id (path)"},
			{name: "legacy status id NUL", method: "GET", path: "/api/public/bookings/bkg_%00x", header: auth, issue: "booking_id (path)", legacy: true},
			{name: "cancel id NUL", method: "POST", path: "/v1/bookings/bkg_%00/cancel", body: cancelBody("text-cancel-2"), header: auth, issue: "booking_id (path)"},
			{name: "reschedule id 0xFF", method: "POST", path: "/v1/bookings/bkg_%ff/reschedule", body: rescheduleBody(option, "text-resch-2"), header: auth, issue: "booking_id (path)"},
			{name: "delete endpoint id NUL", method: "DELETE", path: "/v1/webhook-endpoints/%00", header: auth, issue: "endpoint_id (path)"},
			{name: "replay id 0xFF", method: "POST", path: "/v1/webhook-events/%ff/replay", header: auth, issue: "outbox_id (path)"},
			{name: "terms id NUL", method: "GET", path: "/terms/%00", issue: "service_id (path)", noContract: true},
			{name: "problem code NUL", method: "GET", path: "/problems/%00", issue: "code (path)", noContract: true},
			{name: "calendar provider 0xFF", method: "GET", path: "/calendar/%ff/x.ics", issue: "provider_id (path)", noContract: true},
			{name: "calendar feed C1", method: "GET", path: "/calendar/prv_1/%C2%85.ics", issue: "feed (path)", noContract: true},
		}
		before := e.storedRows(t)
		for _, v := range vectors {
			t.Run(v.name, func(t *testing.T) {
				r := e.do(request{Method: v.method, Path: v.path, Body: v.body, Header: v.header, NoValidate: v.noContract})
				if r.Status != 400 {
					t.Fatalf("status = %d, want 400; body %s", r.Status, r.Body)
				}
				if v.legacy {
					if !strings.Contains(string(r.Body), string(bokat.CodeValidationFailed)) {
						t.Errorf("legacy body does not carry %s: %s", bokat.CodeValidationFailed, r.Body)
					}
				} else {
					if r.JSON["code"] != string(bokat.CodeValidationFailed) {
						t.Errorf("code = %v, want %s; body %s", r.JSON["code"], bokat.CodeValidationFailed, r.Body)
					}
				}
				if !hasIssue(r, v.issue) && !strings.Contains(string(r.Body), v.issue+": ") {
					t.Errorf("no issue names %q: %s", v.issue, r.Body)
				}
				if !utf8.Valid(r.Body) || strings.ContainsAny(string(r.Body), "\x00\x7f\u0085") ||
					strings.Contains(string(r.Body), `\u0000`) || strings.Contains(string(r.Body), `\ufffd`) || strings.Contains(string(r.Body), "\ufffd") {
					t.Errorf("the answer echoes the refused text: %q", r.Body)
				}
			})
		}
		if after := e.storedRows(t); !mapsEqual(before, after) {
			t.Errorf("refused requests wrote to the store: before %v, after %v", before, after)
		}
		if logs := e.logs.String(); strings.Contains(logs, `"level":"ERROR"`) {
			t.Errorf("refused text was logged as an error:\n%s", logs)
		}
	})
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestFreeTextKeepsLineBreaks: tab, LF and CR LF are allowed where text
// may span lines (descriptions, notes, details), and stored as sent.
func TestFreeTextKeepsLineBreaks(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		body := faucetSearch()
		body["description"] = "Byta köksblandare.\r\nNy blandare finns\tpå plats.\n"
		body["details"] = map[string]any{"note": "rad ett\nrad två"}
		if r := e.do(request{Method: "POST", Path: "/v1/booking-options", Body: body}); r.Status != 200 {
			t.Fatalf("search with multi-line free text: %d %s", r.Status, r.Body)
		}
		e.withDemoSupply()
		bkg := e.confirm(t, e.options(t, faucetSearch())[0], "lines-confirm")
		cancel := cancelBody("lines-cancel")
		cancel["notes"] = "Kunden ringde.\r\nNy tid bokas senare."
		if r := e.do(request{Method: "POST", Path: "/v1/bookings/" + bkg["id"].(string) + "/cancel", Body: cancel, Header: bearer(e.token)}); r.Status != 200 {
			t.Fatalf("cancel with multi-line notes: %d %s", r.Status, r.Body)
		}
	})
}

// TestBodiesMustBeUTF8: a charset other than UTF-8 is 415, whatever its
// spelling; utf-8 in any case is accepted.
func TestBodiesMustBeUTF8(t *testing.T) {
	e := sqliteEnv(t)
	for _, ct := range []string{"application/json; charset=utf-16", "application/json; charset=ISO-8859-1", "application/json;charset=latin1"} {
		r := e.do(request{Method: "POST", Path: "/v1/booking-options", Body: faucetSearch(), ContentType: ct})
		checkProblem(t, r, 415, bokat.CodeUnsupportedMediaType, "/v1/booking-options")
	}
	for _, ct := range []string{"application/json; charset=utf-8", "application/json; charset=UTF-8", "application/json"} {
		if r := e.do(request{Method: "POST", Path: "/v1/booking-options", Body: faucetSearch(), ContentType: ct}); r.Status != 200 {
			t.Errorf("%s: %d %s", ct, r.Status, r.Body)
		}
	}
}

// TestDecodeIssuesSpeakJSON: values the schema lets through but the decoder
// cannot hold are explained in JSON terms, never Go types.
func TestDecodeIssuesSpeakJSON(t *testing.T) {
	e := sqliteEnv(t)
	goTypes := []string{"int", "float64", "int64", "map[", "interface", "struct"}
	cases := []struct {
		name, path, raw, issue string
		header                 map[string]string
	}{
		{"number beyond a double in details", "/v1/booking-options", `"details": {"area_m2": 1e400}`, "details: must be a number within ±1.7976931348623157e308", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var base map[string]any
			if c.path == "/v1/requests" {
				base = validRequestBody()
			} else {
				base = faucetSearch()
			}
			raw := mustJSON(t, base)
			body := string(raw[:len(raw)-1]) + "," + c.raw + "}"
			r := e.do(request{Method: "POST", Path: c.path, Body: body, Header: c.header})
			if r.Status != 400 || r.JSON["code"] != string(bokat.CodeValidationFailed) {
				t.Fatalf("got %d %v, want 400 %s: %s", r.Status, r.JSON["code"], bokat.CodeValidationFailed, r.Body)
			}
			issues, _ := r.JSON["issues"].([]any)
			var got []string
			for _, i := range issues {
				got = append(got, i.(string))
			}
			if !slices.Contains(got, c.issue) {
				t.Errorf("issues = %q, want %q", got, c.issue)
			}
			for _, s := range got {
				_, msg, _ := strings.Cut(s, ": ")
				for _, g := range goTypes {
					if strings.Contains(msg, g+" ") || strings.HasSuffix(msg, g) {
						t.Errorf("issue %q names a Go type", s)
					}
				}
			}
		})
	}
}

// TestTermsAcceptedAtIsChecked: a confirmation or reschedule whose terms
// were "accepted" long before the option existed, or in the future, is 400
// validation_failed and writes nothing.
func TestTermsAcceptedAtIsChecked(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.withDemoSupply()
		opts := e.options(t, faucetSearch())
		bkg := e.confirm(t, opts[0], "terms-setup")
		before := e.storedRows(t)
		for _, at := range []string{"1970-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z",
			time.Now().Add(-time.Hour).Format(time.RFC3339), time.Now().Add(time.Hour).Format(time.RFC3339)} {
			body := confirmBody(opts[1], "terms-"+at)
			body["booking_terms_accepted_at"] = at
			r := e.do(request{Method: "POST", Path: "/v1/bookings", Body: body, Header: bearer(e.token)})
			checkProblem(t, r, 400, bokat.CodeValidationFailed, "/v1/bookings")
			if !hasIssue(r, "booking_terms_accepted_at") {
				t.Errorf("%s: no issue names booking_terms_accepted_at: %s", at, r.Body)
			}
			body = rescheduleBody(opts[1], "terms-r-"+at)
			body["booking_terms_accepted_at"] = at
			path := "/v1/bookings/" + bkg["id"].(string) + "/reschedule"
			r = e.do(request{Method: "POST", Path: path, Body: body, Header: bearer(e.token)})
			checkProblem(t, r, 400, bokat.CodeValidationFailed, path)
		}
		if after := e.storedRows(t); !mapsEqual(before, after) {
			t.Errorf("refused confirmations wrote: before %v, after %v", before, after)
		}
	})
}

// TestCustomerEmailMustBeAMailHost: IP literals and dotless domains are
// refused on confirmation and follow-up requests, and nothing is written.
func TestCustomerEmailMustBeAMailHost(t *testing.T) {
	e := sqliteEnv(t)
	e.withDemoSupply()
	option := e.options(t, faucetSearch())[0]
	before := e.storedRows(t)
	for _, addr := range []string{"eve@[127.0.0.1]", "eve@127.0.0.1", "eve@localhost"} {
		body := confirmBody(option, "mail-"+addr)
		set(body, "customer.email", addr)
		r := e.do(request{Method: "POST", Path: "/v1/bookings", Body: body, Header: bearer(e.token)})
		checkProblem(t, r, 400, bokat.CodeValidationFailed, "/v1/bookings")
		if !hasIssue(r, "customer.email") {
			t.Errorf("%s: no issue names customer.email: %s", addr, r.Body)
		}
		req := validRequestBody()
		set(req, "customer.email", addr)
		r = e.do(request{Method: "POST", Path: "/v1/requests", Body: req, Header: bearer(e.token)})
		if r.Status != 400 || r.JSON["code"] != string(bokat.CodeValidationFailed) || !hasIssue(r, "customer.email") {
			t.Errorf("request with %s: %d %s", addr, r.Status, r.Body)
		}
	}
	if after := e.storedRows(t); !mapsEqual(before, after) {
		t.Errorf("refused addresses were written: before %v, after %v", before, after)
	}
}

// TestCountableQuantitiesMustBeWhole: for every catalog service counted in
// whole units, a search with a fraction is 400 validation_failed naming the
// details key as an integer; measured units (hours) keep their fractions.
func TestCountableQuantitiesMustBeWhole(t *testing.T) {
	e := sqliteEnv(t)
	cat, err := loadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range cat.Verticals {
		for _, jt := range v.JobTypes {
			if jt.Seed == nil {
				continue
			}
			svc, ok := cat.Service(jt.Seed.ServiceID)
			if !ok || !svc.PricingModel.PerUnit() {
				continue
			}
			body := faucetSearch()
			body["vertical_id"], body["job_type_id"] = v.ID, jt.ID
			body["details"] = map[string]any{svc.QuantityDetail: svc.MinQuantity + 0.5}
			r := e.do(request{Method: "POST", Path: "/v1/booking-options", Body: body})
			if !svc.PricingModel.Countable() {
				if r.Status == 400 {
					t.Errorf("%s: a fraction of %s is refused: %s", jt.ID, svc.Unit, r.Body)
				}
				continue
			}
			n++
			checkProblem(t, r, 400, bokat.CodeValidationFailed, "/v1/booking-options")
			want := "details." + svc.QuantityDetail + ": must be an integer"
			issues, _ := r.JSON["issues"].([]any)
			if !slices.ContainsFunc(issues, func(i any) bool { s, _ := i.(string); return strings.HasPrefix(s, want) }) {
				t.Errorf("%s: issues %v, want one starting %q", jt.ID, issues, want)
			}
		}
	}
	if n == 0 {
		t.Fatal("the catalog has no countable service")
	}
}

// TestIntegersMayBeWrittenAsJSONSchemaAllows: 5000.0 and 5e3 are integers
// in JSON Schema, so the contract admits them for budget_sek; they are
// stored as 5000, like 5000.
func TestIntegersMayBeWrittenAsJSONSchemaAllows(t *testing.T) {
	e := sqliteEnv(t)
	for i, budget := range []string{"5000.0", "5e3", "5000"} {
		body := validRequestBody()
		body["idempotency_key"] = fmt.Sprintf("budget-%d", i)
		raw := mustJSON(t, body)
		r := e.do(request{Method: "POST", Path: "/v1/requests", Header: bearer(e.token),
			Body: string(raw[:len(raw)-1]) + `,"budget_sek":` + budget + "}"})
		if r.Status != 201 {
			t.Fatalf("budget_sek %s: %d %s", budget, r.Status, r.Body)
		}
		id := r.JSON["request"].(map[string]any)["id"].(string)
		if n := e.count(t, "SELECT COUNT(*) FROM follow_up_requests WHERE id = $1 AND budget_sek = 5000", id); n != 1 {
			t.Errorf("budget_sek %s was not stored as 5000", budget)
		}
	}
}

// TestFeedCleansStoredText: a provider name holding line breaks (supply
// data is the operator's; the edge check does not see it) cannot start a
// property of the provider's calendar feed.
func TestFeedCleansStoredText(t *testing.T) {
	e := sqliteEnv(t)
	e.withDemoSupply()
	opts := e.options(t, faucetSearch())
	provider := optionProvider(opts[0])
	e.confirm(t, opts[0], "feed-text")
	err := e.db.InTx(context.Background(), func(tx *sqlstore.Tx) error {
		_, err := tx.Q().ExecContext(context.Background(), `UPDATE providers SET name = $1 WHERE id = $2`,
			"Rörkraft\r\nX-INJECTED:1\rAB; Söder, \\", provider)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	f := e.do(request{Method: "GET", Path: feedPath(e, provider), NoValidate: true})
	if f.Status != 200 {
		t.Fatalf("feed: %d %s", f.Status, f.Body)
	}
	cal, err := ical.NewDecoder(bytes.NewReader(f.Body)).Decode()
	if err != nil {
		t.Fatalf("the feed does not parse: %v\n%s", err, f.Body)
	}
	if p := cal.Props.Get("X-INJECTED"); p != nil {
		t.Errorf("a stored line break started a property:\n%s", f.Body)
	}
	name, err := cal.Props.Text("X-WR-CALNAME")
	if err != nil {
		t.Fatal(err)
	}
	if want := "Bokat – Rörkraft X-INJECTED:1 AB; Söder, \\"; name != want {
		t.Errorf("X-WR-CALNAME = %q, want %q", name, want)
	}
}

// TestUnknownPathsAreNotEchoedRaw: the Problem of a path no operation
// serves names it escaped, so refused bytes do not come back.
func TestUnknownPathsAreNotEchoedRaw(t *testing.T) {
	e := sqliteEnv(t)
	r := e.do(request{Method: "GET", Path: "/v1/nothing%00%ff", NoValidate: true})
	checkProblem(t, r, 404, bokat.CodeNotFound, "/v1/nothing%00%ff")
	if strings.Contains(string(r.Body), `\u0000`) || !utf8.Valid(r.Body) || strings.Contains(string(r.Body), "\ufffd") {
		t.Errorf("the answer echoes the raw path: %s", r.Body)
	}
}

// TestDevelopmentWebhookBodiesAreCheckedToo: the development mode that
// rewrites http:// registrations does not launder invalid UTF-8.
func TestDevelopmentWebhookBodiesAreCheckedToo(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newWebhookEnv(t, db, true)
		body := rawBody(t, map[string]any{"url": "http://127.0.0.1:9/" + badUTF8, "event_types": []string{"booking.confirmed"}})
		r := e.do(request{Method: "POST", Path: "/v1/webhook-endpoints", Body: body, Header: bearer(e.token)})
		checkProblem(t, r, 400, bokat.CodeValidationFailed, "/v1/webhook-endpoints")
		if !hasIssue(r, "url") {
			t.Errorf("no issue names url: %s", r.Body)
		}
		if n := e.count(t, "SELECT COUNT(*) FROM webhook_endpoints"); n != 0 {
			t.Errorf("%d endpoints stored", n)
		}
	})
}
