package booking

import (
	"errors"
	"strings"
	"testing"
	"time"

	"bokat"
)

func TestTermsAcceptedAtMustFallBetweenIssueAndNow(t *testing.T) {
	t.Parallel()
	issued := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	now := issued.Add(10 * time.Minute)
	tests := []struct {
		name string
		at   time.Time
		ok   bool
	}{
		{"at issue", issued, true},
		{"between", issued.Add(3 * time.Minute), true},
		{"at now", now, true},
		{"clock skew before issue", issued.Add(-TermsClockSkew), true},
		{"clock skew after now", now.Add(TermsClockSkew), true},
		{"just too early", issued.Add(-TermsClockSkew - time.Second), false},
		{"just too late", now.Add(TermsClockSkew + time.Second), false},
		{"1970", time.Unix(0, 0), false},
		{"year 1", time.Time{}, false},
		{"9999", time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), false},
	}
	for _, tc := range tests {
		err := checkTermsAcceptedAt(tc.at, issued, now)
		if tc.ok && err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if !tc.ok {
			var e *bokat.Error
			if !errors.As(err, &e) || e.Code != bokat.CodeValidationFailed || len(e.Issues) != 1 ||
				!strings.HasPrefix(e.Issues[0], "booking_terms_accepted_at: ") {
				t.Errorf("%s: err = %v, want validation_failed naming booking_terms_accepted_at", tc.name, err)
			}
		}
	}
}
