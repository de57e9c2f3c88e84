package notify

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/mail"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// MailerConfig configures a Mailer.
type MailerConfig struct {
	// SMTPURL selects SMTP delivery: smtp://[user:pass@]host[:port] (port
	// 587, STARTTLS required) or smtps://[user:pass@]host[:port] (port 465,
	// TLS from the start). The query parameter starttls=opportunistic or
	// starttls=none relaxes smtp:// (development and loopback relays only).
	// Empty selects the folder mode: messages are written to Dir as .eml
	// files (development).
	SMTPURL string
	// From is the sender, e.g. "Bokat <bokning@example.se>". Required.
	From string
	// Dir is the folder of the folder mode.
	Dir    string
	Logger *slog.Logger
	Now    func() time.Time
	// Timeout bounds one SMTP exchange; 30s by default.
	Timeout time.Duration
	// TLSConfig overrides the TLS settings (tests: a private CA).
	TLSConfig *tls.Config
}

// Mailer sends messages by SMTP, or in development writes them as .eml
// files to a folder. It is safe for concurrent use.
type Mailer struct {
	from    *mail.Address
	log     *slog.Logger
	now     func() time.Time
	timeout time.Duration

	// SMTP mode.
	host      string
	opts      []gomail.Option
	redacted  string
	tlsConfig *tls.Config

	// Folder mode.
	dir string
}

// NewMailer returns a Mailer for the configuration. It does not connect.
func NewMailer(cfg MailerConfig) (*Mailer, error) {
	from, err := mail.ParseAddress(cfg.From)
	if err != nil {
		return nil, fmt.Errorf("mail from %q: %w", cfg.From, err)
	}
	m := &Mailer{from: from, log: cfg.Logger, now: cfg.Now, timeout: cfg.Timeout, tlsConfig: cfg.TLSConfig}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	if m.now == nil {
		m.now = time.Now
	}
	if m.timeout <= 0 {
		m.timeout = 30 * time.Second
	}
	if cfg.SMTPURL == "" {
		if cfg.Dir == "" {
			return nil, errors.New("mail: without an SMTP URL a mail folder is required")
		}
		m.dir = cfg.Dir
		return m, nil
	}
	if err := m.parseSMTPURL(cfg.SMTPURL); err != nil {
		return nil, err
	}
	return m, nil
}

// CheckSMTPURL reports whether NewMailer accepts raw as its SMTP URL, with
// the error it would give (which never repeats the password).
func CheckSMTPURL(raw string) error {
	var m Mailer
	return m.parseSMTPURL(raw)
}

// parseSMTPURL reads the SMTP URL into client options. Errors never repeat
// the password.
func (m *Mailer) parseSMTPURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("mail: the SMTP URL cannot be parsed (want smtp://user:pass@host:587 or smtps://...)")
	}
	m.redacted = u.Redacted()
	if u.Hostname() == "" {
		return fmt.Errorf("mail: SMTP URL %s has no host", m.redacted)
	}
	m.host = u.Hostname()
	port := 587
	opts := []gomail.Option{gomail.WithTimeout(m.timeout)}
	switch u.Scheme {
	case "smtp":
		policy := gomail.TLSMandatory
		switch v := u.Query().Get("starttls"); v {
		case "", "mandatory":
		case "opportunistic":
			policy = gomail.TLSOpportunistic
		case "none":
			policy = gomail.NoTLS
		default:
			return fmt.Errorf("mail: SMTP URL %s: starttls must be mandatory, opportunistic or none, not %q", m.redacted, v)
		}
		opts = append(opts, gomail.WithTLSPolicy(policy))
	case "smtps":
		port = 465
		opts = append(opts, gomail.WithSSL())
	default:
		return fmt.Errorf("mail: SMTP URL %s must start with smtp:// or smtps://", m.redacted)
	}
	for k := range u.Query() {
		if k != "starttls" {
			return fmt.Errorf("mail: SMTP URL %s: unknown parameter %q", m.redacted, k)
		}
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("mail: SMTP URL %s: bad port", m.redacted)
		}
		port = n
	}
	opts = append(opts, gomail.WithPort(port))
	if u.User != nil {
		pass, _ := u.User.Password()
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(u.User.Username()), gomail.WithPassword(pass))
	}
	if m.tlsConfig != nil {
		opts = append(opts, gomail.WithTLSConfig(m.tlsConfig))
	}
	m.opts = opts
	return nil
}

