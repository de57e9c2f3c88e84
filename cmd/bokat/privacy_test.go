package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"bokat/internal/catalog"
	"bokat/internal/clocktest"
	"bokat/internal/notify/notifytest"
	"bokat/internal/operator"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/supply"
)

// TestContactDataIsSealedAtRest confirms a booking and creates a follow-up
// request with distinctive contact data through the real program, sees the
// customer and provider messages carry it (so the server opens what it
// sealed) and status still answers, then looks for every piece of it in
// the raw database: the SQLite database and WAL files, or a pg_dump of the
// PostgreSQL database. None may be there.
func TestContactDataIsSealedAtRest(t *testing.T) {
	t.Parallel()
	for _, engine := range sqlstoretest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			smtpServer := notifytest.NewServer(t, notifytest.Options{})
			dir := t.TempDir()
			dbURL := sqlstoretest.URL(t, engine)
			if engine == sqlstore.SQLite {
				dbURL = "sqlite:" + filepath.Join(dir, "bokat.db")
			}
			baseURL, token, logs, stop := startServe(t, []string{"--demo", "--database", dbURL,
				"--smtp-url", "smtp://" + smtpServer.Addr + "?starttls=none", "--mail-from", "Bokat <bokning@mail.bokat.example>"}, nil)
			f := &e2eFlow{t: t, baseURL: baseURL, token: token, smtp: smtpServer, client: &http.Client{Timeout: time.Minute}}

			const (
				name      = "Quintessa Zwyrblewska-Okvist"
				phone     = "+46 70 999 41 37"
				email     = "quintessa.zwk.4137@kund.example"
				address   = "Zinkensdamms bakgard 19C"
				statement = "Kunden QZ-samtycke-7781 godkande bokningen"
				reqFirst  = "Ottiliana"
				reqLast   = "Brzeczyszczykiewicz"
				reqPhone  = "073-888 26 54"
				reqEmail  = "ottiliana.brz.2654@kund.example"
				reqAddr   = "Yxsmedsgrand 23B"
				reqStmt   = "Samtycke OB-samtycke-5512 att dela uppgifterna"
			)
			o := f.option("sv-SE", "prv_sthlm_vvs_1")
			body := e2eCustomer{name, phone, email, address}.confirm(o, "privacy-confirm")
			body["user_consent_statement"] = statement
			confirmed := f.call("POST", "/v1/bookings", body)
			id, bookingRequestID := confirmed["booking"].(map[string]any)["id"].(string), confirmed["request_id"].(string)
			toCustomer := f.message(email, id, "Bokningsbekräftelse: ")
			checkText(t, "confirmation", toCustomer, []string{"Hej " + name, address}, nil)
			f.statuses(id, "sent", "sent")

			res := f.call("POST", "/v1/requests", map[string]any{
				"vertical_id": "vvs", "job_type_id": "install_faucet",
				"description":            "Kranen droppar; fråga efter " + reqFirst + " i porten.",
				"user_consent_confirmed": true, "user_consent_statement": reqStmt,
				"customer": map[string]any{"first_name": reqFirst, "last_name": reqLast, "phone": reqPhone, "email": reqEmail},
				"location": map[string]any{"address": reqAddr, "postcode": "113 45"},
				"timing":   map[string]any{"preferred_time_text": "nästa vecka"},
			})
			requestID := res["request"].(map[string]any)["id"].(string)
			f.requestMessage(requestID, reqPhone)

			pii := []string{name, "Quintessa", "Zwyrblewska", phone, strings.ReplaceAll(phone, " ", ""), "709994137",
				email, "quintessa.zwk", address, "Zinkensdamm", "QZ-samtycke-7781",
				reqFirst, reqLast, reqPhone, "0738882654", reqEmail, "ottiliana.brz", reqAddr, "Yxsmedsgrand", "OB-samtycke-5512"}
			var raw []byte
			switch engine {
			case sqlstore.SQLite:
				for _, suffix := range []string{"", "-wal"} {
					b, err := os.ReadFile(filepath.Join(dir, "bokat.db"+suffix))
					if err != nil {
						t.Fatal(err)
					}
					raw = append(raw, b...)
				}
				if len(raw) < 4096 {
					t.Fatalf("the database files hold %d bytes; the check would prove nothing", len(raw))
				}
			case sqlstore.Postgres:
				out, err := exec.Command("pg_dump", "--dbname", dbURL).Output()
				if err != nil {
					t.Fatalf("pg_dump: %v", err)
				}
				if !bytes.Contains(out, []byte(id)) || !bytes.Contains(out, []byte(requestID)) {
					t.Fatalf("the dump lacks the booking or request id; the check would prove nothing")
				}
				raw = out
			}
			for _, s := range pii {
				if bytes.Contains(bytes.ToLower(raw), bytes.ToLower([]byte(s))) {
					t.Errorf("the raw database holds %q", s)
				}
			}
			if status := f.call("GET", "/v1/bookings/"+id, nil); status["found"] != true {
				t.Errorf("status after sealing: %v", status)
			}

			// The export finds the person by the blind index (any spelling of
			// the address or number) and returns exactly what was given.
			doc, exportLog := privacyExport(t, dbURL, "--email", "  "+strings.ToUpper(email))
			if len(doc.Bookings) != 1 || len(doc.Requests) != 0 {
				t.Fatalf("export by e-mail: %d bookings, %d requests; want the one booking", len(doc.Bookings), len(doc.Requests))
			}
			b := doc.Bookings[0]
			if b.ID != id || b.Customer != (exportCustomerWire{Name: name, Phone: phone, Email: email}) ||
				b.ServiceAddress != address || b.Consent.Statement != statement || b.Postcode != "11345" ||
				b.Consent.Method != "caller_declared" {
				t.Errorf("exported booking %+v", b)
			}
			doc, phoneLog := privacyExport(t, dbURL, "--phone", "+46 73 888 26 54")
			if len(doc.Bookings) != 0 || len(doc.Requests) != 1 || doc.Requests[0].ID != requestID {
				t.Fatalf("export by phone: %+v", doc)
			}
			r := doc.Requests[0]
			var cust map[string]string
			if err := json.Unmarshal(r.Customer, &cust); err != nil || cust["first_name"] != reqFirst || cust["last_name"] != reqLast ||
				cust["phone"] != reqPhone || cust["email"] != reqEmail || !strings.Contains(string(r.Location), reqAddr) ||
				r.Consent.Statement != reqStmt || !strings.Contains(r.Description, reqFirst) {
				t.Errorf("exported request %+v (%s, %s)", r, r.Customer, r.Location)
			}
			for _, s := range pii {
				if strings.Contains(exportLog+phoneLog, s) {
					t.Errorf("the export's log holds %q", s)
				}
			}
			if !strings.Contains(exportLog, `"email_hash":"`) || !strings.Contains(exportLog, `"bookings":1`) {
				t.Errorf("the export's log does not record it: %s", exportLog)
			}
			// Erasure refuses while the booking is still to come, then, with
			// --cancel-future, cancels it (event, provider message) and erases
			// everything; status by booking id and request id still answers.
			if _, errOut, err := privacyErase(t, dbURL, "--email", email); err == nil ||
				!strings.Contains(err.Error(), id) || !strings.Contains(err.Error(), "--cancel-future") {
				t.Fatalf("erase with a booking to come: %v (%s)", err, errOut)
			}
			if doc, _ := privacyExport(t, dbURL, "--email", email); len(doc.Bookings) != 1 || doc.Bookings[0].Customer.Email != email {
				t.Fatalf("a refused erasure changed the data: %+v", doc)
			}
			erased, eraseLog, err := privacyErase(t, dbURL, "--email", email, "--phone", reqPhone, "--cancel-future")
			if err != nil {
				t.Fatalf("erase --cancel-future: %v (%s)", err, eraseLog)
			}
			if !slices.Equal(erased.Bookings, []string{id}) || !slices.Equal(erased.Cancelled, []string{id}) ||
				!slices.Equal(erased.Requests, []string{requestID}) {
				t.Errorf("erased %+v, want booking %s (cancelled) and request %s", erased, id, requestID)
			}
			f.message(providerEmail(t, "prv_sthlm_vvs_1"), id, "Avbokat uppdrag: ")
			f.statuses(id, "skipped", "sent") // the customer's address is gone
			for _, ref := range []string{id, bookingRequestID} {
				res := f.call("GET", "/v1/bookings/"+ref, nil)
				if res["found"] != true || res["booking"].(map[string]any)["status"] != "cancelled" {
					t.Errorf("status of %s after erasure: %v", ref, res)
				}
			}
			if doc, _ := privacyExport(t, dbURL, "--email", email, "--phone", reqPhone); len(doc.Bookings)+len(doc.Requests) != 0 {
				t.Errorf("export after erasure: %+v", doc)
			}
			db, err := sqlstore.Open(t.Context(), dbURL)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var sealed string
			if err := db.R().QueryRowContext(t.Context(), `SELECT customer_name || customer_phone || customer_email || service_address
				|| consent_statement FROM bookings WHERE id = $1`, id).Scan(&sealed); err != nil || sealed != "" {
				t.Errorf("the erased booking still holds %d bytes of sealed contact data (%v)", len(sealed), err)
			}
			var events int
			if err := db.R().QueryRowContext(t.Context(), `SELECT COUNT(*) FROM outbox_events WHERE booking_id = $1
				AND event_type = 'booking.cancelled'`, id).Scan(&events); err != nil || events != 1 {
				t.Errorf("%d booking.cancelled events (%v), want 1", events, err)
			}
			for _, s := range pii {
				if strings.Contains(eraseLog, s) {
					t.Errorf("the erasure's log holds %q", s)
				}
			}

			if err := stop(); err != nil {
				t.Fatal(err)
			}
			for _, s := range pii {
				if strings.Contains(logs.String(), s) {
					t.Errorf("the log holds %q", s)
				}
			}
		})
	}
}

