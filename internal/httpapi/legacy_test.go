package httpapi

import (
	"net/http"
	"testing"
)

// TestEveryDeprecatedPathOnSuccessAndOnError: each /api/public path answers
// like its successor on success, in the PublicRequestError shape on error,
// and always with the deprecation headers naming the successor.
func TestEveryDeprecatedPathOnSuccessAndOnError(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.withDemoSupply()
		partner := map[string]string{"X-Service-Requests-Token": e.token}
		opts := e.options(t, faucetSearch())
		booked := e.do(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(opts[0], "legacy-seed"), Header: bearer(e.token)})
		if booked.Status != http.StatusCreated {
			t.Fatalf("seed booking: %d %s", booked.Status, booked.Body)
		}
		bookingID := booked.JSON["booking"].(map[string]any)["id"].(string)
		fresh := e.options(t, faucetSearch())[0] // searched after the seed booking: free
		noConsent := confirmBody(opts[1], "legacy-2")
		delete(noConsent, "user_consent_confirmed")
		requestNoConsent := validRequestBody()
		delete(requestNoConsent, "user_consent_confirmed")
		painting := faucetSearch()
		painting["vertical_id"] = "painting"

		cases := []struct {
			name      string
			ok, fail  request
			okStatus  int
			failCode  string
			failWant  int
			successor string
		}{
			{"capabilities",
				request{Method: "GET", Path: "/api/public/requests/capabilities"},
				request{Method: "GET", Path: "/api/public/requests/capabilities", Header: bearer("bkp_not-a-real-token")},
				200, "unauthorized", 401, "/v1/capabilities"},
			{"booking options",
				request{Method: "POST", Path: "/api/public/booking-options", Body: faucetSearch()},
				request{Method: "POST", Path: "/api/public/booking-options", Body: painting},
				200, "unsupported_vertical", 422, "/v1/booking-options"},
			{"bookings",
				request{Method: "POST", Path: "/api/public/bookings", Body: confirmBody(fresh, "legacy-3"), Header: partner},
				request{Method: "POST", Path: "/api/public/bookings", Body: noConsent, Header: partner},
				201, "consent_required", 400, "/v1/bookings"},
			{"booking status",
				request{Method: "GET", Path: "/api/public/bookings/" + bookingID, Header: partner},
				request{Method: "GET", Path: "/api/public/bookings/" + bookingID},
				200, "unauthorized", 401, "/v1/bookings/" + bookingID},
			{"requests",
				request{Method: "POST", Path: "/api/public/requests", Body: validRequestBody(), Header: partner},
				request{Method: "POST", Path: "/api/public/requests", Body: requestNoConsent, Header: partner},
				201, "consent_required", 400, "/v1/requests"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				ok := e.do(tc.ok)
				if ok.Status != tc.okStatus || ok.JSON["ok"] != true {
					t.Fatalf("success: %d %s", ok.Status, ok.Body)
				}
				checkDeprecated(t, ok, tc.successor)
				fail := e.do(tc.fail)
				checkLegacyError(t, fail, tc.failWant, tc.failCode)
				checkDeprecated(t, fail, tc.successor)
			})
		}
	})
}
