package notify

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"io/fs"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
)

// EraseFolderMessages removes from the development mail folder dir (the
// .eml files of the folder mode) every message to one of addresses
// (compared without case) or whose decoded text names one of ids (booking
// and request ids: provider messages carry the customer's details under
// them). It returns how many files it removed; a folder that does not
// exist holds none. Errors name files, never their content.
func EraseFolderMessages(dir string, addresses, ids []string) (int, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".eml") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		raw, err := os.ReadFile(path)
		if err != nil {
			return removed, err
		}
		if !messageConcerns(raw, addresses, ids) {
			continue
		}
		if err := os.Remove(path); err != nil {
			return removed, err
		}
		removed++
	}
	return removed, nil
}

// messageConcerns reports whether a stored message is to one of addresses
// or names one of ids in its decoded text. A message that does not parse
// is judged by its raw bytes.
func messageConcerns(raw []byte, addresses, ids []string) bool {
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return containsAny(raw, ids)
	}
	for _, field := range []string{"To", "Cc", "Bcc"} {
		list, _ := m.Header.AddressList(field)
		for _, a := range list {
			for _, want := range addresses {
				if want != "" && strings.EqualFold(a.Address, strings.TrimSpace(want)) {
					return true
				}
			}
		}
	}
	var text bytes.Buffer
	decodeParts(&text, m.Header.Get("Content-Type"), m.Header.Get("Content-Transfer-Encoding"), m.Body)
	return containsAny(text.Bytes(), ids) || containsAny(raw, ids)
}

// decodeParts appends the decoded content of a MIME entity (all parts of a
// multipart one) to w.
func decodeParts(w *bytes.Buffer, contentType, encoding string, body io.Reader) {
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err == nil && strings.HasPrefix(mediaType, "multipart/") {
		r := multipart.NewReader(body, params["boundary"])
		for {
			p, err := r.NextPart() // decodes quoted-printable parts itself
			if err != nil {
				return
			}
			decodeParts(w, p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p)
		}
	}
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, &newlineSkipper{r: body})
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	}
	_, _ = io.Copy(w, body)
}

// newlineSkipper drops CR and LF, which base64 bodies carry between lines.
type newlineSkipper struct{ r io.Reader }

func (s *newlineSkipper) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	out := p[:0]
	for _, b := range p[:n] {
		if b != '\r' && b != '\n' {
			out = append(out, b)
		}
	}
	return len(out), err
}

func containsAny(b []byte, subs []string) bool {
	for _, s := range subs {
		if s != "" && bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}
