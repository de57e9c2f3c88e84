// Package notifytest gives tests a real SMTP server on 127.0.0.1 (STARTTLS
// with a throwaway certificate, AUTH PLAIN) that keeps what it receives, and
// parses received messages and their iCalendar invitations back.
package notifytest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-ical"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"bokat/internal/clocktest"
)

// Credentials the server accepts.
const (
	Username = "bokat-relay"
	Password = "relay-pass-7f3c"
)

// Received is one message the server accepted.
type Received struct {
	From string
	To   []string
	// Authenticated is the user name the client authenticated as, if any.
	Authenticated string
	TLS           bool
	Data          []byte
}

// Server is an SMTP server for tests.
type Server struct {
	// Addr is host:port.
	Addr string

	srv       *smtp.Server
	clientTLS *tls.Config

	mu       sync.Mutex
	received []Received
	rcpts    int
	reject   *smtp.SMTPError
	rejectTo map[string]*smtp.SMTPError
	arrived  chan struct{}
}

// Options configure a Server.
type Options struct {
	// ImplicitTLS makes the server speak TLS from the first byte (smtps);
	// otherwise it offers STARTTLS.
	ImplicitTLS bool
}

// NewServer starts a server on 127.0.0.1 and stops it when the test ends.
func NewServer(tb testing.TB, opts Options) *Server {
	tb.Helper()
	serverTLS, clientTLS := tlsPair(tb)
	s := &Server{clientTLS: clientTLS, arrived: make(chan struct{}, 1024)}
	s.srv = smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		_, isTLS := c.TLSConnectionState()
		return &session{s: s, tls: isTLS, conn: c}, nil
	}))
	s.srv.Domain = "127.0.0.1"
	s.srv.TLSConfig = serverTLS
	s.srv.ReadTimeout = 10 * time.Second
	s.srv.WriteTimeout = 10 * time.Second
	s.srv.MaxMessageBytes = 4 << 20
	s.srv.ErrorLog = discard{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s.Addr = ln.Addr().String()
	if opts.ImplicitTLS {
		ln = tls.NewListener(ln, serverTLS)
	}
	go s.srv.Serve(ln)
	tb.Cleanup(func() { s.srv.Close() })
	return s
}

type discard struct{}

func (discard) Printf(string, ...any) {}
func (discard) Println(...any)        {}

// URL returns an smtp:// (or smtps://) URL with the server's credentials;
// STARTTLS stays mandatory.
func (s *Server) URL(implicitTLS bool) string {
	scheme := "smtp"
	if implicitTLS {
		scheme = "smtps"
	}
	return fmt.Sprintf("%s://%s:%s@%s", scheme, Username, Password, s.Addr)
}

// ClientTLS returns a TLS configuration that trusts the server's certificate.
func (s *Server) ClientTLS() *tls.Config { return s.clientTLS.Clone() }

// Reject makes the server refuse every recipient with the reply (code 4xx
// for a temporary, 5xx for a permanent failure). Nil accepts again.
func (s *Server) Reject(e *smtp.SMTPError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reject = e
}

// RejectRecipient makes the server refuse RCPT TO addr (only) with the
// reply; nil accepts addr again. Reject, when set, takes precedence.
func (s *Server) RejectRecipient(addr string, e *smtp.SMTPError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rejectTo == nil {
		s.rejectTo = map[string]*smtp.SMTPError{}
	}
	if e == nil {
		delete(s.rejectTo, addr)
		return
	}
	s.rejectTo[addr] = e
}

// Messages returns what the server accepted so far.
func (s *Server) Messages() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.received...)
}

// RcptAttempts counts RCPT commands, accepted or not.
func (s *Server) RcptAttempts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rcpts
}

// Wait returns once at least n messages arrived, failing the test only
// shortly before the test binary's deadline (see clocktest.Patience).
func (s *Server) Wait(tb testing.TB, n int) []Received {
	tb.Helper()
	patience := clocktest.Patience(tb)
	for {
		if msgs := s.Messages(); len(msgs) >= n {
			return msgs
		}
		select {
		case <-s.arrived:
		case <-patience.Done():
			tb.Fatalf("the SMTP server received %d messages, want %d", len(s.Messages()), n)
		}
	}
}

type session struct {
	s    *Server
	conn *smtp.Conn
	tls  bool
	user string
	from string
	to   []string
}

func (se *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (se *session) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != Username || password != Password {
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "bad credentials"}
		}
		se.user = username
		return nil
	}), nil
}

func (se *session) Mail(from string, _ *smtp.MailOptions) error {
	se.from = from
	return nil
}

func (se *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	se.s.mu.Lock()
	defer se.s.mu.Unlock()
	se.s.rcpts++
	if se.s.reject != nil {
		return se.s.reject
	}
	if e := se.s.rejectTo[to]; e != nil {
		return e
	}
	se.to = append(se.to, to)
	return nil
}

func (se *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	_, isTLS := se.conn.TLSConnectionState()
	se.s.mu.Lock()
	se.s.received = append(se.s.received, Received{From: se.from, To: se.to, Authenticated: se.user, TLS: isTLS || se.tls, Data: b})
	se.s.mu.Unlock()
	select {
	case se.s.arrived <- struct{}{}:
	default:
	}
	return nil
}

