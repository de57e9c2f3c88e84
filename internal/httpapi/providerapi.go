package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/booking"
	"bokat/internal/calsync"
	"bokat/internal/catalog"
	"bokat/internal/idem"
	"bokat/internal/provider"
	"bokat/internal/schedule"
	"bokat/internal/supply"
)

// The provider API (tag "Provider" in api/openapi.yaml): a provider's own
// system, with a provider token, reads its bookings, acknowledges, flags
// and cancels them, blocks time, keeps its hours, prices and postcodes and
// its own calendars, through the same use cases as the provider pages. Writes are keyed
// (Idempotency-Key header or idempotency_key in the body).

// Idempotency operations of the provider API.
const (
	opProviderAcknowledge = "provider.bookings.acknowledge"
	opProviderFlag        = "provider.bookings.flag"
	opProviderCancel      = "provider.bookings.cancel"
	opProviderAddBlock    = "provider.blocks.add"
	opProviderRemoveBlock = "provider.blocks.remove"
	opProviderHours       = "provider.hours.put"
	opProviderPrices      = "provider.prices.put"
	opProviderPostcodes   = "provider.postcodes.put"
	opProviderPause       = "provider.pause.put"
	// Calendars.
	opProviderAddCalendar    = "provider.calendars.add"
	opProviderCalendarRule   = "provider.calendars.rule"
	opProviderRemoveCalendar = "provider.calendars.remove"
)

// providerUser is the user a request's provider token acts as; any other
// principal is refused (a development principal acts for no provider).
func (s *Server) providerUser(r *http.Request) (provider.User, error) {
	if s.providers == nil {
		return provider.User{}, bokat.Errorf(bokat.CodeNotFound, "The provider API is not served here.")
	}
	p := auth.PrincipalFrom(r.Context())
	if p.Kind != bokat.PrincipalProvider || p.ProviderID == "" {
		return provider.User{}, bokat.Errorf(bokat.CodeForbidden, "The provider API needs a provider token.")
	}
	return provider.TokenUser(p), nil
}

// providerError maps a provider use case's refusal to its Problem.
func providerError(err error) error {
	var way *provider.BookingInTheWay
	switch {
	case err == nil:
		return nil
	case errors.As(err, &way):
		return &bokat.Error{Code: bokat.CodeValidationFailed,
			Detail: fmt.Sprintf("The block overlaps the confirmed booking %s; cancel or move it first.", way.BookingID),
			Issues: []string{"booking_in_the_way: " + way.BookingID}}
	case errors.Is(err, provider.ErrInvalid):
		e := &bokat.Error{Code: bokat.CodeValidationFailed, Detail: "The change breaks the supply rules; see issues."}
		if problems, ok := provider.IsInvalid(err); ok {
			for _, p := range problems {
				e.Issues = append(e.Issues, supply.ProblemText([]supply.Problem{p}))
			}
		} else {
			e.Issues = []string{strings.TrimPrefix(err.Error(), "invalid: ")}
		}
		return e
	case errors.Is(err, provider.ErrNotConfirmed):
		return bokat.Errorf(bokat.CodeBookingNotActive, "The booking is cancelled.")
	case errors.Is(err, provider.ErrForbidden):
		return bokat.Errorf(bokat.CodeForbidden, "Not allowed for this token.")
	case errors.Is(err, bokat.ErrNotFound):
		return bokat.Errorf(bokat.CodeNotFound, "No such object of this provider.")
	}
	return err
}

// Wire types.

type providerBookingWire struct {
	BookingID      string `json:"booking_id"`
	Status         string `json:"status"`
	SlotStartAt    string `json:"slot_start_at"`
	SlotEndAt      string `json:"slot_end_at"`
	ServiceID      string `json:"service_id"`
	Postcode       string `json:"postcode"`
	PriceSEK       int64  `json:"price_sek"`
	AcknowledgedAt string `json:"acknowledged_at,omitempty"`
}

type providerCustomerWire struct {
	Name               string `json:"name,omitempty"`
	Phone              string `json:"phone,omitempty"`
	Email              string `json:"email,omitempty"`
	ServiceAddress     string `json:"service_address,omitempty"`
	DestinationAddress string `json:"destination_address,omitempty"`
}