// Mode reports "smtp" or "folder".
func (m *Mailer) Mode() string {
	if m.dir != "" {
		return "folder"
	}
	return "smtp"
}

// FromAddress returns the bare sender address (organizer of invitations).
func (m *Mailer) FromAddress() string { return m.from.Address }

// Send delivers msg. Errors are *SendError, whose text holds no address.
func (m *Mailer) Send(ctx context.Context, msg Message) error {
	gm, err := m.build(msg)
	if err != nil {
		return err
	}
	if m.dir != "" {
		return m.writeFile(ctx, msg, gm)
	}
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	client, err := gomail.NewClient(m.host, m.opts...)
	if err != nil {
		return &SendError{Temporary: false, Summary: "smtp: client configuration: " + redact(err.Error())}
	}
	if err := client.DialAndSendWithContext(ctx, gm); err != nil {
		se := classifySMTP(err)
		// The caller logs the failure with its own context.
		m.log.DebugContext(ctx, "mail not sent", "kind", msg.Kind, "temporary", se.Temporary, "error", se.Summary)
		return se
	}
	m.log.InfoContext(ctx, "mail sent", "kind", msg.Kind, "mode", "smtp", "message_id", gm.GetMessageID())
	return nil
}

// build composes the MIME message.
func (m *Mailer) build(msg Message) (*gomail.Msg, error) {
	gm := gomail.NewMsg(gomail.WithNoDefaultUserAgent())
	gm.FromMailAddress(m.from)
	to := &mail.Address{Name: msg.ToName, Address: msg.To}
	if _, err := mail.ParseAddress(to.String()); err != nil || msg.To == "" {
		return nil, &SendError{Temporary: false, Summary: "invalid recipient address"}
	}
	gm.ToMailAddress(to)
	gm.Subject(msg.Subject)
	gm.SetDateWithValue(m.now())
	gm.SetMessageIDWithValue(randomID() + "@" + domainOf(m.from.Address))
	gm.SetBodyString(gomail.TypeTextPlain, msg.Text)
	if msg.Calendar != nil {
		ct := gomail.ContentType("text/calendar; method=" + msg.Calendar.Method)
		gm.AddAlternativeString(ct, string(msg.Calendar.Data))
		name := "invite.ics"
		if msg.Calendar.Method == "CANCEL" {
			name = "cancel.ics"
		}
		if err := gm.AttachReader(name, bytes.NewReader(msg.Calendar.Data),
			gomail.WithFileContentType(gomail.ContentType("text/calendar; charset=UTF-8; method="+msg.Calendar.Method))); err != nil {
			return nil, &SendError{Summary: "attach calendar: " + err.Error()}
		}
	}
	return gm, nil
}

