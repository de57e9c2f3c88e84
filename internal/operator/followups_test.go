package operator_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"bokat"
	"bokat/internal/catalog"
	"bokat/internal/followup"
	"bokat/internal/idem"
	"bokat/internal/operator"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// request creates a follow-up request for a faucet job at the address as
// the API does, and returns its id.
func (e *env) request(t testing.TB, address string) string {
	t.Helper()
	return e.requestIn(t, context.Background(), partner, address)
}

// requestIn is request for the principal, at the clock ctx carries (a test
// owner's, bokat.WithTestClock).
func (e *env) requestIn(t testing.TB, ctx context.Context, partner bokat.Principal, address string) string {
	t.Helper()
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	svc := followup.New(sqlstore.Bind[followup.Tx](e.db), cat, e.clock.Now, nil)
	in := followup.Input{VerticalID: "vvs", JobTypeID: "install_faucet", Description: "Byta blandaren i köket.",
		Customer: followup.Customer{Name: "Greta Gåsfot", Phone: "+46701234567", Email: customerEmail},
		Location: followup.Location{Address: address}, Timing: followup.Timing{PreferredTimeText: "nästa vecka"},
		CustomerNextStep: "home_visit", ConsentConfirmed: true}
	var id string
	_, _, err = svc.Create(ctx, partner, in, idem.Key{Owner: partner.OwnerKey(), Operation: "requests.create",
		Key: uuid.NewString(), Mode: partner.Realm()}, "fp", func(r followup.Request) (idem.Outcome, error) {
		id = r.ID
		return idem.Outcome{Body: []byte(`{}`)}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestConsoleShowsTheFollowUpQueue shows the follow-up requests, those no
// provider covers apart, with what was done: the providers each was handed
// to and the operators' notes, which are audited.
func TestConsoleShowsTheFollowUpQueue(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		op := e.invite(t, operatorEmail)
		covered := e.request(t, "Hornsgatan 172, 117 28 Stockholm")
		uncovered := e.request(t, "Storgatan 1, 981 31 Kiruna")
		c := newClient(t, e.srv.URL)
		c.SignIn(e.sender, operatorEmail)

		all := c.Do("GET", "/operator/follow-ups", nil)
		if all.Status != http.StatusOK || !strings.Contains(all.Body, covered) || !strings.Contains(all.Body, uncovered) ||
			!strings.Contains(all.Body, "Ingen hantverkare täcker jobbet här") || !strings.Contains(all.Body, "0 skickade") {
			t.Fatalf("the queue: %d\n%s", all.Status, all.Body)
		}
		if strings.Contains(all.Body, "Gåsfot") || strings.Contains(all.Body, customerEmail) || strings.Contains(all.Body, "Hornsgatan") {
			t.Error("the queue shows the customer's contact data")
		}
		if strings.Count(all.Body, "VVS: Montering av blandare") != 2 || strings.Contains(all.Body, "install_faucet") {
			t.Errorf("the queue does not name each request's job by the catalog's names:\n%s", all.Body)
		}
		if en := c.Do("GET", "/operator/follow-ups?lang=en", nil); strings.Count(en.Body, "Plumbing: Faucet installation") != 2 {
			t.Errorf("the English queue does not name the jobs in English:\n%s", en.Body)
		}
		only := c.Do("GET", "/operator/follow-ups?uncovered=1", nil)
		if !strings.Contains(only.Body, uncovered) || strings.Contains(only.Body, covered) {
			t.Errorf("the uncovered requests:\n%s", only.Body)
		}

		if p := c.Post("/operator/follow-ups/"+uncovered+"/note?uncovered=1", url.Values{"note": {"x"}}); p.Status != http.StatusBadRequest {
			t.Errorf("a one-letter note: %d", p.Status)
		}
		if p := c.Post("/operator/follow-ups/req_nope/note", url.Values{"note": {"Ringde."}}); p.Status != http.StatusNotFound {
			t.Errorf("a note on an unknown request: %d", p.Status)
		}
		p := c.Post("/operator/follow-ups/"+uncovered+"/note?uncovered=1",
			url.Values{"note": {"Ringde Kiruna Rör, som tar jobbet."}})
		if p.Status != http.StatusSeeOther || p.Location != "/operator/follow-ups?uncovered=1&done=noted_notice" {
			t.Fatalf("note: %d %s\n%s", p.Status, p.Location, p.Body)
		}
		if a := e.audit(t, "follow_up", uncovered); len(a) != 1 || a[0].Action != operator.ActionFollowUpAnnotated ||
			a[0].Actor != op.ID || !strings.Contains(a[0].Details["note"], "Kiruna Rör") {
			t.Errorf("audit of the note: %+v", a)
		}
		if page := c.Do("GET", "/operator/follow-ups?uncovered=1&lang=en", nil); !strings.Contains(page.Body, "What was done") ||
			!strings.Contains(page.Body, "Kiruna Rör") || !strings.Contains(page.Body, "No provider covers the job here") {
			t.Errorf("the queue after the note:\n%s", page.Body)
		}
	})
}

// TestFollowUpQueueOrdersByArrival: the queue lists requests newest first
// by when they reached Bokat. A test request's own time is its owner's
// test clock, here a year ahead: it is marked as a test request and does
// not stay on top of the live requests made after it, on each engine.
func TestFollowUpQueueOrdersByArrival(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		e.invite(t, operatorEmail)
		sandbox := bokat.Principal{Kind: bokat.PrincipalPartner, ClientID: "pc_sandbox", Mode: bokat.ModeTest}
		const ahead = 365 * 24 * time.Hour
		test := e.requestIn(t, bokat.WithTestClock(context.Background(), ahead), sandbox, "Storgatan 1, 981 31 Kiruna")
		e.clock.Advance(time.Minute)
		live := e.request(t, "Hornsgatan 172, 117 28 Stockholm")
		c := newClient(t, e.srv.URL)
		c.SignIn(e.sender, operatorEmail)
		queue := c.Do("GET", "/operator/follow-ups", nil).Body
		at, tat := strings.Index(queue, `id="fu-`+live+`"`), strings.Index(queue, `id="fu-`+test+`"`)
		if at < 0 || tat < 0 || at > tat {
			t.Errorf("the live request made last is not first (live at %d, test at %d)", at, tat)
		}
		if !strings.Contains(queue, test+" (testläge)") {
			t.Errorf("the test request is not marked as one")
		}
	})
}
