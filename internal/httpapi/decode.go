package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

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

// readJSONBody is the first half of decode: the media type, the size limit
// and exactly one JSON value. Handlers that must look at a field before the
// schema does (search answers an unsupported vertical with 422, not 400)
// call it, then decodeBody.
func readJSONBody(r *http.Request) ([]byte, error) {
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		return nil, bokat.Errorf(bokat.CodeUnsupportedMediaType, "Content-Type must be application/json.")
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
	return body, nil
}

// decodeBody is the second half of decode: validation against the
// contract, then strict decoding into dst.
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
		return fmt.Sprintf("%s: must be %s", field, typ.Type.String())
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "(body): truncated JSON"
	}
	const unknown = "json: unknown field "
	if msg := err.Error(); len(msg) > len(unknown) && msg[:len(unknown)] == unknown {
		return "(root): unknown field " + msg[len(unknown):]
	}
	return "(body): could not be decoded"
}