// writeFile stores the message as an .eml file (folder mode). Files are
// readable by the owner only: they hold personal data.
func (m *Mailer) writeFile(ctx context.Context, msg Message, gm *gomail.Msg) error {
	if err := os.MkdirAll(m.dir, 0o700); err != nil {
		return &SendError{Temporary: true, Summary: "mail folder: " + errors.Unwrap(err).Error()}
	}
	kind := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, strings.ToLower(msg.Kind))
	name := fmt.Sprintf("%s-%s-%s.eml", m.now().UTC().Format("20060102T150405.000Z"), kind, randomID()[:8])
	var buf bytes.Buffer
	if _, err := gm.WriteTo(&buf); err != nil {
		return &SendError{Summary: "compose: " + err.Error()}
	}
	tmp, err := os.CreateTemp(m.dir, ".tmp-*.eml")
	if err != nil {
		return &SendError{Temporary: true, Summary: "mail folder: cannot create a file"}
	}
	_, werr := tmp.Write(buf.Bytes())
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return &SendError{Temporary: true, Summary: "mail folder: cannot write a file"}
	}
	if err := os.Rename(tmp.Name(), filepath.Join(m.dir, name)); err != nil {
		os.Remove(tmp.Name())
		return &SendError{Temporary: true, Summary: "mail folder: cannot write a file"}
	}
	m.log.InfoContext(ctx, "mail written", "kind", msg.Kind, "mode", "folder", "file", name)
	return nil
}

// SendSignInCode sends a one-time sign-in code (Swedish, or English when
// locale starts with "en"). Neither the address nor the code is logged.
func (m *Mailer) SendSignInCode(ctx context.Context, email, code, locale string) error {
	msg := Message{Kind: "sign_in_code", To: email}
	if isEnglish(locale) {
		msg.Subject = "Your Bokat sign-in code"
		msg.Text = "Hello,\n\nyour one-time sign-in code for Bokat is:\n\n    " + code +
			"\n\nThe code is valid for a short time and can be used once. Never share it with anyone." +
			"\nIf you did not try to sign in, you can ignore this message.\n\nBokat\n"
	} else {
		msg.Subject = "Din inloggningskod till Bokat"
		msg.Text = "Hej,\n\ndin engångskod för att logga in på Bokat är:\n\n    " + code +
			"\n\nKoden gäller en kort stund och kan bara användas en gång. Dela den aldrig med någon." +
			"\nOm du inte försökte logga in kan du bortse från det här meddelandet.\n\nBokat\n"
	}
	return m.Send(ctx, msg)
}

// classifySMTP turns a go-mail error into a SendError: the SMTP stage, reply
// code and enhanced status, never the server's text (which may echo an
// address).
func classifySMTP(err error) *SendError {
	var se *gomail.SendError
	if errors.As(err, &se) {
		code := se.ErrorCode()
		s := "smtp: " + se.Reason.String()
		if code != 0 {
			s += ": " + strconv.Itoa(code)
		}
		if esc := se.EnhancedStatusCode(); esc != "" {
			s += " " + esc
		}
		temporary := se.IsTemp() || code == 0 || code/100 == 4
		if code/100 == 5 {
			temporary = false
		}
		return &SendError{Temporary: temporary, Summary: s}
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return &SendError{Temporary: true, Summary: "smtp: timed out"}
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		if netErr.Timeout() {
			return &SendError{Temporary: true, Summary: "smtp: connection timed out"}
		}
		return &SendError{Temporary: true, Summary: "smtp: cannot connect to the mail server"}
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "auth"):
		return &SendError{Temporary: true, Summary: "smtp: authentication failed"}
	case strings.Contains(msg, "TLS") || strings.Contains(msg, "tls") || strings.Contains(msg, "x509"):
		return &SendError{Temporary: true, Summary: "smtp: TLS failed"}
	}
	return &SendError{Temporary: true, Summary: "smtp: " + redact(msg)}
}

var (
	emailLike = regexp.MustCompile(`[^\s<>"'(),;:]+@[^\s<>"'(),;:]+`)
	phoneLike = regexp.MustCompile(`\+?\d[\d\s().-]{6,}\d`)
)

// redact removes anything shaped like an e-mail address or a phone number.
func redact(s string) string {
	s = emailLike.ReplaceAllString(s, "[address]")
	return phoneLike.ReplaceAllString(s, "[number]")
}

func randomID() string { return strings.ToLower(rand.Text()) }

func domainOf(addr string) string {
	if i := strings.LastIndexByte(addr, '@'); i >= 0 && i < len(addr)-1 {
		return addr[i+1:]
	}
	return "bokat.invalid"
}
