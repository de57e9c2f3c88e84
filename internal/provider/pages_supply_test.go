package provider_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/provider"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/supply"
	"bokat/internal/web"
	"bokat/internal/web/webtest"
)

// TestSupplyPagesAuthorization calls every supply page and form as the
// provider's owner, another provider's owner, a caller with a partner token
// and nobody, and checks each answer and that every write reached the
// right provider only.
func TestSupplyPagesAuthorization(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newPagesEnv(t, db)
		e.seed(t)
		own, other, partner, none := e.browser(t), e.browser(t), e.browser(t), e.browser(t)
		own.SignIn(e.sender, ownerA)
		other.SignIn(e.sender, ownerB)
		partner.Header.Set("Authorization", "Bearer bkv_providertokenprovidertokenprovider00")
		ctx := context.Background()
		userA := provider.User{ID: e.userID(t, providerA, ownerA), ProviderID: providerA}
		userB := provider.User{ID: e.userID(t, providerB, ownerB), ProviderID: providerB}
		block, err := e.sup.AddBlock(ctx, userA, provider.BlockInput{WholeDays: true, From: "2026-03-20", Note: "Semester-A"})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.sup.SetDay(ctx, userA, provider.DayInput{Date: "2026-03-23", Closed: true}); err != nil {
			t.Fatal(err)
		}
		if err := e.sup.PutPostcodes(ctx, userA, []string{"111-118", "17172"}); err != nil {
			t.Fatal(err)
		}

		type want struct {
			status          int
			location        string
			contains, lacks string
		}
		signIn := want{status: http.StatusSeeOther, location: "/provider/sign-in"}
		for _, tc := range []struct {
			method, path string
			form         url.Values
			own, other   want
		}{
			{"GET", "/provider/blocks", nil, want{status: 200, contains: "Semester-A"}, want{status: 200, lacks: "Semester-A"}},
			{"GET", "/provider/hours", nil, want{status: 200, contains: "2026-03-23"}, want{status: 200, lacks: "2026-03-23"}},
			{"GET", "/provider/prices", nil, want{status: 200, contains: `value="1890"`}, want{status: 200, lacks: `value="1890"`}},
			{"GET", "/provider/postcodes", nil, want{status: 200, contains: "171 72"}, want{status: 200, lacks: "171 72"}},
			{"POST", "/provider/blocks/" + block.ID + "/remove", nil,
				want{status: 303, location: "/provider/blocks?done=block_removed"}, want{status: 404}},
			{"POST", "/provider/hours/days/2026-03-23/remove", nil,
				want{status: 303, location: "/provider/hours?done=day_removed"}, want{status: 404}},
			{"POST", "/provider/blocks", url.Values{"kind": {"days"}, "from": {"2026-03-25"}, "block_note": {"Kurs"}},
				want{status: 303, location: "/provider/blocks?done=block_added"}, want{status: 303, location: "/provider/blocks?done=block_added"}},
			{"POST", "/provider/hours", url.Values{"hours_monday": {"08:00-12:00"}, "notice": {"60"}, "horizon": {"30"}},
				want{status: 303, location: "/provider/hours?done=hours_saved"}, want{status: 303, location: "/provider/hours?done=hours_saved"}},
			{"POST", "/provider/hours/days", url.Values{"day_date": {"2026-03-24"}, "day_ranges": {"10:00-12:00"}},
				want{status: 303, location: "/provider/hours?done=day_saved"}, want{status: 303, location: "/provider/hours?done=day_saved"}},
			{"POST", "/provider/pause", url.Values{"until": {"2026-03-05"}},
				want{status: 303, location: "/provider/hours?done=pause_saved"}, want{status: 303, location: "/provider/hours?done=pause_saved"}},
			{"POST", "/provider/prices", url.Values{"price_vvs_install_faucet_standard": {"2190"}},
				want{status: 303, location: "/provider/prices?done=prices_saved"}, want{status: 303, location: "/provider/prices?done=prices_saved"}},
			{"POST", "/provider/postcodes", url.Values{"postcodes": {"113"}},
				want{status: 303, location: "/provider/postcodes?done=postcodes_saved"}, want{status: 303, location: "/provider/postcodes?done=postcodes_saved"}},
			{"POST", "/provider/prices", url.Values{"price_vvs_install_faucet_standard": {"-5"}},
				want{status: 400, contains: "Pris (tjänst 1): ska vara ett heltal från"}, want{status: 400}},
		} {
			for _, who := range []struct {
				name string
				b    *webtest.Client
				want want
			}{{"other", other, tc.other}, {"partner", partner, signIn}, {"none", none, signIn}, {"own", own, tc.own}} {
				var p webtest.Response
				if tc.method == "GET" {
					p = who.b.Get(tc.path)
				} else {
					form := url.Values{}
					for k, v := range tc.form {
						form[k] = v
					}
					p = who.b.Post(tc.path, form)
				}
				w := who.want
				if p.Status != w.status || w.location != "" && p.Location != w.location ||
					w.contains != "" && !strings.Contains(p.Body, w.contains) || w.lacks != "" && strings.Contains(p.Body, w.lacks) {
					t.Errorf("%s %s as %s: %d %q, want %d %q (containing %q, not %q)", tc.method, tc.path, who.name,
						p.Status, p.Location, w.status, w.location, w.contains, w.lacks)
				}
				if p.Status == http.StatusOK {
					if got := pageHeader(t, who.b, tc.path); got != web.ContentSecurityPolicy {
						t.Errorf("%s: CSP %q", tc.path, got)
					}
				}
			}
		}
		// Each provider's writes changed its own supply only.
		for _, c := range []struct {
			u        provider.User
			postcode string
		}{{userA, "113"}, {userB, "113"}} {
			s, err := e.sup.Supply(ctx, c.u)
			if err != nil {
				t.Fatal(err)
			}
			if got := supply.PostcodeEntries(s.Postcodes); len(got) != 1 || got[0] != c.postcode {
				t.Errorf("%s's postcodes: %v", c.u.ProviderID, got)
			}
			if offer, _ := s.Service("vvs_install_faucet_standard"); offer.PriceSEK != 2190 {
				t.Errorf("%s's faucet price: %d", c.u.ProviderID, offer.PriceSEK)
			}
			if s.PausedUntil.IsZero() || len(s.DayHours) != 1 || s.DayHours[0].Day != "2026-03-24" {
				t.Errorf("%s's pause %v and dates %v", c.u.ProviderID, s.PausedUntil, s.DayHours)
			}
			blocks, err := e.sup.Blocks(ctx, c.u)
			if err != nil || len(blocks) != 1 || blocks[0].Note != "Kurs" {
				t.Errorf("%s's blocks: %+v %v", c.u.ProviderID, blocks, err)
			}
		}
	})
}