// requestMessage waits for a provider message about the follow-up request
// that carries want (the customer's contact data).
func (f *e2eFlow) requestMessage(requestID, want string) {
	f.t.Helper()
	clocktest.Wait(f.t, fmt.Sprintf("a provider message about request %s with the customer's contact data", requestID), func() bool {
		for _, r := range f.smtp.Messages() {
			m := notifytest.Parse(f.t, r.Data)
			if strings.HasPrefix(m.Subject, "Ny förfrågan: ") && strings.Contains(m.Text, requestID) && strings.Contains(m.Text, want) {
				return true
			}
		}
		return false
	})
}

func TestServeRefusesAShortRetention(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	err := run(t.Context(), []string{"serve", "--database", "sqlite:" + filepath.Join(t.TempDir(), "b.db"), "--retain-requests", "10m"},
		getenvFrom(nil), &bytes.Buffer{}, &stderr)
	if err == nil || !strings.Contains(err.Error()+stderr.String(), "retain-requests") {
		t.Errorf("serve with --retain-requests 10m: %v %s", err, stderr.String())
	}
}

// privacyExport runs `bokat privacy export` and decodes its document.
func privacyExport(t *testing.T, dbURL string, args ...string) (exportWire, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := run(t.Context(), append([]string{"privacy", "export", "--database", dbURL}, args...), getenvFrom(nil), &out, &errOut); err != nil {
		t.Fatalf("privacy export: %v\n%s", err, errOut.String())
	}
	var doc exportWire
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("privacy export printed no JSON document: %v\n%s", err, out.String())
	}
	return doc, errOut.String()
}

