package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
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
	info := requestInfoFrom(r.Context())
	meta, _ := json.Marshal(struct {
		APIRequestID    string `json:"api_request_id"`
		TraceID         string `json:"trace_id"`
		ContractVersion string `json:"contract_version"`
		ServerTime      string `json:"server_time"`
	}{info.id, info.traceID, info.contract, s.now().UTC().Format(time.RFC3339Nano)})
	var buf bytes.Buffer
	buf.Grow(len(meta) + len(body) + 1)
	buf.Write(meta[:len(meta)-1])
	if len(body) > 2 {
		buf.WriteByte(',')
		buf.Write(body[1:])
	} else {
		buf.WriteByte('}')
	}
	buf.WriteByte('\n')
	h := w.Header()
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json")
	}
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
