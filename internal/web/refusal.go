package web

import (
	"errors"
	"net/http"
)

// Refusal is how a site's pages answer one refusal of its use cases: an
// error that is Err (errors.Is) shows the error page with Status, the text
// MessageKey and the code Code.
type Refusal struct {
	Err        error
	Status     int
	MessageKey string
	Code       string
}

// Refused answers err, a use case's answer to the request: its first
// match among the site's Refusals, or else an internal error (Fail, under
// what). It reports whether err was one, and writes nothing for nil.
func (s *Site[T]) Refused(w http.ResponseWriter, r *http.Request, what string, err error) bool {
	if err == nil {
		return false
	}
	for _, f := range s.Refusals {
		if errors.Is(err, f.Err) {
			s.Layout.RenderError(w, r, f.Status, f.MessageKey, f.Code)
			return true
		}
	}
	s.Fail(w, r, what, err)
	return true
}

// Fail answers an internal error: it logs err once, as "LogName: what",
// and shows the error page with 503 and err_internal, which says nothing
// of it.
func (s *Site[T]) Fail(w http.ResponseWriter, r *http.Request, what string, err error) {
	s.fail(w, r, s.LogName+": "+what, err)
}

// fail logs err under msg and shows the internal error page.
func (s *Site[T]) fail(w http.ResponseWriter, r *http.Request, msg string, err error) {
	s.Layout.log.ErrorContext(r.Context(), msg, "error", err.Error())
	s.Layout.RenderError(w, r, http.StatusServiceUnavailable, "err_internal", "server_error")
}
