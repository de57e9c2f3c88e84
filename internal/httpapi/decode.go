package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"time"

	"bokat"
)

// decode is the one strict JSON decoder: it requires Content-Type
// application/json, a body of at most maxBodyBytes holding exactly one JSON
// value, validates it against the OpenAPI contract (every failing field is
// reported), and decodes it into dst rejecting unknown fields.
func (s *Server) decode(r *http.Request, dst any) error {
	body, err := readJSONBody(r)
	if err != nil {
		return err
	}
	return s.decodeBody(r, body, dst)
}

// readJSONBody reads a request body that must be one JSON value of at most
// maxBodyBytes sent as application/json (UTF-8) whose every string passes
// bokat.CheckText. Handlers that must look at the body
// before schema validation (consent first, taxonomy errors as 422) call it,
// then decodeBody.
func readJSONBody(r *http.Request) ([]byte, error) {
	// What nearly every client sends is accepted without parsing it.
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		mt, params, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return nil, bokat.Errorf(bokat.CodeUnsupportedMediaType, "Content-Type must be application/json.")
		}
		if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
			return nil, bokat.Errorf(bokat.CodeUnsupportedMediaType, "JSON bodies must be UTF-8; a charset parameter, when sent, must be utf-8.")
		}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, bokat.Errorf(bokat.CodePayloadTooLarge, "The request body exceeds %d bytes.", maxBodyBytes)
		}
		return nil, &bokat.Error{Code: bokat.CodeInvalidRequest, Detail: "The request body could not be read.", Err: err}
	}
	if err := checkSingleJSONValue(body); err != nil {
		return nil, err
	}
	if err := checkBodyText(body); err != nil {
		return nil, err
	}
	return body, nil
}

// decodeBody validates body against the contract and decodes it into dst.
func (s *Server) decodeBody(r *http.Request, body []byte, dst any) error {
	issues, err := s.contract.ValidateRequest(r.Context(), r, body)
	if err != nil {
		return fmt.Errorf("validate request against the contract: %w", err)
	}
	if len(issues) > 0 {
		return &bokat.Error{Code: bokat.CodeValidationFailed, Detail: "The request does not match the contract; see issues.", Issues: issues}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return &bokat.Error{Code: bokat.CodeValidationFailed, Detail: "The request does not match the contract.",
			Issues: []string{decodeIssue(err)}}
	}
	return nil
}

// checkSingleJSONValue rejects malformed JSON and anything after the first value.
func checkSingleJSONValue(body []byte) error {
	// json.Valid accepts exactly one JSON value between optional white
	// space, without allocating; only a refused body takes the decoder,
	// for its error.
	if json.Valid(body) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.EOF) {
			return &bokat.Error{Code: bokat.CodeInvalidRequest, Detail: "The request body is empty; a JSON object is required.",
				Issues: []string{"(body): empty"}}
		}
		return &bokat.Error{Code: bokat.CodeInvalidRequest, Detail: "The request body is not valid JSON.", Issues: []string{decodeIssue(err)}}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &bokat.Error{Code: bokat.CodeInvalidRequest, Detail: "The request body must hold exactly one JSON value.",
			Issues: []string{"(body): unexpected data after the JSON value"}}
	}
	return nil
}

// decodeIssue describes a decoding error without echoing submitted values.
func decodeIssue(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("(body): malformed JSON at byte %d", syntax.Offset)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "(root)"
		}
		return field + ": " + jsonTypeIssue(typ)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "(body): truncated JSON"
	}
	const unknown = "json: unknown field "
	if msg := err.Error(); len(msg) > len(unknown) && msg[:len(unknown)] == unknown {
		return "(root): unknown field " + msg[len(unknown):]
	}
	return "(body): could not be decoded"
}

// jsonTypeIssue says, in the contract's JSON terms, what a value that could
// not be decoded must be: a number too large for its field, an integer
// written with a fraction or exponent (5000.0), or a value of the wrong
// JSON type. It never names Go types.
func jsonTypeIssue(e *json.UnmarshalTypeError) string {
	t := e.Type
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	isNumber := strings.HasPrefix(e.Value, "number")
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if isNumber {
			bits := t.Bits()
			lo, hi := int64(-1)<<(bits-1), int64(1)<<(bits-1)-1
			lit := strings.TrimSpace(strings.TrimPrefix(e.Value, "number"))
			f, ok := new(big.Float).SetString(lit)
			switch {
			case !ok || !f.IsInt():
				return "must be an integer"
			case f.Cmp(new(big.Float).SetInt64(lo)) >= 0 && f.Cmp(new(big.Float).SetInt64(hi)) <= 0:
				return "must be an integer written without a fraction or exponent (e.g. 5000, not 5000.0)"
			default:
				return fmt.Sprintf("must be an integer between %d and %d", lo, hi)
			}
		}
		return "must be an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "must be a non-negative integer"
	case reflect.Float32, reflect.Float64, reflect.Interface:
		if isNumber {
			return "must be a number within ±1.7976931348623157e308"
		}
		if t.Kind() == reflect.Interface {
			return "is invalid"
		}
		return "must be a number"
	case reflect.String:
		return "must be a string"
	case reflect.Bool:
		return "must be a boolean"
	case reflect.Slice, reflect.Array:
		return "must be an array"
	case reflect.Struct, reflect.Map:
		if t == reflect.TypeFor[time.Time]() {
			return "must be an RFC 3339 date-time with offset (e.g. 2026-03-02T09:15:00+01:00)"
		}
		return "must be an object"
	}
	return "has the wrong JSON type"
}

// wholeNumber is an integer member of a request body. JSON Schema's
// "integer" is any number with a zero fraction part, so 5000, 5000.0 and
// 5e3 all pass the contract and all decode to 5000; the contract bounds the
// range.
type wholeNumber int64

func (n *wholeNumber) UnmarshalJSON(b []byte) error {
	f, _, err := big.ParseFloat(string(b), 10, 256, big.ToNearestEven)
	if err != nil {
		return &json.UnmarshalTypeError{Value: "number " + string(b), Type: reflect.TypeFor[int64]()}
	}
	i, acc := f.Int64()
	if !f.IsInt() || acc != big.Exact {
		return &json.UnmarshalTypeError{Value: "number " + string(b), Type: reflect.TypeFor[int64]()}
	}
	*n = wholeNumber(i)
	return nil
}

// int64 returns the number, or nil when it was not sent.
func (n *wholeNumber) int64() *int64 {
	if n == nil {
		return nil
	}
	v := int64(*n)
	return &v
}
