package booking_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/supply"
)

// revalidate runs Search.Revalidate in a write transaction, as confirmation will.
func (f *fixture) revalidate(tb testing.TB, c booking.OptionClaims, now time.Time, excluding string) error {
	tb.Helper()
	return f.db.InTx(context.Background(), func(tx *sqlstore.Tx) error {
		if excluding != "" {
			return f.search.RevalidateExcluding(context.Background(), tx, c, now, excluding)
		}
		return f.search.Revalidate(context.Background(), tx, c, now)
	})
}

func (f *fixture) reimport(tb testing.TB, file string) {
	tb.Helper()
	if _, err := supply.Import(context.Background(), sqlstore.Bind[supply.Tx](f.db), testCatalog(tb), "x.yaml", []byte(file), f.clock.Now()); err != nil {
		tb.Fatal(err)
	}
}

func TestRevalidate(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		now := local(2026, 11, 23, 9, 0) // Monday
		f := newFixture(t, db, oneProvider, now)
		q := query("electrician", "electrical_install_spotlights", "11345", "i morgon")
		q.Details = map[string]any{"spot_count": 8}
		res := f.run(t, q)
		if len(res.Options) == 0 {
			t.Fatal("no options")
		}
		opt := res.Options[0] // Tuesday 08:00–12:00, 8 × 650 SEK
		c, err := f.keys.Verify(opt.ID, now.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.revalidate(t, c, now.Add(time.Minute), ""); err != nil {
			t.Fatalf("a fresh option does not revalidate: %v", err)
		}

		type tc struct {
			name   string
			change func(t *testing.T) (undo func())
			claims func(c booking.OptionClaims) booking.OptionClaims
			at     time.Time
			want   bokat.Code
			detail string
		}
		withFile := func(file string) func(t *testing.T) func() {
			return func(t *testing.T) func() {
				f.reimport(t, file)
				return func() { f.reimport(t, oneProvider) }
			}
		}
		cases := []tc{
			{name: "price changed", change: withFile(strings.Replace(oneProvider, "unit_price_sek: 650", "unit_price_sek: 700", 1)),
				want: bokat.CodeBookingOptionChanged, detail: "price"},
			{name: "minimum charge changed", change: withFile(strings.Replace(oneProvider, "minimum_charge_sek: 1950", "minimum_charge_sek: 9000", 1)),
				want: bokat.CodeBookingOptionChanged, detail: "price"},
			{name: "duration changed", change: withFile(strings.Replace(oneProvider, "{service_id: electrician_install_spotlights_per_item, unit_price_sek: 650, minimum_charge_sek: 1950}",
				"{service_id: electrician_install_spotlights_per_item, unit_price_sek: 650, minimum_charge_sek: 1950, duration: {fixed_minutes: 300}}", 1)),
				want: bokat.CodeBookingOptionChanged, detail: "time for this job"},
			{name: "service withdrawn", change: withFile(strings.Replace(oneProvider, "      - {service_id: electrician_install_spotlights_per_item, unit_price_sek: 650, minimum_charge_sek: 1950}\n", "", 1)),
				want: bokat.CodeBookingOptionChanged, detail: "no longer offers"},
			{name: "coverage withdrawn", change: withFile(strings.Replace(oneProvider, `["111-118"]`, `["114-118"]`, 1)),
				want: bokat.CodeBookingOptionChanged, detail: "postcode"},
			{name: "provider inactive", change: withFile(strings.Replace(oneProvider, "    city: Stockholm\n", "    city: Stockholm\n    active: false\n", 1)),
				want: bokat.CodeBookingOptionChanged, detail: "no longer takes bookings"},
			{name: "hours changed", change: withFile(strings.Replace(oneProvider, `["08:00-17:00"]`, `["10:00-17:00"]`, 1)),
				want: bokat.CodeBookingOptionUnavailable, detail: "working hours"},
			{name: "blocked period", change: withFile(oneProvider + "    blocked: [{start: \"2026-11-24T11:00\", end: \"2026-11-24T13:00\"}]\n"),
				want: bokat.CodeBookingOptionUnavailable, detail: "no longer free"},
			{name: "slot booked", change: func(t *testing.T) func() {
				insertBooking(t, db, "prv_one", "bk_other", local(2026, 11, 24, 11, 30), local(2026, 11, 24, 12, 30))
				return func() { deactivate(t, db, "bk_other") }
			}, want: bokat.CodeBookingOptionUnavailable, detail: "no longer free"},
			{name: "touching booking is fine", change: func(t *testing.T) func() {
				insertBooking(t, db, "prv_one", "bk_touch", local(2026, 11, 24, 12, 0), local(2026, 11, 24, 13, 0))
				return func() { deactivate(t, db, "bk_touch") }
			}},
			{name: "slot started", at: local(2026, 11, 24, 8, 0), want: bokat.CodeBookingOptionUnavailable, detail: "started"},
			{name: "terms version", claims: func(c booking.OptionClaims) booking.OptionClaims { c.TermsVersion += "x"; return c },
				want: bokat.CodeBookingOptionChanged, detail: "terms"},
			{name: "job type without that service", claims: func(c booking.OptionClaims) booking.OptionClaims { c.JobTypeID = "electrical_install_dimmer"; return c },
				want: bokat.CodeBookingOptionChanged, detail: "job type"},
			{name: "unknown provider", claims: func(c booking.OptionClaims) booking.OptionClaims { c.ProviderID = "prv_gone"; return c },
				want: bokat.CodeBookingOptionChanged, detail: "no longer listed"},
			{name: "a day off", claims: func(c booking.OptionClaims) booking.OptionClaims {
				c.SlotStart, c.SlotEnd = local(2026, 12, 24, 8, 0), local(2026, 12, 24, 12, 0) // julafton
				return c
			}, at: local(2026, 12, 20, 9, 0), want: bokat.CodeBookingOptionUnavailable, detail: "day off"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				if tc.change != nil {
					undo := tc.change(t)
					defer undo()
				}
				claims := c
				if tc.claims != nil {
					claims = tc.claims(c)
				}
				at := now.Add(time.Minute)
				if !tc.at.IsZero() {
					at = tc.at
				}
				err := f.revalidate(t, claims, at, "")
				if tc.want == "" {
					if err != nil {
						t.Fatalf("Revalidate: %v, want nil", err)
					}
					return
				}
				e := wantCode(t, err, tc.want)
				if !e.OptionRefreshRequired || !strings.Contains(e.Detail, tc.detail) || !strings.Contains(e.SafeNextStep, "explicit choice") {
					t.Errorf("error = %+v, want option refresh and a detail about %q", e, tc.detail)
				}
			})
		}
		if err := f.revalidate(t, c, now.Add(time.Minute), ""); err != nil {
			t.Fatalf("after undoing every change: %v", err)
		}

		t.Run("rescheduling ignores the booking's own entry", func(t *testing.T) {
			insertBooking(t, db, "prv_one", "bk_self", local(2026, 11, 24, 9, 0), local(2026, 11, 24, 10, 0))
			defer deactivate(t, db, "bk_self")
			wantCode(t, f.revalidate(t, c, now.Add(time.Minute), ""), bokat.CodeBookingOptionUnavailable)
			if err := f.revalidate(t, c, now.Add(time.Minute), "bk_self"); err != nil {
				t.Errorf("RevalidateExcluding(bk_self) = %v, want nil", err)
			}
			wantCode(t, f.revalidate(t, c, now.Add(time.Minute), "bk_elsewhere"), bokat.CodeBookingOptionUnavailable)
		})
	})
}

func deactivate(tb testing.TB, db *sqlstore.DB, bookingID string) {
	tb.Helper()
	err := db.InTx(context.Background(), func(tx *sqlstore.Tx) error {
		_, err := tx.Q().ExecContext(context.Background(), `UPDATE calendar_entries SET active = FALSE WHERE booking_id = $1`, bookingID)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
}
