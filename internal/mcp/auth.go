package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"bokat"
	"bokat/internal/auth"
)

// authorize authenticates every POST to the endpoint and puts the
// principal in the request context, where the tools' backend finds it.
// initialize, tools/list and the tools whose operations admit anonymous
// callers need no credential; any other tools/call without one answers 401
// with a challenge naming the resource metadata and the scope, and with a
// credential lacking the scope 403 insufficient_scope (RFC 6750 section
// 3.1). A credential that is sent must be valid, as on the REST API.
//
// The tools called are read from the JSON-RPC body (on 2026-era requests
// the SDK then checks that the Mcp-Method and Mcp-Name headers match it).
// The messages that run no operation are charged to the backend's quota
// first, before the credential is looked up; each tool call spends its
// operation's quota when it runs.
func (s *Server) authorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				http.Error(w, fmt.Sprintf("request body exceeds %d bytes", tooLarge.Limit), http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "the request body could not be read", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		needs, others := s.inspect(body)
		if others > 0 && !s.backend.Admit(w, r, others) {
			return
		}
		p, err := s.auth.Authenticate(r.Context(), r)
		if errors.Is(err, auth.ErrInvalidCredential) {
			s.challenge(w, http.StatusUnauthorized, "invalid_token", "The credential is missing, malformed, unknown, expired or revoked.", needs)
			return
		}
		if err != nil {
			s.log.ErrorContext(r.Context(), "mcp: authentication failed", "error", err.Error())
			w.Header().Set("Retry-After", "5")
			http.Error(w, "authentication is unavailable right now", http.StatusServiceUnavailable)
			return
		}
		if len(needs) > 0 {
			if !p.Authenticated() {
				s.challenge(w, http.StatusUnauthorized, "", "This tool requires a credential: Authorization: Bearer <token>.", needs)
				return
			}
			var missing []string
			for _, sc := range needs {
				if !p.Has(bokat.Scope(sc)) {
					missing = append(missing, sc)
				}
			}
			if len(missing) > 0 {
				s.challenge(w, http.StatusForbidden, "insufficient_scope",
					"The credential lacks the scope this tool requires: "+strings.Join(missing, " ")+".", missing)
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), p)))
	})
}

// inspect returns the scopes of the credential-requiring tools a body
// calls, in order and without repeats, and how many of its messages are not
// tool calls. A body that is not JSON-RPC needs no scope and counts as one
// message: the protocol layer refuses it.
func (s *Server) inspect(body []byte) (scopes []string, others int) {
	type message struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	var msgs []message
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if json.Unmarshal(trimmed, &msgs) != nil {
			return nil, 1
		}
	} else {
		var m message
		if json.Unmarshal(trimmed, &m) != nil {
			return nil, 1
		}
		msgs = []message{m}
	}
	for _, m := range msgs {
		if m.Method != "tools/call" {
			others++
			continue
		}
		t, ok := s.tools[m.Params.Name]
		if !ok || t.credentialOptional || slices.Contains(scopes, string(t.scope)) {
			continue
		}
		scopes = append(scopes, string(t.scope))
	}
	return scopes, others
}

// challenge answers an authorization failure with its WWW-Authenticate
// challenge (RFC 6750, RFC 9728) and a JSON body of the same error.
func (s *Server) challenge(w http.ResponseWriter, status int, code, description string, scopes []string) {
	var params []string
	if code != "" {
		params = append(params, fmt.Sprintf("error=%q", code))
	}
	if len(scopes) > 0 {
		params = append(params, fmt.Sprintf("scope=%q", strings.Join(scopes, " ")))
	}
	params = append(params, fmt.Sprintf("resource_metadata=%q", s.metadataURL()))
	w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
	if code == "" {
		code = "unauthorized"
	}
	body, _ := json.Marshal(map[string]string{"error": code, "error_description": description})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
