package booking

import (
	"errors"
	"strings"
	"testing"

	"bokat"
)

func TestCheckConsentAsksEachWriteForItsFlagsInOrder(t *testing.T) {
	all := ConsentFlags{UserConsent: true, UserConfirmation: true, TermsAccepted: true}
	without := func(f func(*ConsentFlags)) ConsentFlags { c := all; f(&c); return c }
	tests := []struct {
		op    string
		flags ConsentFlags
		want  bokat.Code
		issue string
	}{
		{OpConfirm, all, "", ""},
		{OpConfirm, ConsentFlags{UserConsent: true, TermsAccepted: true}, "", ""},
		{OpConfirm, ConsentFlags{}, bokat.CodeConsentRequired, "user_consent_confirmed"},
		{OpConfirm, without(func(c *ConsentFlags) { c.TermsAccepted = false }), bokat.CodeTermsNotAccepted, "booking_terms_accepted"},
		{OpCancel, ConsentFlags{UserConfirmation: true}, "", ""},
		{OpCancel, without(func(c *ConsentFlags) { c.UserConfirmation = false }), bokat.CodeConsentRequired, "user_confirmation_confirmed"},
		{OpReschedule, ConsentFlags{UserConfirmation: true, TermsAccepted: true}, "", ""},
		{OpReschedule, ConsentFlags{}, bokat.CodeConsentRequired, "user_confirmation_confirmed"},
		{OpReschedule, without(func(c *ConsentFlags) { c.TermsAccepted = false }), bokat.CodeTermsNotAccepted, "booking_terms_accepted"},
	}
	for _, tc := range tests {
		err := CheckConsent(tc.op, tc.flags)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s %+v: %v, want none", tc.op, tc.flags, err)
			}
			continue
		}
		var e *bokat.Error
		if !errors.As(err, &e) || e.Code != tc.want || len(e.Issues) != 1 || !strings.HasPrefix(e.Issues[0], tc.issue+": ") {
			t.Errorf("%s %+v: %v, want %s with one issue on %s", tc.op, tc.flags, err, tc.want, tc.issue)
		}
	}
	var e *bokat.Error
	if err := CheckConsent(OpReschedule, ConsentFlags{}); !errors.As(err, &e) || !strings.Contains(e.Detail, "reschedule the booking") {
		t.Errorf("reschedule without confirmation: %v, want a detail naming the reschedule", err)
	}
	if err := CheckConsent("bookings.unknown", all); err == nil || errors.As(err, &e) {
		t.Errorf("unknown operation: %v, want an internal error", err)
	}
}