// privacyErase runs `bokat privacy erase` and decodes what it printed.
func privacyErase(t *testing.T, dbURL string, args ...string) (eraseWire, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(t.Context(), append([]string{"privacy", "erase", "--database", dbURL, "--mail-dir", t.TempDir()}, args...),
		getenvFrom(nil), &out, &errOut)
	var doc eraseWire
	if err == nil {
		if jerr := json.Unmarshal(out.Bytes(), &doc); jerr != nil {
			t.Fatalf("privacy erase printed no JSON document: %v\n%s", jerr, out.String())
		}
	}
	return doc, errOut.String(), err
}

// providerEmail returns the e-mail address of a demo provider.
func providerEmail(t *testing.T, id string) string {
	t.Helper()
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	providers, err := supply.Parse(supply.DemoName, supply.Demo(), cat)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range providers {
		if p.ID == id {
			return p.Email
		}
	}
	t.Fatalf("no demo provider %s", id)
	return ""
}

// TestEraseClearsTheDevelopmentMailFolder: in development serve writes
// messages as .eml files; an erasure removes the person's, and what serve
// writes afterwards (the provider's cancellation) carries none of their data.
// The erasure runs outside serve, so nothing wakes serve's notification
// worker for the cancellation: it polls every 50 ms rather than every
// second, so the test does not wait out its poll in real time.
func TestEraseClearsTheDevelopmentMailFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mailDir := filepath.Join(dir, "mail")
	dbURL := "sqlite:" + filepath.Join(dir, "bokat.db")
	baseURL, token, _, stop := startServeHooked(t, time.Now, hooks{notifyPoll: 50 * time.Millisecond},
		[]string{"--demo", "--database", dbURL, "--mail-dir", mailDir}, nil)
	defer stop()
	f := &e2eFlow{t: t, baseURL: baseURL, token: token, client: &http.Client{Timeout: time.Minute}}
	c := e2eCustomer{"Rasmine Fjällbrink", "+46 70 444 19 08", "rasmine.fj.1908@kund.example", "Krukmakargatan 3"}
	id := f.call("POST", "/v1/bookings", c.confirm(f.option("sv-SE", "prv_sthlm_vvs_1"), "mail-dir"))["booking"].(map[string]any)["id"].(string)
	f.statuses(id, "sent", "sent")
	files := func() []string {
		entries, _ := os.ReadDir(mailDir)
		var out []string
		for _, e := range entries {
			raw, err := os.ReadFile(filepath.Join(mailDir, e.Name()))
			if err == nil {
				out = append(out, string(raw))
			}
		}
		return out
	}
	if n := len(files()); n != 2 {
		t.Fatalf("%d .eml files before erasure, want the customer's and the provider's", n)
	}
	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"privacy", "erase", "--database", dbURL, "--mail-dir", mailDir, "--email", c.email, "--cancel-future"},
		getenvFrom(nil), &out, &errOut); err != nil {
		t.Fatalf("erase: %v %s", err, errOut.String())
	}
	var erased eraseWire
	if err := json.Unmarshal(out.Bytes(), &erased); err != nil || erased.MailFiles != 2 {
		t.Errorf("erase printed %s (%v); want 2 removed mail files", out.String(), err)
	}
	f.statuses(id, "skipped", "sent") // serve has written the provider's cancellation by now
	left := files()
	if len(left) != 1 {
		t.Errorf("%d .eml files after erasure, want the provider's cancellation only", len(left))
	}
	for _, raw := range left {
		for _, s := range append(c.pii(), "Rasmine", "rasmine") {
			if strings.Contains(raw, s) {
				t.Errorf("a message written after the erasure holds %q", s)
			}
		}
	}
}

