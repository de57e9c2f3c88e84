package web

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestRefusedAnswersTheSitesRefusalsAndFailsTheRest(t *testing.T) {
	t.Parallel()
	errGone, errBusy := errors.New("gone"), errors.New("busy")
	for name, tc := range map[string]struct {
		err         error
		refused     bool
		status      int
		code, shown string
		logged      string
	}{
		"no error":                  {err: nil},
		"a refusal":                 {err: errGone, refused: true, status: http.StatusGone, code: "gone", shown: "Borta"},
		"a wrapped refusal":         {err: fmt.Errorf("read: %w", errBusy), refused: true, status: http.StatusConflict, code: "busy", shown: "Upptagen"},
		"the first match":           {err: errors.Join(errBusy, errGone), refused: true, status: http.StatusGone, code: "gone", shown: "Borta"},
		"anything else is internal": {err: errors.New("disk on fire"), refused: true, status: http.StatusServiceUnavailable, code: "server_error", shown: "Ett tekniskt fel uppstod", logged: "test page: open thing"},
		"internal, wrapped or not":  {err: fmt.Errorf("x: %w", errors.New("disk on fire")), refused: true, status: http.StatusServiceUnavailable, code: "server_error", shown: "Ett tekniskt fel uppstod", logged: "test page: open thing"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			l, err := NewLayout("/t/static/site.css", "/t/", Texts{SV: {"err_gone": "Borta", "err_busy": "Upptagen"}, EN: {}},
				nil, slog.New(slog.NewTextHandler(&logs, nil)))
			if err != nil {
				t.Fatal(err)
			}
			s := &Site[CodeTx]{Layout: l, LogName: "test page", Refusals: []Refusal{
				{Err: errGone, Status: http.StatusGone, MessageKey: "err_gone", Code: "gone"},
				{Err: errBusy, Status: http.StatusConflict, MessageKey: "err_busy", Code: "busy"},
			}}
			rec := httptest.NewRecorder()
			got := s.Refused(rec, httptest.NewRequest("GET", "/t/thing", nil), "open thing", tc.err)
			if got != tc.refused {
				t.Fatalf("Refused = %v, want %v", got, tc.refused)
			}
			if !tc.refused {
				if rec.Body.Len() != 0 || logs.Len() != 0 {
					t.Fatalf("no error wrote %q and logged %q", rec.Body.String(), logs.String())
				}
				return
			}
			body := rec.Body.String()
			if rec.Code != tc.status || !strings.Contains(body, "<code>"+tc.code+"</code>") || !strings.Contains(body, tc.shown) {
				t.Errorf("status %d, want %d with code %s and %q:\n%s", rec.Code, tc.status, tc.code, tc.shown, body)
			}
			if strings.Contains(body, "disk on fire") {
				t.Errorf("the error page shows the internal error:\n%s", body)
			}
			switch {
			case tc.logged == "" && logs.Len() != 0:
				t.Errorf("a refusal was logged: %s", logs.String())
			case tc.logged != "" && (!strings.Contains(logs.String(), "msg=\""+tc.logged+"\"") || !strings.Contains(logs.String(), "disk on fire")):
				t.Errorf("log %q, want %q with the error", logs.String(), tc.logged)
			}
		})
	}
}
