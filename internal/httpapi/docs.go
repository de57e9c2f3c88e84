package httpapi

import (
	"net/http"
	"sync"

	"bokat/internal/apidoc"
)

// The documents describing the API (the contract as served, the reference
// page, llms.txt, the problem type pages) are rendered by apidoc from what
// it read of the contract once; the handlers here serve them.

// servedDocuments renders what the server serves of the documents: the
// contract document and llms.txt now, the reference page on its first
// request (most servers a test builds never serve it). rts is the route
// table.
func (s *Server) servedDocuments(rts []route) error {
	docs, err := apidoc.Of(s.contract)
	if err != nil {
		return err
	}
	if s.openapiJSON, err = docs.OpenAPI(s.baseURL); err != nil {
		return err
	}
	ops := make([]apidoc.Operation, 0, len(rts))
	for _, rt := range rts {
		ops = append(ops, apidoc.Operation{Method: rt.method, Pattern: rt.pattern, Access: access(rt.auth), Scope: rt.scope})
	}
	if s.llmsText, err = docs.LLMsText(s.catalog, ops, s.baseURL); err != nil {
		return err
	}
	s.docsPage = sync.OnceValues(func() ([]byte, error) { return docs.Reference(s.baseURL) })
	return nil
}

// access is the credential llms.txt says a route needs.
func access(m authMode) apidoc.Access {
	switch m {
	case authRequired:
		return apidoc.Credential
	case authPartnerOnly:
		return apidoc.PartnerCredential
	default:
		return apidoc.NoCredential
	}
}

func (s *Server) handleDocs(w http.ResponseWriter, r *http.Request) error {
	page, err := s.docsPage()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", apidoc.ReferenceCSP)
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, err = w.Write(page)
	return err
}

func (s *Server) handleLLMsText(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, err := w.Write(s.llmsText)
	return err
}
