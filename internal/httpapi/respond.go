package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// writeJSON writes v, which must encode as a JSON object, with the metadata
// fields every response carries (api_request_id, trace_id, contract_version,
// server_time) added first.
func (s *Server) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil || len(body) < 2 || body[0] != '{' {
		s.log.ErrorContext(r.Context(), "encode response", "error", errString(err))
		body = []byte(`{"ok":false,"error":"internal_error"}`)
		status = http.StatusInternalServerError
	}
	s.writeJSONObject(w, r, status, body)
}

// writeJSONObject is writeJSON for a body already encoded: a compact JSON
// object, as json.Marshal writes it. Handlers that splice pre-encoded parts
// into large bodies use it to skip encoding them again.
func (s *Server) writeJSONObject(w http.ResponseWriter, r *http.Request, status int, body []byte) {
	info := requestInfoFrom(r.Context())
	meta, _ := json.Marshal(struct {
		APIRequestID    string `json:"api_request_id"`
		TraceID         string `json:"trace_id"`
		ContractVersion string `json:"contract_version"`
		ServerTime      string `json:"server_time"`
	}{info.id, info.traceID, info.contract, s.now().UTC().Add(info.clock).Format(time.RFC3339Nano)})
	// The metadata opens the object; the body follows without being copied.
	head, rest := meta, body[1:]
	if len(body) > 2 {
		head[len(head)-1] = ',' // replaces the metadata's closing brace
	} else {
		rest = nil
	}
	h := w.Header()
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json")
	}
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(len(head)+len(rest)+1))
	w.WriteHeader(status)
	if _, err := w.Write(head); err != nil {
		return
	}
	if len(rest) > 0 {
		if _, err := w.Write(rest); err != nil {
			return
		}
	}
	_, _ = w.Write([]byte{'\n'})
}