func (se *session) Reset() { se.from, se.to = "", nil }

func (se *session) Logout() error { return nil }

// tlsPair makes a throwaway certificate for 127.0.0.1 and the matching
// server and client configurations.
func tlsPair(tb testing.TB) (server, client *tls.Config) {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	server = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}
	client = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	return server, client
}

// Message is a received message taken apart.
type Message struct {
	Header  mail.Header
	Subject string // decoded
	From    *mail.Address
	To      []*mail.Address
	Text    string // the text/plain part, decoded
	// Attachments by file name; CalendarPart is the text/calendar
	// alternative part, if any.
	Attachments  map[string]Part
	CalendarPart *Part
}

// Part is one MIME part.
type Part struct {
	ContentType string
	Params      map[string]string
	Data        []byte
}

// Parse takes a raw message apart, failing the test on malformed MIME.
func Parse(tb testing.TB, raw []byte) Message {
	tb.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		tb.Fatalf("not an RFC 5322 message: %v", err)
	}
	dec := new(mime.WordDecoder)
	subject, err := dec.DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		tb.Fatalf("Subject: %v", err)
	}
	out := Message{Header: msg.Header, Subject: subject, Attachments: map[string]Part{}}
	if out.From, err = mail.ParseAddress(msg.Header.Get("From")); err != nil {
		tb.Fatalf("From: %v", err)
	}
	if out.To, err = msg.Header.AddressList("To"); err != nil {
		tb.Fatalf("To: %v", err)
	}
	if err := out.walk(msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), "", msg.Body); err != nil {
		tb.Fatalf("MIME structure: %v", err)
	}
	return out
}

func (m *Message) walk(contentType, encoding, disposition string, body io.Reader) error {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return fmt.Errorf("Content-Type %q: %w", contentType, err)
	}
	if strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			if err := m.walk(p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"),
				p.Header.Get("Content-Disposition"), p); err != nil {
				return err
			}
		}
	}
	data, err := decodeBody(encoding, body)
	if err != nil {
		return err
	}
	part := Part{ContentType: mt, Params: params, Data: data}
	if disposition != "" {
		_, dp, err := mime.ParseMediaType(disposition)
		if err == nil && dp["filename"] != "" {
			m.Attachments[dp["filename"]] = part
			return nil
		}
	}
	switch mt {
	case "text/plain":
		m.Text = string(data)
	case "text/calendar":
		m.CalendarPart = &part
	}
	return nil
}

func decodeBody(encoding string, r io.Reader) ([]byte, error) {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "quoted-printable":
		return io.ReadAll(quotedprintable.NewReader(r))
	case "base64":
		return io.ReadAll(base64.NewDecoder(base64.StdEncoding, r))
	}
	return io.ReadAll(r)
}

// Event is the one VEVENT of a parsed invitation, with its calendar's METHOD.
type Event struct {
	Method    string
	UID       string
	Sequence  int
	Status    string
	Start     time.Time
	End       time.Time
	StartRaw  string
	EndRaw    string
	Summary   string
	Location  string
	Organizer string
	Attendees []string
}

// ParseCalendar parses an iCalendar object with go-ical (an implementation
// independent of the one that wrote it) and returns its single event.
func ParseCalendar(tb testing.TB, data []byte) Event {
	tb.Helper()
	cal, err := ical.NewDecoder(bytes.NewReader(data)).Decode()
	if err != nil {
		tb.Fatalf("the invitation does not parse: %v\n%s", err, data)
	}
	var ev Event
	if p := cal.Props.Get(ical.PropMethod); p != nil {
		ev.Method = p.Value
	}
	events := cal.Events()
	if len(events) != 1 {
		tb.Fatalf("the invitation has %d events, want 1", len(events))
	}
	e := events[0]
	text := func(name string) string {
		p := e.Props.Get(name)
		if p == nil {
			return ""
		}
		if p.ValueType() == ical.ValueText {
			s, err := p.Text()
			if err != nil {
				tb.Fatalf("%s: %v", name, err)
			}
			return s
		}
		return p.Value
	}
	ev.UID = text(ical.PropUID)
	ev.Status = text(ical.PropStatus)
	ev.Summary = text(ical.PropSummary)
	ev.Location = text(ical.PropLocation)
	ev.Organizer = text(ical.PropOrganizer)
	ev.StartRaw = text(ical.PropDateTimeStart)
	ev.EndRaw = text(ical.PropDateTimeEnd)
	if p := e.Props.Get(ical.PropSequence); p != nil {
		if ev.Sequence, err = p.Int(); err != nil {
			tb.Fatalf("SEQUENCE: %v", err)
		}
	} else {
		ev.Sequence = -1
	}
	if ev.Start, err = e.DateTimeStart(time.UTC); err != nil {
		tb.Fatalf("DTSTART: %v", err)
	}
	if ev.End, err = e.DateTimeEnd(time.UTC); err != nil {
		tb.Fatalf("DTEND: %v", err)
	}
	for _, a := range e.Props.Values(ical.PropAttendee) {
		ev.Attendees = append(ev.Attendees, a.Value)
	}
	return ev
}
