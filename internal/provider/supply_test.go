package provider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/catalog"
	"bokat/internal/idem"
	"bokat/internal/provider"
	"bokat/internal/schedule"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/supply"
)

// supplyEnv is env with the supply use cases and a search, over one store.
type supplyEnv struct {
	*env
	sup    *provider.Supply
	search *booking.Search
	keys   *booking.Keyring
	cat    *catalog.Catalog
}

func newSupplyEnv(t *testing.T, db *sqlstore.DB) *supplyEnv {
	t.Helper()
	e := newEnv(t, db)
	return wireSupply(t, e, db)
}

// wireSupply wires the supply use cases and a search over db with e's
// clock, as one serve process does.
func wireSupply(t *testing.T, e *env, db *sqlstore.DB) *supplyEnv {
	t.Helper()
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := booking.NewKeyring(booking.Key{ID: "k1", Secret: bytes.Repeat([]byte{7}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	search, err := booking.NewSearch(booking.Config{Catalog: cat, Store: db, Keys: keys, Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return &supplyEnv{env: e, sup: provider.NewSupply(sqlstore.Bind[provider.SupplyTx](db), cat, e.clock.Now, log),
		search: search, keys: keys, cat: cat}
}

// slots returns the starts (Stockholm "2006-01-02 15:04") and prices of
// provider's options for a faucet at the postcode on a day.
func (e *supplyEnv) slots(t *testing.T, providerID, postcode, day string) ([]string, []int64) {
	t.Helper()
	res, err := e.search.Search(context.Background(), booking.Query{VerticalID: "vvs", JobTypeID: "install_faucet",
		Postcode: postcode, PreferredTimeText: day, Locale: "sv-SE"})
	if err != nil {
		t.Fatal(err)
	}
	var starts []string
	var prices []int64
	for _, o := range res.Options {
		if o.Provider.ID == providerID {
			starts = append(starts, o.Slot.Start.In(schedule.Stockholm()).Format("2006-01-02 15:04"))
			prices = append(prices, o.Price.AmountSEK)
		}
	}
	return starts, prices
}

func (e *supplyEnv) offered(t *testing.T, providerID, postcode, day string) bool {
	t.Helper()
	starts, _ := e.slots(t, providerID, postcode, day)
	return len(starts) > 0
}

func stockholm(y int, m time.Month, d, h, min int) time.Time {
	return time.Date(y, m, d, h, min, 0, 0, schedule.Stockholm())
}

// The clock stands at Monday 2 March 2026, 09:00 in Stockholm.

func TestBlocksAreRefusedOverBookingsAndSeenBySearch(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newSupplyEnv(t, db)
		ctx := context.Background()
		owner, _ := e.signIn(t, nil, providerA, "agare@vvs-ett.se", provider.Owner)
		other, _ := e.signIn(t, nil, providerB, "agare@vvs-tva.se", provider.Owner)
		sqlstoretest.InsertBookingEntry(t, db, providerA, "bk_in_the_way", stockholm(2026, 3, 4, 10, 0), stockholm(2026, 3, 4, 12, 0))

		_, err := e.sup.AddBlock(ctx, owner, provider.BlockInput{From: "2026-03-04", StartTime: "09:00", EndTime: "11:00"})
		var way *provider.BookingInTheWay
		if !errors.As(err, &way) || way.BookingID != "bk_in_the_way" || !errors.Is(err, bokat.ErrConflict) {
			t.Fatalf("a block over a booking: %v, want the booking named", err)
		}
		// A weekly block whose third week meets the booking is refused too.
		sqlstoretest.InsertBookingEntry(t, db, providerA, "bk_later", stockholm(2026, 3, 19, 8, 0), stockholm(2026, 3, 19, 9, 0))
		_, err = e.sup.AddBlock(ctx, owner, provider.BlockInput{WholeDays: true, From: "2026-03-05", Weeks: 3})
		if !errors.As(err, &way) || way.BookingID != "bk_later" {
			t.Fatalf("a weekly block over a later booking: %v", err)
		}
		if !e.offered(t, providerA, "113 45", "2026-03-05") {
			t.Fatal("no slot of A on Thursday before any block")
		}

		b, err := e.sup.AddBlock(ctx, owner, provider.BlockInput{From: "2026-03-05", StartTime: "08:00", EndTime: "17:00",
			Weeks: 2, Note: "Kurs"})
		if err != nil {
			t.Fatal(err)
		}
		for day, want := range map[string]bool{"2026-03-05": false, "2026-03-12": false, "2026-03-06": true} {
			if got := e.offered(t, providerA, "113 45", day); got != want {
				t.Errorf("A offered on %s: %v, want %v", day, got, want)
			}
		}
		var entries int
		if err := db.R().QueryRowContext(ctx, `SELECT COUNT(*) FROM calendar_entries WHERE block_id = $1 AND kind = 'blocked' AND active`,
			b.ID).Scan(&entries); err != nil || entries != 2 {
			t.Errorf("stored %d occurrences (%v), want 2", entries, err)
		}
		list, err := e.sup.Blocks(ctx, owner)
		if err != nil || len(list) != 1 || list[0].ID != b.ID || list[0].Weeks != 2 || list[0].Note != "Kurs" {
			t.Errorf("blocks %+v %v", list, err)
		}

		if err := e.sup.RemoveBlock(ctx, other, b.ID); !errors.Is(err, bokat.ErrNotFound) {
			t.Errorf("another provider removed the block: %v", err)
		}
		if err := e.sup.RemoveBlock(ctx, owner, b.ID); err != nil {
			t.Fatal(err)
		}
		if !e.offered(t, providerA, "113 45", "2026-03-12") {
			t.Error("the removed block still hides A's slots")
		}
		for _, bad := range []provider.BlockInput{
			{From: "2026-03-01", StartTime: "08:00", EndTime: "09:00"},                 // past
			{From: "2026-03-05", StartTime: "12:00", EndTime: "10:00"},                 // backwards
			{From: "2026-03-05", StartTime: "08:00", EndTime: "09:00", Weeks: 53},      // too many weeks
			{WholeDays: true, From: "2026-03-05", To: "2026-03-04"},                    // ends before it starts
			{From: "5 mars", StartTime: "08:00", EndTime: "09:00"},                     // not a date
			{From: "2026-03-05", StartTime: "08:00", EndTime: "09:00", Note: "a\x00b"}, // not text
		} {
			if _, err := e.sup.AddBlock(ctx, owner, bad); !errors.Is(err, provider.ErrInvalid) {
				t.Errorf("AddBlock(%+v) = %v, want ErrInvalid", bad, err)
			}
		}
		want := []string{"block.added block", "block.removed block"}
		if got := e.audit(t, providerA); !containsInOrder(got, want) {
			t.Errorf("audit %v, want %v in it", got, want)
		}
	})
}

func containsInOrder(got, want []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

func TestHoursPricesAndPostcodesAreCheckedAndSeenBySearch(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newSupplyEnv(t, db)
		ctx := context.Background()
		owner, _ := e.signIn(t, nil, providerA, "agare@vvs-ett.se", provider.Owner)
		rev := func() int64 {
			r, err := db.SupplyRevision(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}

		// Prices: the supply file's rules, nothing written on a refusal.
		before := rev()
		err := e.sup.PutPrices(ctx, owner, []map[string]any{
			{"service_id": "vvs_install_faucet_standard", "unit_price_sek": 100},
			{"service_id": "no_such_service", "price_sek": 100},
		})
		problems, ok := provider.IsInvalid(err)
		if !ok || len(problems) != 3 || problems[0].Path != "services[0].price_sek" {
			t.Fatalf("bad prices: %v", err)
		}
		if rev() != before {
			t.Error("a refused change moved the supply revision")
		}
		if _, prices := e.slots(t, providerA, "113 45", "2026-03-04"); len(prices) == 0 || prices[0] != 1890 {
			t.Fatalf("A's price before: %v", prices)
		}
		if err := e.sup.PutPrices(ctx, owner, []map[string]any{{"service_id": "vvs_install_faucet_standard", "price_sek": 2190}}); err != nil {
			t.Fatal(err)
		}
		if _, prices := e.slots(t, providerA, "113 45", "2026-03-04"); len(prices) == 0 || prices[0] != 2190 {
			t.Errorf("A's price after the change: %v, want 2190", prices)
		}

		// Postcodes in the file's grammar.
		if err := e.sup.PutPostcodes(ctx, owner, []string{"113", "116 45"}); err != nil {
			t.Fatal(err)
		}
		if !e.offered(t, providerA, "113 45", "2026-03-04") || !e.offered(t, providerA, "116 45", "2026-03-04") ||
			e.offered(t, providerA, "114 45", "2026-03-04") {
			t.Error("search does not follow the new postcodes")
		}
		if err := e.sup.PutPostcodes(ctx, owner, []string{"0123"}); !errors.Is(err, provider.ErrInvalid) {
			t.Errorf("a bad postcode: %v", err)
		}

		// Weekly hours, notice, horizon.
		if err := e.sup.PutHours(ctx, owner, provider.HoursInput{Weekly: map[string][]string{"weekdays": {"10:00-12:00"}},
			MinNoticeMinutes: 60, HorizonDays: 30}); err != nil {
			t.Fatal(err)
		}
		starts, _ := e.slots(t, providerA, "113 45", "2026-03-04")
		if len(starts) == 0 || starts[0] != "2026-03-04 10:00" {
			t.Errorf("A's slots after new hours: %v", starts)
		}
		if !e.offered(t, providerA, "113 45", "2026-03-26") {
			t.Error("the longer horizon is not searched")
		}
		for _, bad := range []provider.HoursInput{
			{Weekly: map[string][]string{"weekdays": {"12:00-10:00"}}, HorizonDays: 14},
			{Weekly: map[string][]string{"weekdays": {"10:00-12:00"}}, HorizonDays: 0},
			{Weekly: map[string][]string{"funday": {"10:00-12:00"}}, HorizonDays: 14},
		} {
			if err := e.sup.PutHours(ctx, owner, bad); !errors.Is(err, provider.ErrInvalid) {
				t.Errorf("PutHours(%+v) = %v", bad, err)
			}
		}

		// A date's own hours, a closed day, a pause.
		if err := e.sup.SetDay(ctx, owner, provider.DayInput{Date: "2026-03-04", Closed: true}); err != nil {
			t.Fatal(err)
		}
		if err := e.sup.SetDay(ctx, owner, provider.DayInput{Date: "2026-03-05", Ranges: []string{"14:00-16:00"}}); err != nil {
			t.Fatal(err)
		}
		if e.offered(t, providerA, "113 45", "2026-03-04") {
			t.Error("A offered on its closed day")
		}
		if starts, _ := e.slots(t, providerA, "113 45", "2026-03-05"); len(starts) == 0 || starts[0] != "2026-03-05 14:00" {
			t.Errorf("A's slots on its special day: %v", starts)
		}
		if err := e.sup.ClearDay(ctx, owner, "2026-03-04"); err != nil || !e.offered(t, providerA, "113 45", "2026-03-04") {
			t.Errorf("clearing the closed day: %v", err)
		}
		if err := e.sup.Pause(ctx, owner, "2026-03-10"); err != nil {
			t.Fatal(err)
		}
		if e.offered(t, providerA, "113 45", "2026-03-09") || !e.offered(t, providerA, "113 45", "2026-03-10") {
			t.Error("search does not follow the pause")
		}
		if err := e.sup.Pause(ctx, owner, ""); err != nil || !e.offered(t, providerA, "113 45", "2026-03-09") {
			t.Errorf("resume: %v", err)
		}
		got := e.audit(t, providerA)
		for _, want := range []string{"supply.prices provider", "supply.postcodes provider", "supply.hours provider",
			"supply.day_hours provider", "supply.pause provider"} {
			if !slices.Contains(got, want) {
				t.Errorf("no audit row %q in %v", want, got)
			}
		}
	})
}

func TestPriceChangeFailsEarlierOptionsAndKeepsBookings(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newSupplyEnv(t, db)
		ctx := context.Background()
		owner, _ := e.signIn(t, nil, providerA, "agare@vvs-ett.se", provider.Owner)
		life, err := booking.NewLifecycle(booking.LifecycleConfig{Store: sqlstore.Bind[booking.Tx](db), Catalog: e.cat,
			Keys: e.keys, Now: e.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.search.Search(ctx, booking.Query{VerticalID: "vvs", JobTypeID: "install_faucet", Postcode: "113 45",
			PreferredTimeText: "2026-03-04", Locale: "sv-SE"})
		if err != nil {
			t.Fatal(err)
		}
		var mine []booking.Option
		for _, o := range res.Options {
			if o.Provider.ID == providerA {
				mine = append(mine, o)
			}
		}
		if len(mine) < 2 {
			t.Fatalf("%d options of A", len(mine))
		}
		principal := bokat.Principal{Kind: bokat.PrincipalPartner, ClientID: "pc_1"}
		confirm := func(o booking.Option, key string) (idem.Outcome, error) {
			in := booking.ConfirmInput{OptionID: o.ID,
				Customer:         bokat.BookingContact{FirstName: "Greta", LastName: "Gåsfot", Phone: "+46701234567", Email: "greta@example.se"},
				ServiceLocation:  booking.Location{Address: "Drottninggatan 1", Postcode: "113 45"},
				ConsentConfirmed: true, TermsAccepted: true, TermsVersion: o.Claims.TermsVersion, TermsAcceptedAt: o.Claims.IssuedAt}
			out, _, err := life.Confirm(ctx, principal, in, idem.Key{Owner: principal.OwnerKey(), Operation: booking.OpConfirm, Key: key}, key,
				func(b bokat.Booking) (idem.Outcome, error) {
					raw, err := json.Marshal(booking.RecordOf(b))
					return idem.Outcome{Body: raw}, err
				})
			return out, err
		}
		first, err := confirm(mine[0], "k1")
		if err != nil {
			t.Fatal(err)
		}
		if err := e.sup.PutPrices(ctx, owner, []map[string]any{{"service_id": "vvs_install_faucet_standard", "price_sek": 2490}}); err != nil {
			t.Fatal(err)
		}
		_, err = confirm(mine[1], "k2")
		var be *bokat.Error
		if !errors.As(err, &be) || be.Code != bokat.CodeBookingOptionChanged {
			t.Fatalf("confirming an option issued before the price change: %v, want booking_option_changed", err)
		}
		b, err := sqlstore.Bind[booking.Tx](db).OwnedBooking(ctx, first.ResourceID, "pc_1", "")
		if err != nil || b.PriceSEK != 1890 {
			t.Errorf("the confirmed booking's price is %d (%v), want 1890", b.PriceSEK, err)
		}
	})
}

func TestImportKeepsWhatTheProviderManages(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newSupplyEnv(t, db)
		ctx := context.Background()
		owner, _ := e.signIn(t, nil, providerA, "agare@vvs-ett.se", provider.Owner)
		if err := e.sup.PutPrices(ctx, owner, []map[string]any{{"service_id": "vvs_install_faucet_standard", "price_sek": 2190}}); err != nil {
			t.Fatal(err)
		}
		b, err := e.sup.AddBlock(ctx, owner, provider.BlockInput{WholeDays: true, From: "2026-03-06"})
		if err != nil {
			t.Fatal(err)
		}
		// The operator edits the file: new prices and hours for A and B.
		file := bytes.ReplaceAll(supply.Demo(), []byte("price_sek: 1890}"), []byte("price_sek: 1990}"))
		file = bytes.ReplaceAll(file, []byte("price_sek: 1990}"), []byte("price_sek: 1995}"))
		res, err := supply.Import(ctx, sqlstore.Bind[supply.Tx](db), e.cat, supply.DemoName, file, e.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if got := e.audit(t, providerB); !slices.Contains(got, "supply.imported provider") {
			t.Errorf("no audit row of the import that changed B in %v", got)
		}
		if got := e.audit(t, providerA); slices.Contains(got, "supply.imported provider") {
			t.Errorf("an audit row of an import that changed nothing of A: %v", got)
		}
		if got := res.Kept[providerA]; !slices.Equal(got, []string{supply.GroupBlocks, supply.GroupPrices}) {
			t.Errorf("kept for A: %v", got)
		}
		if _, ok := res.Kept[providerB]; ok || !slices.Contains(res.Updated, providerB) {
			t.Errorf("B manages nothing and was not updated: %+v", res)
		}
		if _, prices := e.slots(t, providerA, "113 45", "2026-03-04"); len(prices) == 0 || prices[0] != 2190 {
			t.Errorf("A's own price after the import: %v, want 2190", prices)
		}
		if _, prices := e.slots(t, providerB, "113 45", "2026-03-04"); len(prices) == 0 || prices[0] != 1995 {
			t.Errorf("B's price after the import: %v, want the file's 1995", prices)
		}
		if list, err := e.sup.Blocks(ctx, owner); err != nil || len(list) != 1 || list[0].ID != b.ID {
			t.Errorf("A's own block after the import: %+v %v", list, err)
		}
	})
}

// A change through one process is seen by the next search of another
// process on the same database, whose index was current just before.
func TestChangesAreSeenByAnotherProcess(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		one := newSupplyEnv(t, db)
		two := wireSupply(t, one.env, sqlstoretest.Reopen(t, db, sqlstoretest.Vault(t)))
		ctx := context.Background()
		owner, _ := one.signIn(t, nil, providerA, "agare@vvs-ett.se", provider.Owner)
		if !two.offered(t, providerA, "113 45", "2026-03-04") {
			t.Fatal("no slot of A before the block")
		}
		if _, err := one.sup.AddBlock(ctx, owner, provider.BlockInput{WholeDays: true, From: "2026-03-04"}); err != nil {
			t.Fatal(err)
		}
		if two.offered(t, providerA, "113 45", "2026-03-04") {
			t.Error("the other process offers a blocked day")
		}
		if err := one.sup.PutPrices(ctx, owner, []map[string]any{{"service_id": "vvs_install_faucet_standard", "price_sek": 2290}}); err != nil {
			t.Fatal(err)
		}
		if _, prices := two.slots(t, providerA, "113 45", "2026-03-05"); len(prices) == 0 || prices[0] != 2290 {
			t.Errorf("the other process's price: %v, want 2290", prices)
		}
		// Every one of a run of changes is seen by the other process's very
		// next search; the wall time from the change to that answer is
		// reported for the note (never asserted: the clock is injected).
		var took []time.Duration
		for i := range 30 {
			price := int64(2000 + i)
			began := time.Now()
			if err := one.sup.PutPrices(ctx, owner, []map[string]any{{"service_id": "vvs_install_faucet_standard", "price_sek": price}}); err != nil {
				t.Fatal(err)
			}
			_, prices := two.slots(t, providerA, "113 45", "2026-03-05")
			took = append(took, time.Since(began))
			if len(prices) == 0 || prices[0] != price {
				t.Fatalf("change %d: the other process's price %v, want %d", i, prices, price)
			}
		}
		slices.Sort(took)
		t.Logf("%s: change → seen by the other process's next search: p50 %v, p99 %v (%d changes)",
			db.Engine(), took[len(took)/2], took[len(took)*99/100], len(took))
	})
}

