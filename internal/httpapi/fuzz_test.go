package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"bokat"
)

// fuzzOperations are the JSON operations FuzzDecode sends bodies to, with
// the wire type each handler decodes into.
var fuzzOperations = []struct {
	path string
	dst  func() any
}{
	{"/v1/booking-options", func() any { return new(searchRequestWire) }},
	{"/v1/bookings", func() any { return new(confirmRequestWire) }},
	{"/v1/requests", func() any { return new(createRequestBody) }},
	{"/v1/bookings/bkg_0190c0de0000700080000000000000aa/cancel", func() any { return new(cancelRequestWire) }},
	{"/v1/bookings/bkg_0190c0de0000700080000000000000aa/reschedule", func() any { return new(rescheduleRequestWire) }},
}

// FuzzDecode sends arbitrary bodies and content types through the one
// strict JSON decoder (readJSONBody, then the contract validation and
// strict decoding of decodeBody) for the search, confirm, request, cancel
// and reschedule operations. Properties: it never panics; bad input is a
// *bokat.Error whose code the status table maps to a 4xx, never another
// error; its Problem answer matches the contract; its issues never echo a
// submitted value; and what it accepts is one JSON object of clean text.
func FuzzDecode(f *testing.F) {
	seed := func(op uint8, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(op, "application/json", b)
	}
	// Seeds: the bodies of the API tests, valid and broken.
	option := map[string]any{"booking_option_id": "bo1.test.eyJrIjoidGVzdCJ9.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "terms": map[string]any{"version": "fixed_price_terms_v1:vvs_install_faucet_standard"}}
	seed(0, validSearchBody())
	seed(0, set(validSearchBody(), "details", map[string]any{"window_count": 4, "floor": []any{1, "två"}}))
	seed(0, set(validSearchBody(), "location.postcode", "1234"))
	seed(1, confirmBody(option, "k-1"))
	seed(1, set(confirmBody(option, "k-2"), "customer.email", "eve@[127.0.0.1]"))
	seed(2, validRequestBody())
	seed(2, without(validRequestBody(), "customer.name"))
	seed(3, cancelBody("k-cancel"))
	seed(4, rescheduleBody(option, "k-move"))
	// Text the edge refuses (issue 11, item 1): a NUL, invalid UTF-8, a bare CR.
	seed(0, set(validSearchBody(), "description", "Byta k\u00f6ksblandare\u0000 i l\u00e4genhet"))
	seed(2, set(validRequestBody(), "location.address", "Drottninggatan 1\r"))
	f.Add(uint8(0), "application/json", bytes.Replace(must(json.Marshal(validSearchBody())), []byte("Byta"), []byte("By\xffta"), 1))
	f.Add(uint8(0), "application/json; charset=utf-8", []byte(`{"vertical_id":"vvs","budget_sek":5000.0,"details":{"n":1e400}}`))
	f.Add(uint8(1), "text/plain", []byte(`{}`))
	f.Add(uint8(2), "application/json", []byte(`{"description":"a\u0000b"} {}`))
	f.Add(uint8(3), "application/json", []byte(""))
	f.Add(uint8(4), "application/json", []byte("[1,2,"))
	f.Add(uint8(0), "application/json", []byte("{\"description\":\"\xff\"}"))

	contract, err := loadContract()
	if err != nil {
		f.Fatal(err)
	}
	doc := string(contract.JSON())
	s := &Server{baseURL: "https://api.bokat.example", contract: contract, log: slog.New(slog.NewTextHandler(io.Discard, nil)), now: time.Now}
	f.Fuzz(func(t *testing.T, op uint8, contentType string, body []byte) {
		o := fuzzOperations[int(op)%len(fuzzOperations)]
		r := httptest.NewRequest(http.MethodPost, o.path, bytes.NewReader(body))
		r.Header.Set("Content-Type", contentType)
		info := &requestInfo{id: uuid.NewString(), traceID: traceIDFrom(""), contract: bokat.BookingsContractVersion}
		r = r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info))
		r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, maxBodyBytes)

		dst := o.dst()
		raw, err := readJSONBody(r)
		if err == nil {
			err = s.decodeBody(r, raw, dst)
		}
		if err == nil {
			checkAccepted(t, body)
			return
		}
		var e *bokat.Error
		if !errors.As(err, &e) {
			t.Fatalf("decode error %v (%T) is not a *bokat.Error", err, err)
		}
		if status := statusOf(e.Code); status < 400 || status > 499 || strings.TrimSpace(e.Detail) == "" {
			t.Fatalf("decode error %+v: status %d; want a 4xx with a detail", e, status)
		}
		if mt := strings.ToLower(strings.TrimSpace(strings.Split(contentType, ";")[0])); mt != "application/json" && e.Code != bokat.CodeUnsupportedMediaType {
			t.Fatalf("Content-Type %q answered %s; want unsupported_media_type", contentType, e.Code)
		}
		values, names := stringValues(body)
		for _, v := range values {
			for _, issue := range append([]string{e.Detail}, e.Issues...) {
				// A member name is echoed as its field's path (unknown fields
				// are named); a value that is part of a sent name is no echo.
				if strings.Contains(issue, v) && !strings.Contains(doc, v) && !strings.Contains(names, v) {
					t.Fatalf("issue %q echoes the submitted value %q", issue, v)
				}
			}
		}
		w := httptest.NewRecorder()
		s.writeError(w, r, err)
		if err := contract.ValidateResponse(r.Context(), r, w.Code, w.Header(), w.Body.Bytes()); err != nil {
			t.Fatalf("the Problem answer %d %s does not match the contract: %v", w.Code, w.Body, err)
		}
	})
}

// checkAccepted asserts what an accepted body is: one JSON object whose
// text is valid UTF-8 without control characters other than tab and line
// breaks: the text rule the edge enforces (bokat.CheckText, issue 11
// item 1).
func checkAccepted(t *testing.T, body []byte) {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("accepted body %q is not a JSON object: %v", body, err)
	}
	if !utf8.Valid(body) {
		t.Fatalf("accepted body %q is not valid UTF-8", body)
	}
	values, _ := stringValues(body)
	for _, s := range append(values, objectKeys(v)...) {
		if why := bokat.CheckText(s, true); why != "" {
			t.Fatalf("accepted body %q holds the text %q, which %s", body, s, why)
		}
	}
}

// stringValues returns the string values (not member names) of a JSON
// document at any depth, or nil when it is not JSON.
func stringValues(body []byte) (values []string, names string) {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return nil, ""
	}
	var out []string
	var sent strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			if len(v) >= 4 {
				out = append(out, v)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for k, x := range v {
				sent.WriteString(k + "\x00")
				walk(x)
			}
		}
	}
	walk(v)
	return out, sent.String()
}

// objectKeys returns the member names of v at any depth.
func objectKeys(v any) []string {
	var out []string
	switch v := v.(type) {
	case []any:
		for _, x := range v {
			out = append(out, objectKeys(x)...)
		}
	case map[string]any:
		for k, x := range v {
			out = append(out, k)
			out = append(out, objectKeys(x)...)
		}
	}
	return out
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