// TestRetentionClearsTheDevelopmentMailFolder: in development serve writes
// messages as .eml files; the retention job removes those about the
// bookings and requests whose contact data it erases, and only those.
func TestRetentionClearsTheDevelopmentMailFolder(t *testing.T) {
	t.Parallel()
	for _, engine := range sqlstoretest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			mailDir := filepath.Join(dir, "mail")
			dbURL := sqlstoretest.URL(t, engine)
			if engine == sqlstore.SQLite {
				dbURL = "sqlite:" + filepath.Join(dir, "bokat.db")
			}
			baseURL, token, _, stop := startServe(t, []string{"--demo", "--database", dbURL, "--mail-dir", mailDir}, nil)
			f := &e2eFlow{t: t, baseURL: baseURL, token: token, client: &http.Client{Timeout: time.Minute}}
			gone := e2eCustomer{"Wilhelmina Oxenstierna", "+46 70 555 31 17", "wilhelmina.ox.3117@kund.example", "Lusasgrand 7"}
			kept := e2eCustomer{"Torbjorn Kvarnstrom", "+46 70 666 42 28", "torbjorn.kv.4228@kund.example", "Hornsgatan 88"}
			first := f.option("sv-SE", "prv_sthlm_vvs_1")
			cancelled := f.call("POST", "/v1/bookings", gone.confirm(first, "retention-gone"))["booking"].(map[string]any)["id"].(string)
			f.statuses(cancelled, "sent", "sent")
			f.call("POST", "/v1/bookings/"+cancelled+"/cancel", map[string]any{
				"user_confirmation_confirmed": true, "reason": "timing_no_longer_works", "idempotency_key": "retention-cancel"})
			second := f.option("sv-SE", "prv_sthlm_vvs_1", first["slot"].(map[string]any)["start_at"].(string))
			confirmed := f.call("POST", "/v1/bookings", kept.confirm(second, "retention-kept"))["booking"].(map[string]any)["id"].(string)
			request := f.call("POST", "/v1/requests", map[string]any{
				"vertical_id": "vvs", "job_type_id": "install_faucet", "description": "Kranen droppar.",
				"user_consent_confirmed": true, "user_consent_statement": "Ja, dela mina uppgifter",
				"customer": map[string]any{"first_name": "Ingegerd", "last_name": "Svartsjo", "phone": "073-777 53 39",
					"email": "ingegerd.sv.5339@kund.example"},
				"location": map[string]any{"address": "Sankt Paulsgatan 5", "postcode": "113 45"},
				"timing":   map[string]any{"preferred_time_text": "nästa vecka"},
			})["request"].(map[string]any)["id"].(string)

			// naming returns how many .eml files name each id.
			naming := func() map[string]int {
				out := map[string]int{}
				entries, _ := os.ReadDir(mailDir)
				for _, e := range entries {
					raw, err := os.ReadFile(filepath.Join(mailDir, e.Name()))
					if err != nil || !strings.HasSuffix(e.Name(), ".eml") {
						continue
					}
					for _, id := range []string{cancelled, confirmed, request} {
						if strings.Contains(string(raw), id) {
							out[id]++
						}
					}
				}
				return out
			}
			clocktest.Wait(t, fmt.Sprintf("4 messages about %s, 2 about %s, 1 about %s in the mail folder", cancelled, confirmed, request), func() bool {
				n := naming()
				return n[cancelled] >= 4 && n[confirmed] >= 2 && n[request] >= 1
			})
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			before := naming()

			// Two hours on, with periods of one hour: the cancelled booking and
			// the request expired; the confirmed booking's slot is still to come.
			db, err := openStore(t.Context(), commonConfig{Database: dbURL})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var logs bytes.Buffer
			log := slog.New(slog.NewJSONHandler(&logs, nil))
			later := func() time.Time { return time.Now().Add(2 * time.Hour) }
			eraseExpired(t.Context(), db, log, later, retentionConfig{RetainBookings: time.Hour, RetainRequests: time.Hour}, mailDir)

			after := naming()
			if after[cancelled] != 0 || after[request] != 0 || after[confirmed] != before[confirmed] {
				t.Errorf("messages naming each id: before %v, after %v; want those of %s and %s gone, %s's kept",
					before, after, cancelled, request, confirmed)
			}
			entries, _ := os.ReadDir(mailDir)
			for _, e := range entries {
				raw, err := os.ReadFile(filepath.Join(mailDir, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range append(gone.pii(), "Ingegerd", "Svartsjo", "ingegerd.sv", "Sankt Paulsgatan") {
					if strings.Contains(string(raw), s) {
						t.Errorf("%s still holds %q", e.Name(), s)
					}
				}
			}
			if !strings.Contains(logs.String(), `"removed_mail_files":`+strconv.Itoa(before[cancelled]+before[request])) {
				t.Errorf("retention log %s; want the count of removed mail files", logs.String())
			}
		})
	}
}

