package followup_test

import (
	"errors"
	"testing"

	"bokat"
	"bokat/internal/followup"
)

func TestCheckConsentRefusesARequestWithoutConsent(t *testing.T) {
	if err := followup.CheckConsent(true); err != nil {
		t.Fatalf("consented: %v", err)
	}
	var e *bokat.Error
	err := followup.CheckConsent(false)
	if !errors.As(err, &e) || e.Code != bokat.CodeConsentRequired || e.Extra["consent_required_before_create"] != true ||
		len(e.Issues) != 1 || e.Issues[0] != "user_consent_confirmed: must be true" || e.SafeNextStep == "" {
		t.Fatalf("without consent: %#v", err)
	}
}
