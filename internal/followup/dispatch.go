package followup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"bokat"
)

// Bounds of the caller's details shown to providers.
const (
	maxDetailLines = 20
	maxDetailValue = 200
)

// NotificationRequest returns a stored request as its provider messages
// show it: the job, where and when, the customer's contact data (handed
// over with the customer's consent: that is what a request is for), and
// each candidate provider with its contact data and delivery status. It
// returns an error wrapping bokat.ErrNotFound for an unknown request. A
// candidate no longer in the supply comes back without an e-mail address.
func (s *Service) NotificationRequest(ctx context.Context, requestID string) (bokat.RequestNotice, error) {
	r, err := s.db.FollowUpRequest(ctx, requestID)
	if err != nil {
		return bokat.RequestNotice{}, fmt.Errorf("request %s: %w", requestID, err)
	}
	var (
		cust Customer
		loc  Location
		tim  Timing
	)
	for _, part := range []struct {
		name string
		raw  []byte
		into any
	}{{"customer", r.CustomerJSON, &cust}, {"location", r.LocationJSON, &loc}, {"timing", r.TimingJSON, &tim}} {
		if err := json.Unmarshal(part.raw, part.into); err != nil {
			return bokat.RequestNotice{}, fmt.Errorf("request %s: stored %s is not readable", requestID, part.name)
		}
	}
	out := bokat.RequestNotice{
		ID: r.ID, CreatedAt: r.CreatedAt, Description: r.Description, JobTypeLabelSV: r.JobTypeID,
		LocationInput: loc.Input, Address: loc.Address, Postcode: r.Postcode,
		PreferredTimeText: tim.PreferredTimeText, Urgency: tim.Urgency, BudgetSEK: r.BudgetSEK,
		CustomerNextStep: r.CustomerNextStep, Details: detailLines(r.DetailsJSON),
		CustomerName: customerName(cust), CustomerPhone: cust.Phone, CustomerEmail: cust.Email,
	}
	if v, ok := s.cat.Vertical(r.VerticalID); ok {
		out.VerticalLabelSV = v.LabelSV
	}
	if jt, ok := s.cat.JobType(r.VerticalID, r.JobTypeID); ok {
		out.JobTypeLabelSV = jt.LabelSV
	}
	if out.Postcode == "" {
		out.Postcode = loc.Postcode
	}
	for _, c := range r.Candidates {
		cand := bokat.NoticeCandidate{ProviderID: c.ProviderID, Status: c.NotificationStatus}
		contact, err := s.db.ProviderContact(ctx, c.ProviderID)
		switch {
		case errors.Is(err, bokat.ErrNotFound):
		case err != nil:
			return bokat.RequestNotice{}, fmt.Errorf("request %s: %w", requestID, err)
		default:
			cand.Name, cand.Email, cand.Phone, cand.Active = contact.Name, contact.Email, contact.Phone, contact.Active
		}
		out.Candidates = append(out.Candidates, cand)
	}
	return out, nil
}

func customerName(c Customer) string {
	if n := strings.TrimSpace(c.Name); n != "" {
		return n
	}
	return strings.TrimSpace(c.FirstName + " " + c.LastName)
}

// detailLines renders the caller's details object as "key: value" lines,
// sorted by key: text, numbers and true/false, and lists of them; nested
// objects are left out. Values are cut to a readable length.
func detailLines(raw []byte) []string {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || len(m) == 0 {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		v, ok := detailValue(m[k])
		if !ok || v == "" {
			continue
		}
		if r := []rune(v); len(r) > maxDetailValue {
			v = string(r[:maxDetailValue]) + "…"
		}
		out = append(out, k+": "+v)
		if len(out) == maxDetailLines {
			break
		}
	}
	return out
}

func detailValue(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return strings.Join(strings.Fields(x), " "), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case bool:
		if x {
			return "ja", true
		}
		return "nej", true
	case []any:
		var parts []string
		for _, e := range x {
			s, ok := detailValue(e)
			if _, nested := e.([]any); !ok || nested {
				continue
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, ", "), len(parts) > 0
	}
	return "", false
}