// Concurrent changes of one provider's group all succeed, one after the
// other: none fails on rows another replaced meanwhile.
func TestConcurrentChangesOfOneProvider(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newSupplyEnv(t, db)
		owner, _ := e.signIn(t, nil, providerA, "agare@vvs-ett.se", provider.Owner)
		const n = 8
		errs := make(chan error, n)
		for i := range n {
			go func() {
				errs <- e.sup.PutPrices(context.Background(), owner, []map[string]any{
					{"service_id": "vvs_install_faucet_standard", "price_sek": 2000 + i},
					{"service_id": "vvs_install_toilet_standard", "price_sek": 3000 + i}})
			}()
		}
		for range n {
			if err := <-errs; err != nil {
				t.Errorf("a concurrent change failed: %v", err)
			}
		}
	})
}

// A date closed, or a pause set, after an option was issued makes its
// confirmation fail with booking_option_unavailable: confirmation reads
// the provider's dates and pause, not only search.
func TestClosedDayAndPauseFailEarlierOptions(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newSupplyEnv(t, db)
		ctx := context.Background()
		owner, _ := e.signIn(t, nil, providerA, "agare@vvs-ett.se", provider.Owner)
		life, err := booking.NewLifecycle(booking.LifecycleConfig{Store: sqlstore.Bind[booking.Tx](db), Catalog: e.cat,
			Keys: e.keys, Now: e.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		option := func(day string) booking.Option {
			t.Helper()
			res, err := e.search.Search(ctx, booking.Query{VerticalID: "vvs", JobTypeID: "install_faucet", Postcode: "113 45",
				PreferredTimeText: day, Locale: "sv-SE"})
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range res.Options {
				if o.Provider.ID == providerA {
					return o
				}
			}
			t.Fatalf("no option of A on %s", day)
			return booking.Option{}
		}
		principal := bokat.Principal{Kind: bokat.PrincipalPartner, ClientID: "pc_1"}
		confirm := func(o booking.Option, key string) error {
			in := booking.ConfirmInput{OptionID: o.ID,
				Customer:         bokat.BookingContact{FirstName: "Greta", LastName: "Gåsfot", Phone: "+46701234567", Email: "greta@example.se"},
				ServiceLocation:  booking.Location{Address: "Drottninggatan 1", Postcode: "113 45"},
				ConsentConfirmed: true, TermsAccepted: true, TermsVersion: o.Claims.TermsVersion, TermsAcceptedAt: o.Claims.IssuedAt}
			_, _, err := life.Confirm(ctx, principal, in, idem.Key{Owner: principal.OwnerKey(), Operation: booking.OpConfirm, Key: key}, key,
				func(b bokat.Booking) (idem.Outcome, error) { return idem.Outcome{Body: []byte(`{}`)}, nil })
			return err
		}
		onClosedDay, duringPause := option("2026-03-04"), option("2026-03-05")
		if err := e.sup.SetDay(ctx, owner, provider.DayInput{Date: "2026-03-04", Closed: true}); err != nil {
			t.Fatal(err)
		}
		if err := e.sup.Pause(ctx, owner, "2026-03-06"); err != nil {
			t.Fatal(err)
		}
		for name, o := range map[string]booking.Option{"closed day": onClosedDay, "pause": duringPause} {
			var be *bokat.Error
			if err := confirm(o, name); !errors.As(err, &be) || be.Code != bokat.CodeBookingOptionUnavailable {
				t.Errorf("%s: confirm = %v, want booking_option_unavailable", name, err)
			}
		}
	})
}