// TestPricesPageLabourShare sets a price's labour share on the prices page
// and checks the store and the next search's ROT estimate; a share out of
// range is refused on the page with nothing written, and an empty field
// means "not stated": no estimate.
func TestPricesPageLabourShare(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newPagesEnv(t, db)
		e.seed(t)
		s := wireSupply(t, e.env, db)
		own := e.browser(t)
		own.SignIn(e.sender, ownerA)
		ctx := context.Background()
		userA := provider.User{ID: e.userID(t, providerA, ownerA), ProviderID: providerA}
		const faucet = "vvs_install_faucet_standard"
		estimate := func() *bokat.TaxReductionEstimate {
			t.Helper()
			res, err := s.search.Search(ctx, booking.Query{VerticalID: "vvs", JobTypeID: "install_faucet", Postcode: "113 45",
				PreferredTimeText: "2026-03-04", Locale: "sv-SE"})
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range res.Options {
				if o.Provider.ID == providerA {
					return o.TaxReduction
				}
			}
			t.Fatal("no option of provider A")
			return nil
		}
		stored := func() bokat.ProviderService {
			t.Helper()
			sup, err := e.sup.Supply(ctx, userA)
			if err != nil {
				t.Fatal(err)
			}
			offer, _ := sup.Service(faucet)
			return offer
		}
		// The supply file states 80 % of 1890 SEK.
		if est := estimate(); est == nil || est.LabourPercent != 80 {
			t.Fatalf("the estimate from the supply file: %+v, want 80 %% labour", est)
		}

		p := own.Get("/provider/prices")
		for _, want := range []string{`id="labour_` + faucet + `"`, `type="number"`, `min="0" max="100"`,
			"Andel arbetskostnad (%) — för preliminär ROT/RUT-beräkning", `aria-describedby="labour-help"`} {
			if !strings.Contains(p.Body, want) {
				t.Errorf("the prices page lacks %q", want)
			}
		}
		if p := own.Get("/provider/prices?lang=en"); !strings.Contains(p.Body, "Labour share (%) — for the preliminary ROT/RUT estimate") {
			t.Error("the English prices page lacks the labour hint")
		}

		p = own.Post("/provider/prices", url.Values{"price_" + faucet: {"2000"}, "labour_" + faucet: {"60"}})
		if p.Status != http.StatusSeeOther {
			t.Fatalf("saving a labour share: %d %q", p.Status, p.Body)
		}
		if got := stored(); got.PriceSEK != 2000 || got.Labour != bokat.StatedLabour(60) {
			t.Fatalf("stored %+v, want 2000 SEK with 60 %% labour", got)
		}
		// ROT 2026: 30 % of the labour part, 60 % of 2000 SEK.
		if est := estimate(); est == nil || est.Kind != "rot" || est.LabourPercent != 60 || est.LabourSEK != 1200 || est.ReductionSEK != 360 {
			t.Fatalf("the next search's estimate: %+v, want ROT of 1200 SEK labour = 360 SEK", est)
		}
		if p := own.Get("/provider/prices"); !strings.Contains(p.Body, `value="60"`) {
			t.Error("the prices page does not show the stored share")
		}

		for _, bad := range []string{"101", "-1", "12.5", "åtta"} {
			p = own.Post("/provider/prices", url.Values{"price_" + faucet: {"2500"}, "labour_" + faucet: {bad}})
			// The page names the field as it does (refusals in the page's
			// language), not by the supply file's path.
			if p.Status != http.StatusBadRequest || !strings.Contains(p.Body, "Andel arbetskostnad (tjänst 1): ska vara ett heltal") ||
				!strings.Contains(p.Body, `value="`+bad+`"`) {
				t.Errorf("labour %q: %d, want 400 naming the labour share of service 1 and keeping the value", bad, p.Status)
			}
			if got := stored(); got.PriceSEK != 2000 || got.Labour != bokat.StatedLabour(60) {
				t.Fatalf("labour %q: stored %+v, want nothing written", bad, got)
			}
		}

		p = own.Post("/provider/prices", url.Values{"price_" + faucet: {"2000"}, "labour_" + faucet: {""}})
		if p.Status != http.StatusSeeOther {
			t.Fatalf("clearing the labour share: %d", p.Status)
		}
		if got := stored(); got.Labour.Stated {
			t.Fatalf("stored %+v after clearing, want not stated", got)
		}
		if est := estimate(); est != nil {
			t.Fatalf("an estimate after the share was cleared: %+v", est)
		}
	})
}