func providerBookingOf(b provider.Booking) providerBookingWire {
	w := providerBookingWire{BookingID: b.ID, Status: string(b.Status), SlotStartAt: booking.WireTime(b.SlotStart),
		SlotEndAt: booking.WireTime(b.SlotEnd), ServiceID: b.ServiceID, Postcode: b.Postcode, PriceSEK: b.PriceSEK}
	if !b.AcknowledgedAt.IsZero() {
		w.AcknowledgedAt = booking.WireTime(b.AcknowledgedAt)
	}
	return w
}

type providerKeyOnly struct {
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

func (in *providerKeyOnly) takeIdempotencyKey() string { return take(&in.IdempotencyKey) }

type providerFlagWire struct {
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	Note           string `json:"note"`
}

func (in *providerFlagWire) takeIdempotencyKey() string { return take(&in.IdempotencyKey) }

type providerCancelWire struct {
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	Reason         string `json:"reason"`
	Notes          string `json:"notes,omitempty"`
}

func (in *providerCancelWire) takeIdempotencyKey() string { return take(&in.IdempotencyKey) }

type providerBlockWire struct {
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	Kind           string `json:"kind"`
	From           string `json:"from"`
	To             string `json:"to,omitempty"`
	Start          string `json:"start,omitempty"`
	End            string `json:"end,omitempty"`
	Weeks          int    `json:"weeks,omitempty"`
	Note           string `json:"note,omitempty"`
}

func (in *providerBlockWire) takeIdempotencyKey() string { return take(&in.IdempotencyKey) }

type blockOutWire struct {
	BlockID     string   `json:"block_id"`
	Kind        string   `json:"kind"`
	Weeks       int      `json:"weeks"`
	StartAt     string   `json:"start_at"`
	EndAt       string   `json:"end_at"`
	Note        string   `json:"note"`
	FromFile    bool     `json:"from_supply_file"`
	Occurrences []string `json:"occurrences"`
}

func blockOf(b provider.Block) blockOutWire {
	kind := "hours"
	if b.WholeDays {
		kind = "days"
	}
	w := blockOutWire{BlockID: b.ID, Kind: kind, Weeks: max(b.Weeks, 1), StartAt: booking.WireTime(b.Start),
		EndAt: booking.WireTime(b.End), Note: b.Note, FromFile: b.FromFile, Occurrences: []string{}}
	for _, iv := range b.Occurrences() {
		w.Occurrences = append(w.Occurrences, booking.WireTime(iv.Start)+"/"+booking.WireTime(iv.End))
	}
	return w
}

type providerDayWire struct {
	Date   string   `json:"date"`
	Closed bool     `json:"closed,omitempty"`
	Ranges []string `json:"ranges,omitempty"`
}

type providerHoursWire struct {
	IdempotencyKey   string              `json:"idempotency_key,omitempty"`
	Weekly           map[string][]string `json:"weekly"`
	MinNoticeMinutes int                 `json:"min_notice_minutes"`
	HorizonDays      int                 `json:"horizon_days"`
	Dates            *[]providerDayWire  `json:"dates,omitempty"`
}

func (in *providerHoursWire) takeIdempotencyKey() string { return take(&in.IdempotencyKey) }

type providerHoursOutWire struct {
	ProviderID       string              `json:"provider_id"`
	Weekly           map[string][]string `json:"weekly"`
	MinNoticeMinutes int                 `json:"min_notice_minutes"`
	HorizonDays      int                 `json:"horizon_days"`
	Dates            []providerDayWire   `json:"dates"`
	PausedUntil      *string             `json:"paused_until"`
}

func hoursOf(p bokat.ProviderSupply) providerHoursOutWire {
	out := providerHoursOutWire{ProviderID: p.ID, Weekly: map[string][]string{}, MinNoticeMinutes: p.MinNoticeMinutes,
		HorizonDays: p.HorizonDays, Dates: []providerDayWire{}}
	for k, v := range supply.HoursEntries(p.Hours) {
		for _, r := range v.([]any) {
			out.Weekly[k] = append(out.Weekly[k], r.(string))
		}
	}
	for _, d := range p.DayHours {
		n := len(out.Dates)
		if n == 0 || out.Dates[n-1].Date != d.Day {
			out.Dates = append(out.Dates, providerDayWire{Date: d.Day})
			n++
		}
		if d.Closed() {
			out.Dates[n-1].Closed = true
		} else {
			out.Dates[n-1].Ranges = append(out.Dates[n-1].Ranges,
				strings.ReplaceAll(schedule.ClockRange{Start: d.StartMinute, End: d.EndMinute}.String(), "–", "-"))
		}
	}
	if !p.PausedUntil.IsZero() {
		s := schedule.DateOf(p.PausedUntil).String()
		out.PausedUntil = &s
	}
	return out
}

type providerPricesWire struct {
	IdempotencyKey string           `json:"idempotency_key,omitempty"`
	Services       []map[string]any `json:"services"`
}

func (in *providerPricesWire) takeIdempotencyKey() string { return take(&in.IdempotencyKey) }

type providerPostcodesWire struct {
	IdempotencyKey string   `json:"idempotency_key,omitempty"`
	Postcodes      []string `json:"postcodes"`
}

func (in *providerPostcodesWire) takeIdempotencyKey() string { return take(&in.IdempotencyKey) }

type providerPauseWire struct {
	IdempotencyKey string  `json:"idempotency_key,omitempty"`
	Until          *string `json:"until"`
}

func (in *providerPauseWire) takeIdempotencyKey() string { return take(&in.IdempotencyKey) }

// Reads.

// providerRead serves a read of the provider API: the token's user, the
// use case's answer, its wire body.
func providerRead[T any](s *Server, w http.ResponseWriter, r *http.Request,
	read func(ctx context.Context, u provider.User) (T, error), body func(T) any) error {
	u, err := s.providerUser(r)
	if err != nil {
		return err
	}
	v, err := read(r.Context(), u)
	if err != nil {
		return providerError(err)
	}
	s.writeJSON(w, r, http.StatusOK, body(v))
	return nil
}

// wireList maps a use case's list to its wire items (an empty list, never
// null).
func wireList[T, W any](list []T, f func(T) W) []W {
	out := make([]W, 0, len(list))
	for _, x := range list {
		out = append(out, f(x))
	}
	return out
}

// providerBookingsPage is the most bookings one answer lists.
const providerBookingsPage = 200

// handleProviderBookings lists a page of the provider's bookings; more
// follow when has_more, from next_after passed back as after.
func (s *Server) handleProviderBookings(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	past := q.Get("view") == "past"
	return providerRead(s, w, r, func(ctx context.Context, u provider.User) (provider.BookingPage, error) {
		return s.providers.Service.Bookings(ctx, u, past, q.Get("after"), providerBookingsPage)
	}, func(page provider.BookingPage) any {
		return struct {
			OK        bool                  `json:"ok"`
			Bookings  []providerBookingWire `json:"bookings"`
			HasMore   bool                  `json:"has_more"`
			NextAfter string                `json:"next_after,omitempty"`
		}{true, wireList(page.Bookings, providerBookingOf), page.Next != "", page.Next}
	})
}

func (s *Server) handleProviderBooking(w http.ResponseWriter, r *http.Request) error {
	return providerRead(s, w, r, func(ctx context.Context, u provider.User) (provider.BookingView, error) {
		return s.providers.Service.Booking(ctx, u, r.PathValue("booking_id"))
	}, func(v provider.BookingView) any {
		var customer *providerCustomerWire
		if v.ContactShown {
			c := v.Contact
			name := c.Name
			if name == "" {
				name = strings.TrimSpace(c.FirstName + " " + c.LastName)
			}
			customer = &providerCustomerWire{Name: name, Phone: c.Phone, Email: c.Email, ServiceAddress: c.ServiceAddress,
				DestinationAddress: c.DestinationAddress}
		}
		return struct {
			OK       bool                  `json:"ok"`
			Booking  providerBookingWire   `json:"booking"`
			Customer *providerCustomerWire `json:"customer"`
		}{true, providerBookingOf(v.Booking), customer}
	})
}

func (s *Server) handleProviderBlocks(w http.ResponseWriter, r *http.Request) error {
	return providerRead(s, w, r, func(ctx context.Context, u provider.User) ([]provider.Block, error) {
		return s.providers.Supplies.Blocks(ctx, u)
	}, func(list []provider.Block) any {
		return struct {
			OK     bool           `json:"ok"`
			Blocks []blockOutWire `json:"blocks"`
		}{true, wireList(list, blockOf)}
	})
}

func (s *Server) handleProviderHours(w http.ResponseWriter, r *http.Request) error {
	return providerRead(s, w, r, func(ctx context.Context, u provider.User) (bokat.ProviderSupply, error) {
		return s.providers.Supplies.Supply(ctx, u)
	}, func(p bokat.ProviderSupply) any { return okWith(hoursOf(p)) })
}

func okWith(v any) map[string]any {
	raw, _ := json.Marshal(v)
	m := map[string]any{}
	_ = json.Unmarshal(raw, &m)
	m["ok"] = true
	return m
}

// Writes.

// providerWrite serves one keyed write of the provider API: the body is
// decoded into B, the use case runs through the keyed use cases, and render
// answers from inside its transaction.
func providerWrite[B any, PB interface {
	*B
	keyedBody
}](s *Server, w http.ResponseWriter, r *http.Request, op, objectID string, render provider.Render,
	run func(k *provider.Keyed, u provider.User, in *B) error) error {
	u, err := s.providerUser(r)
	if err != nil {
		return err
	}
	return serveKeyed[B, PB](s, w, r, keyedWrite{operation: op, bookingID: objectID, headerKey: true, status: http.StatusOK, replayInBody: true},
		func(_ bokat.Principal, in *B, key idem.Key, fp string) (idem.Outcome, bool, error) {
			k := s.providers.Keyed(key, fp, render)
			out, replay, err := k.Result(run(k, u, in))
			return out, replay, providerError(err)
		})
}

// renderBooking answers a booking write with the booking as it stands.
func renderBooking(u provider.User, id string) provider.Render {
	return func(ctx context.Context, tx provider.SupplyTx) (idem.Outcome, error) {
		b, err := tx.ProviderBookingForUpdate(ctx, u.ProviderID, id)
		if err != nil {
			return idem.Outcome{}, err
		}
		raw, err := json.Marshal(struct {
			OK      bool                `json:"ok"`
			Booking providerBookingWire `json:"booking"`
		}{true, providerBookingOf(b)})
		return idem.Outcome{Body: raw, ResourceID: b.ID}, err
	}
}

// renderHours answers a supply write with the provider's hours.
func renderHours(u provider.User) provider.Render {
	return func(ctx context.Context, tx provider.SupplyTx) (idem.Outcome, error) {
		p, err := tx.ProviderSupply(ctx, u.ProviderID)
		if err != nil {
			return idem.Outcome{}, err
		}
		raw, err := json.Marshal(okWith(hoursOf(p)))
		return idem.Outcome{Body: raw}, err
	}
}

// renderSupply answers a prices or postcodes write with what is stored.
func renderSupply(u provider.User, cat *catalog.Catalog) provider.Render {
	return func(ctx context.Context, tx provider.SupplyTx) (idem.Outcome, error) {
		p, err := tx.ProviderSupply(ctx, u.ProviderID)
		if err != nil {
			return idem.Outcome{}, err
		}
		raw, err := json.Marshal(supplyBody(p, cat))
		return idem.Outcome{Body: raw}, err
	}
}

// supplyBody is the provider's services (in the supply file's grammar,
// labour_percent included when stated) and postcodes.
func supplyBody(p bokat.ProviderSupply, cat *catalog.Catalog) map[string]any {
	services := []any{}
	for _, sv := range p.Services {
		services = append(services, supply.ServiceEntry(sv, cat))
	}
	return map[string]any{"ok": true, "provider_id": p.ID, "services": services,
		"postcodes": supply.PostcodeEntries(p.Postcodes)}
}

// handleProviderPrices answers the services the provider offers, their
// prices and labour shares, and its postcodes.
func (s *Server) handleProviderPrices(w http.ResponseWriter, r *http.Request) error {
	return providerRead(s, w, r, func(ctx context.Context, u provider.User) (bokat.ProviderSupply, error) {
		return s.providers.Supplies.Supply(ctx, u)
	}, func(p bokat.ProviderSupply) any { return supplyBody(p, s.catalog) })
}

func (s *Server) handleProviderAcknowledge(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("booking_id")
	u, _ := s.providerUser(r)
	return providerWrite[providerKeyOnly](s, w, r, opProviderAcknowledge, id, renderBooking(u, id),
		func(k *provider.Keyed, u provider.User, _ *providerKeyOnly) error {
			_, err := k.Service.Acknowledge(r.Context(), u, id)
			return err
		})
}

func (s *Server) handleProviderFlag(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("booking_id")
	u, _ := s.providerUser(r)
	return providerWrite[providerFlagWire](s, w, r, opProviderFlag, id, renderBooking(u, id),
		func(k *provider.Keyed, u provider.User, in *providerFlagWire) error {
			return k.Service.Flag(r.Context(), u, id, in.Note)
		})
}

func (s *Server) handleProviderCancel(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("booking_id")
	u, _ := s.providerUser(r)
	return providerWrite[providerCancelWire](s, w, r, opProviderCancel, id, renderBooking(u, id),
		func(k *provider.Keyed, u provider.User, in *providerCancelWire) error {
			return k.Service.Cancel(r.Context(), u, id, in.Reason, in.Notes)
		})
}

func (s *Server) handleProviderAddBlock(w http.ResponseWriter, r *http.Request) error {
	var planned provider.Block
	render := func(ctx context.Context, tx provider.SupplyTx) (idem.Outcome, error) {
		raw, err := json.Marshal(struct {
			OK    bool         `json:"ok"`
			Block blockOutWire `json:"block"`
		}{true, blockOf(planned)})
		return idem.Outcome{Body: raw, ResourceID: planned.ID}, err
	}
	return providerWrite[providerBlockWire](s, w, r, opProviderAddBlock, "", render,
		func(k *provider.Keyed, u provider.User, in *providerBlockWire) error {
			b, err := k.Supply.PlanBlock(u, provider.BlockInput{WholeDays: in.Kind == "days", From: in.From, To: in.To,
				StartTime: in.Start, EndTime: in.End, Weeks: in.Weeks, Note: in.Note})
			if err != nil {
				return err
			}
			planned = b
			_, err = k.Supply.AddPlannedBlock(r.Context(), u, b)
			return err
		})
}

func (s *Server) handleProviderRemoveBlock(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("block_id")
	render := func(ctx context.Context, tx provider.SupplyTx) (idem.Outcome, error) {
		raw, err := json.Marshal(struct {
			OK      bool   `json:"ok"`
			BlockID string `json:"block_id"`
			Removed bool   `json:"removed"`
		}{true, id, true})
		return idem.Outcome{Body: raw}, err
	}
	return providerWrite[providerKeyOnly](s, w, r, opProviderRemoveBlock, id, render,
		func(k *provider.Keyed, u provider.User, _ *providerKeyOnly) error {
			return k.Supply.RemoveBlock(r.Context(), u, id)
		})
}

func (s *Server) handleProviderPutHours(w http.ResponseWriter, r *http.Request) error {
	u, _ := s.providerUser(r)
	return providerWrite[providerHoursWire](s, w, r, opProviderHours, "", renderHours(u),
		func(k *provider.Keyed, u provider.User, in *providerHoursWire) error {
			var days *[]provider.DayInput
			if in.Dates != nil {
				list := make([]provider.DayInput, 0, len(*in.Dates))
				for _, d := range *in.Dates {
					list = append(list, provider.DayInput{Date: d.Date, Closed: d.Closed, Ranges: d.Ranges})
				}
				days = &list
			}
			return k.Supply.PutHours(r.Context(), u, provider.HoursInput{Weekly: in.Weekly,
				MinNoticeMinutes: in.MinNoticeMinutes, HorizonDays: in.HorizonDays, Days: days})
		})
}

func (s *Server) handleProviderPutPrices(w http.ResponseWriter, r *http.Request) error {
	u, _ := s.providerUser(r)
	return providerWrite[providerPricesWire](s, w, r, opProviderPrices, "", renderSupply(u, s.catalog),
		func(k *provider.Keyed, u provider.User, in *providerPricesWire) error {
			return k.Supply.PutPrices(r.Context(), u, in.Services)
		})
}

func (s *Server) handleProviderPutPostcodes(w http.ResponseWriter, r *http.Request) error {
	u, _ := s.providerUser(r)
	return providerWrite[providerPostcodesWire](s, w, r, opProviderPostcodes, "", renderSupply(u, s.catalog),
		func(k *provider.Keyed, u provider.User, in *providerPostcodesWire) error {
			return k.Supply.PutPostcodes(r.Context(), u, in.Postcodes)
		})
}

func (s *Server) handleProviderPause(w http.ResponseWriter, r *http.Request) error {
	u, _ := s.providerUser(r)
	return providerWrite[providerPauseWire](s, w, r, opProviderPause, "", renderHours(u),
		func(k *provider.Keyed, u provider.User, in *providerPauseWire) error {
			until := ""
			if in.Until != nil {
				until = *in.Until
			}
			return k.Supply.Pause(r.Context(), u, until)
		})
}

// Calendars: the provider's own calendar subscriptions and their
// conflicts with its bookings.

type providerCalendarWire struct {
	FeedID        string  `json:"feed_id"`
	Label         string  `json:"label"`
	Rule          string  `json:"rule"`
	Source        string  `json:"source"`
	CreatedAt     string  `json:"created_at"`
	LastAttemptAt *string `json:"last_attempt_at"`
	LastSyncedAt  *string `json:"last_synced_at"`
	LastError     *string `json:"last_error"`
	FailingSince  *string `json:"failing_since"`
	Stale         bool    `json:"stale"`
	BusyCount     int     `json:"busy_count"`
}

// wireTimeOrNull is an instant on the wire, or null when zero.
func wireTimeOrNull(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := booking.WireTime(t)
	return &s
}

// calendarOf is a feed on the wire: never its address.
func calendarOf(f calsync.Feed, now time.Time, staleAfter time.Duration) providerCalendarWire {
	w := providerCalendarWire{FeedID: f.ID, Label: f.Label, Rule: string(f.Rule), Source: f.Source,
		CreatedAt: booking.WireTime(f.CreatedAt), LastAttemptAt: wireTimeOrNull(f.LastAttemptAt),
		LastSyncedAt: wireTimeOrNull(f.LastSyncedAt), FailingSince: wireTimeOrNull(f.FailingSince),
		Stale: f.Stale(now, staleAfter), BusyCount: f.BusyCount}
	if f.LastError != "" {
		w.LastError = &f.LastError
	}
	return w
}

type providerConflictWire struct {
	BookingID   string `json:"booking_id"`
	SlotStartAt string `json:"slot_start_at"`
	FeedID      string `json:"feed_id"`
	DetectedAt  string `json:"detected_at"`
}

func conflictOf(c calsync.Conflict) providerConflictWire {
	return providerConflictWire{BookingID: c.BookingID, SlotStartAt: booking.WireTime(c.SlotStart), FeedID: c.FeedID,
		DetectedAt: booking.WireTime(c.DetectedAt)}
}

type providerCalendarAddWire struct {
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	URL            string `json:"url"`
	Rule           string `json:"rule,omitempty"`
}

func (in *providerCalendarAddWire) takeIdempotencyKey() string { return take(&in.IdempotencyKey) }

type providerCalendarRuleWire struct {
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	Rule           string `json:"rule"`
}

func (in *providerCalendarRuleWire) takeIdempotencyKey() string { return take(&in.IdempotencyKey) }

// calendars returns the calendar use cases, or a 404 Problem when the API
// keeps none.
func (s *Server) calendars() (*provider.Calendars, error) {
	if s.providers == nil || s.providers.Calendars == nil {
		return nil, bokat.Errorf(bokat.CodeNotFound, "Provider calendars are not served here.")
	}
	return s.providers.Calendars, nil
}

func (s *Server) handleProviderCalendars(w http.ResponseWriter, r *http.Request) error {
	cals, err := s.calendars()
	if err != nil {
		return err
	}
	return providerRead(s, w, r, cals.List, func(list []calsync.Feed) any {
		now := s.now()
		return struct {
			OK        bool                   `json:"ok"`
			Calendars []providerCalendarWire `json:"calendars"`
		}{true, wireList(list, func(f calsync.Feed) providerCalendarWire { return calendarOf(f, now, cals.StaleAfter()) })}
	})
}

func (s *Server) handleProviderCalendarConflicts(w http.ResponseWriter, r *http.Request) error {
	cals, err := s.calendars()
	if err != nil {
		return err
	}
	return providerRead(s, w, r, cals.Conflicts, func(list []calsync.Conflict) any {
		return struct {
			OK        bool                   `json:"ok"`
			Conflicts []providerConflictWire `json:"conflicts"`
		}{true, wireList(list, conflictOf)}
	})
}

// renderCalendar answers a calendar write with the feed it stored, which
// the keyed write's use cases recorded (*k once run sets).
func (s *Server) renderCalendar(k **provider.Keyed) provider.Render {
	return func(ctx context.Context, tx provider.SupplyTx) (idem.Outcome, error) {
		cals := (*k).Calendars
		f := cals.Written()
		raw, err := json.Marshal(struct {
			OK       bool                 `json:"ok"`
			Calendar providerCalendarWire `json:"calendar"`
		}{true, calendarOf(f, s.now(), cals.StaleAfter())})
		return idem.Outcome{Body: raw, ResourceID: f.ID}, err
	}
}

func (s *Server) handleProviderAddCalendar(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.calendars(); err != nil {
		return err
	}
	var keyed *provider.Keyed
	return providerWrite[providerCalendarAddWire](s, w, r, opProviderAddCalendar, "", s.renderCalendar(&keyed),
		func(k *provider.Keyed, u provider.User, in *providerCalendarAddWire) error {
			keyed = k
			_, err := k.Calendars.Add(r.Context(), u, in.URL, calsync.Rule(in.Rule))
			return err
		})
}

func (s *Server) handleProviderCalendarRule(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.calendars(); err != nil {
		return err
	}
	id := r.PathValue("feed_id")
	var keyed *provider.Keyed
	return providerWrite[providerCalendarRuleWire](s, w, r, opProviderCalendarRule, id, s.renderCalendar(&keyed),
		func(k *provider.Keyed, u provider.User, in *providerCalendarRuleWire) error {
			keyed = k
			_, err := k.Calendars.SetRule(r.Context(), u, id, calsync.Rule(in.Rule))
			return err
		})
}

func (s *Server) handleProviderRemoveCalendar(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.calendars(); err != nil {
		return err
	}
	// DELETE needs no body: none reads as an empty object.
	if r.ContentLength == 0 && r.Header.Get("Content-Type") == "" {
		r.Body = io.NopCloser(strings.NewReader("{}"))
		r.Header.Set("Content-Type", "application/json")
	}
	id := r.PathValue("feed_id")
	render := func(ctx context.Context, tx provider.SupplyTx) (idem.Outcome, error) {
		raw, err := json.Marshal(struct {
			OK      bool   `json:"ok"`
			FeedID  string `json:"feed_id"`
			Removed bool   `json:"removed"`
		}{true, id, true})
		return idem.Outcome{Body: raw}, err
	}
	return providerWrite[providerKeyOnly](s, w, r, opProviderRemoveCalendar, id, render,
		func(k *provider.Keyed, u provider.User, _ *providerKeyOnly) error {
			return k.Calendars.Remove(r.Context(), u, id)
		})
}
