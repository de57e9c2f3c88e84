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
	buf := s.getBuf()
	defer s.putBuf(buf)
	*buf = s.appendMeta((*buf)[:0], r)
	if len(body) > 2 {
		*buf = append(*buf, ',') // the metadata's members, then the body's
		*buf = append(*buf, body[1:]...)
	} else {
		*buf = append(*buf, '}')
	}
	s.writeResponse(w, status, append(*buf, '\n'))
}

// metaWire is the metadata every response opens with; appendMeta writes it.
type metaWire struct {
	APIRequestID    string `json:"api_request_id"`
	TraceID         string `json:"trace_id"`
	ContractVersion string `json:"contract_version"`
	ServerTime      string `json:"server_time"`
}

// appendMeta appends the opening of a response object — "{" and the
// metadata members, without the closing brace — as json.Marshal of
// metaWire writes them (tests compare the two).
func (s *Server) appendMeta(b []byte, r *http.Request) []byte {
	info := requestInfoFrom(r.Context())
	b = append(b, `{"api_request_id":`...)
	b = appendJSONString(b, info.id)
	b = append(b, `,"trace_id":`...)
	b = appendJSONString(b, info.traceID)
	b = append(b, `,"contract_version":`...)
	b = appendJSONString(b, info.contract)
	b = append(b, `,"server_time":"`...)
	b = s.now().UTC().Add(info.clock).AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// writeResponse writes a whole JSON response body in one Write, so that a
// large body leaves in as few writes to the connection as it can.
func (s *Server) writeResponse(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json")
	}
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// getBuf returns a buffer for encoding a response; putBuf recycles it.
func (s *Server) getBuf() *[]byte {
	if buf, _ := s.searchBufs.Get().(*[]byte); buf != nil {
		return buf
	}
	return new([]byte)
}

func (s *Server) putBuf(buf *[]byte) {
	if cap(*buf) <= maxPooledBuf {
		s.searchBufs.Put(buf)
	}
}

// maxPooledBuf is the largest buffer kept for reuse: a search answer is
// about 50 KB; a rare larger body is left to the garbage collector.
const maxPooledBuf = 1 << 20