// TestCorrectOnRequest corrects a person's contact data through the real
// program: every booking and follow-up request of theirs changes in one
// go, the person is found by the new address only, nothing personal is
// printed or logged, and the next message goes to the corrected address.
func TestCorrectOnRequest(t *testing.T) {
	t.Parallel()
	for _, engine := range sqlstoretest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			smtpServer := notifytest.NewServer(t, notifytest.Options{})
			dbURL := sqlstoretest.URL(t, engine)
			if engine == sqlstore.SQLite {
				dbURL = "sqlite:" + filepath.Join(t.TempDir(), "bokat.db")
			}
			baseURL, token, _, stop := startServe(t, []string{"--demo", "--database", dbURL,
				"--smtp-url", "smtp://" + smtpServer.Addr + "?starttls=none", "--mail-from", "Bokat <bokning@mail.bokat.example>"}, nil)
			defer stop()
			f := &e2eFlow{t: t, baseURL: baseURL, token: token, smtp: smtpServer, client: &http.Client{Timeout: time.Minute}}
			old := e2eCustomer{"Hjalmarina Stolpe", "+46 70 111 27 93", "hjalmarina.st.2793@kund.example", "Ringvagen 12"}
			id := f.call("POST", "/v1/bookings", old.confirm(f.option("sv-SE", "prv_sthlm_vvs_1"), "correct-confirm"))["booking"].(map[string]any)["id"].(string)
			f.statuses(id, "sent", "sent")
			requestID := f.call("POST", "/v1/requests", map[string]any{
				"vertical_id": "vvs", "job_type_id": "install_faucet", "description": "Kranen droppar.",
				"user_consent_confirmed": true, "user_consent_statement": "Ja, dela mina uppgifter",
				"customer": map[string]any{"first_name": "Hjalmarina", "last_name": "Stolpe", "phone": "070-111 27 93", "email": old.email},
				"location": map[string]any{"address": old.address, "postcode": "113 45"},
				"timing":   map[string]any{"preferred_time_text": "nästa vecka"},
			})["request"].(map[string]any)["id"].(string)

			const (
				newName  = "Hjalmarina Brandt"
				newPhone = "+46 73 222 38 04"
				newEmail = "hjalmarina.br.3804@kund.example"
			)
			var out, errOut bytes.Buffer
			err := run(t.Context(), []string{"privacy", "correct", "--database", dbURL, "--email", strings.ToUpper(old.email),
				"--set-name", newName, "--set-phone", newPhone, "--set-email", newEmail}, getenvFrom(nil), &out, &errOut)
			if err != nil {
				t.Fatalf("correct: %v\n%s", err, errOut.String())
			}
			var got correctWire
			if err := json.Unmarshal(out.Bytes(), &got); err != nil || !slices.Equal(got.Bookings, []string{id}) ||
				!slices.Equal(got.Requests, []string{requestID}) || !slices.Equal(got.Fields, []string{"name", "phone", "email"}) {
				t.Errorf("correct printed %s (%v)", out.String(), err)
			}
			for _, s := range append(old.pii(), newName, "Brandt", newPhone, "732223804", newEmail, "hjalmarina.br") {
				if strings.Contains(strings.ToLower(out.String()+errOut.String()), strings.ToLower(s)) {
					t.Errorf("correct printed or logged %q", s)
				}
			}
			if !strings.Contains(errOut.String(), "email_hash") {
				t.Errorf("correct log %s; want a keyed hash of the address", errOut.String())
			}

			if doc, _ := privacyExport(t, dbURL, "--email", old.email); len(doc.Bookings)+len(doc.Requests) != 0 {
				t.Errorf("found by the old address after the correction: %+v", doc)
			}
			doc, _ := privacyExport(t, dbURL, "--phone", "073-222 38 04")
			if len(doc.Bookings) != 1 || len(doc.Requests) != 1 {
				t.Fatalf("by the new number: %d bookings, %d requests; want 1 and 1", len(doc.Bookings), len(doc.Requests))
			}
			if b := doc.Bookings[0]; b.Customer != (exportCustomerWire{Name: newName, Phone: newPhone, Email: newEmail}) ||
				b.ServiceAddress != old.address {
				t.Errorf("corrected booking %+v", b)
			}
			var cust map[string]string
			if err := json.Unmarshal(doc.Requests[0].Customer, &cust); err != nil ||
				!maps.Equal(cust, map[string]string{"name": newName, "phone": newPhone, "email": newEmail}) {
				t.Errorf("corrected request customer %s", doc.Requests[0].Customer)
			}

			// The next message about the booking goes to the corrected address.
			f.call("POST", "/v1/bookings/"+id+"/cancel", map[string]any{
				"user_confirmation_confirmed": true, "reason": "timing_no_longer_works", "idempotency_key": "correct-cancel"})
			checkText(t, "cancellation after the correction", f.message(newEmail, id, "Avbokning: "), []string{"Hej " + newName}, nil)

			var bad bytes.Buffer
			err = run(t.Context(), []string{"privacy", "correct", "--database", dbURL, "--email", newEmail, "--set-email", "not an address"},
				getenvFrom(nil), &bad, &bad)
			if !errors.Is(err, errUsage) || strings.Contains(err.Error(), "not an address") {
				t.Errorf("a bad --set-email: %v, want a usage error not repeating the value", err)
			}
			if err := run(t.Context(), []string{"privacy", "correct", "--database", dbURL, "--email", newEmail},
				getenvFrom(nil), &bad, &bad); !errors.Is(err, errUsage) {
				t.Errorf("nothing to correct: %v, want a usage error", err)
			}
		})
	}
}