// TestSupplyRefusalsInThePageLanguage checks that the supply file's
// refusals of hours, prices and postcodes reach the page user in the
// page's language, naming the field as the page does, not as the file's
// path with an English reason.
func TestSupplyRefusalsInThePageLanguage(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newPagesEnv(t, db)
		e.seed(t)
		b := e.browser(t)
		b.SignIn(e.sender, ownerA)
		for _, tc := range []struct {
			path, lang string
			form       url.Values
			want       []string
		}{
			{"/provider/prices", "sv", url.Values{"price_vvs_install_faucet_standard": {"-5"}},
				[]string{"Ändringen sparades inte.", "Pris (tjänst 1): ska vara ett heltal från 1 till"}},
			{"/provider/prices", "en", url.Values{"price_vvs_install_faucet_standard": {"-5"}},
				[]string{"Nothing was saved.", "Price (service 1): must be a whole number from 1 to"}},
			{"/provider/postcodes", "sv", url.Values{"postcodes": {"abc"}},
				[]string{"Postnummer: &#34;abc&#34; är inte ett postnummer"}},
			{"/provider/postcodes", "en", url.Values{"postcodes": {"abc"}},
				[]string{"Postcodes: &#34;abc&#34; is not a postcode"}},
			{"/provider/hours", "sv", url.Values{"hours_monday": {"08:00-12:00, 11:00-13:00"}, "notice": {"60"}, "horizon": {"30"}},
				[]string{"Öppettider: måndag: 11:00–13:00 överlappar 08:00–12:00"}},
			{"/provider/hours", "en", url.Values{"hours_monday": {"08:00-12:00, 11:00-13:00"}, "notice": {"60"}, "horizon": {"30"}},
				[]string{"Hours: monday: 11:00–13:00 overlaps 08:00–12:00"}},
		} {
			form := url.Values{"lang": {tc.lang}}
			for k, v := range tc.form {
				form[k] = v
			}
			p := b.Post(tc.path, form)
			if p.Status != http.StatusBadRequest {
				t.Errorf("%s in %s: %d, want 400", tc.path, tc.lang, p.Status)
				continue
			}
			for _, w := range tc.want {
				if !strings.Contains(p.Body, w) {
					t.Errorf("%s in %s: the page lacks %q:\n%s", tc.path, tc.lang, w, errorParagraph(p.Body))
				}
			}
			if tc.lang == "sv" && (strings.Contains(p.Body, "must be") || strings.Contains(p.Body, "is not a") ||
				strings.Contains(p.Body, "overlaps")) {
				t.Errorf("%s in Swedish keeps an English reason:\n%s", tc.path, errorParagraph(p.Body))
			}
			if strings.Contains(p.Body, "services[0]") || strings.Contains(p.Body, "postcodes[0]") {
				t.Errorf("%s in %s shows the file's field path:\n%s", tc.path, tc.lang, errorParagraph(p.Body))
			}
		}
	})
}

// errorParagraph is the part of a page around its error, for messages.
func errorParagraph(body string) string {
	i := strings.Index(body, "class=\"error")
	if i < 0 {
		return body
	}
	return body[i:min(len(body), i+600)]
}