// TestRetentionKeepsTheOperatorAuditForItsPeriod: serve keeps the
// operators' audit trail 730 days unless told otherwise, and its retention
// job deletes the older rows and logs how many, never what they said.
func TestRetentionKeepsTheOperatorAuditForItsPeriod(t *testing.T) {
	t.Parallel()
	var c retentionConfig
	c.register(newFlagSet("serve", env{getenv: getenvFrom(nil), stderr: io.Discard}))
	if c.RetainOperatorAudit != 730*24*time.Hour {
		t.Errorf("default operator audit retention %v, want 730 days", c.RetainOperatorAudit)
	}
	fs := newFlagSet("serve", env{getenv: getenvFrom(map[string]string{"BOKAT_RETAIN_OPERATOR_AUDIT": "90d"}), stderr: io.Discard})
	c.register(fs)
	if _, err := fs.parse(nil); err != nil || c.RetainOperatorAudit != 90*24*time.Hour {
		t.Errorf("BOKAT_RETAIN_OPERATOR_AUDIT=90d: %v, %v", c.RetainOperatorAudit, err)
	}

	db, err := openStore(t.Context(), commonConfig{Database: migratedSQLite(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for id, at := range map[string]time.Time{"opa_old": now.Add(-91 * 24 * time.Hour), "opa_new": now.Add(-89 * 24 * time.Hour)} {
		if err := db.InTx(t.Context(), func(tx *sqlstore.Tx) error {
			return tx.AppendOperatorAudit(t.Context(), operator.AuditEntry{ID: id, At: at, Actor: "cli:hemlig-anvandare",
				Action: "partner.key_rotated", ObjectKind: "partner", ObjectID: "pc_1"})
		}); err != nil {
			t.Fatal(err)
		}
	}
	var logs bytes.Buffer
	eraseExpired(t.Context(), db, slog.New(slog.NewJSONHandler(&logs, nil)), func() time.Time { return now }, c, "")
	var (
		kept  int
		first string
	)
	if err := db.R().QueryRowContext(t.Context(), `SELECT COUNT(*), MIN(id) FROM operator_audit`).Scan(&kept, &first); err != nil ||
		kept != 1 || first != "opa_new" {
		t.Errorf("operator audit rows kept: %d, the first %q (%v); want opa_new only", kept, first, err)
	}
	if !strings.Contains(logs.String(), `"msg":"old operator audit rows deleted","rows":1`) || strings.Contains(logs.String(), "hemlig") {
		t.Errorf("retention log %s; want the count of deleted rows only", logs.String())
	}
}
