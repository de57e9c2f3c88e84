package notify_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"bokat/internal/logtest"
	"bokat/internal/notify"
	"bokat/internal/notify/notifytest"
)

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestSignInCodeOverSMTPAndSMTPS(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		implicit bool
		locale   string
		subject  string
		body     string
	}{
		{"starttls swedish", false, "sv-SE", "Din inloggningskod till Bokat", "din engångskod"},
		{"smtps english", true, "en-GB", "Your Bokat sign-in code", "one-time sign-in code"},
		{"default swedish", false, "", "Din inloggningskod till Bokat", "Dela den aldrig"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := notifytest.NewServer(t, notifytest.Options{ImplicitTLS: tc.implicit})
			logs := &logtest.Buffer{}
			m, err := notify.NewMailer(notify.MailerConfig{SMTPURL: srv.URL(tc.implicit), From: "Bokat <" + organizer + ">",
				TLSConfig: srv.ClientTLS(), Logger: slog.New(slog.NewJSONHandler(logs, nil)), Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			const code = "834615"
			if err := m.SendSignInCode(context.Background(), customerEmail, code, tc.locale); err != nil {
				t.Fatal(err)
			}
			got := srv.Wait(t, 1)[0]
			if !got.TLS || got.Authenticated != notifytest.Username {
				t.Errorf("tls=%v auth=%q", got.TLS, got.Authenticated)
			}
			msg := notifytest.Parse(t, got.Data)
			if msg.Subject != tc.subject || !strings.Contains(msg.Text, code) || !strings.Contains(msg.Text, tc.body) {
				t.Errorf("subject %q text %q", msg.Subject, msg.Text)
			}
			if len(msg.Attachments) != 0 || msg.CalendarPart != nil {
				t.Error("a sign-in code carries an attachment")
			}
			for _, secret := range []string{code, customerEmail, notifytest.Password} {
				if strings.Contains(logs.String(), secret) {
					t.Errorf("the log holds %q:\n%s", secret, logs.String())
				}
			}
			if !strings.Contains(logs.String(), `"kind":"sign_in_code"`) {
				t.Errorf("the send was not logged: %s", logs.String())
			}
		})
	}
}

func TestMailerRefusesBadConfiguration(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, url, from, dir, want string
	}{
		{"bad scheme", "http://u:hunter2pass@mail.example:25", "a@b.example", "", "smtp:// or smtps://"},
		{"unknown parameter", "smtp://u:hunter2pass@mail.example?tls=off", "a@b.example", "", `unknown parameter "tls"`},
		{"bad starttls", "smtp://u:hunter2pass@mail.example?starttls=maybe", "a@b.example", "", "starttls must be"},
		{"bad port", "smtp://u:hunter2pass@mail.example:99999", "a@b.example", "", "bad port"},
		{"no host", "smtp://u:hunter2pass@:25", "a@b.example", "", "no host"},
		{"bad from", "", "not an address", "/tmp/x", "mail from"},
		{"no folder", "", "a@b.example", "", "mail folder is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := notify.NewMailer(notify.MailerConfig{SMTPURL: tc.url, From: tc.from, Dir: tc.dir})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2pass") {
				t.Errorf("the error repeats the password: %v", err)
			}
		})
	}
}

func TestUnreachableServerIsATemporaryFailure(t *testing.T) {
	t.Parallel()
	srv := notifytest.NewServer(t, notifytest.Options{})
	url := srv.URL(false)
	// Wrong password: the server refuses authentication.
	bad := strings.Replace(url, notifytest.Password, "wrong-password", 1)
	m, err := notify.NewMailer(notify.MailerConfig{SMTPURL: bad, From: organizer, TLSConfig: srv.ClientTLS(), Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	err = m.Send(context.Background(), notify.Message{Kind: "test", To: customerEmail, Subject: "x", Text: "y"})
	var se *notify.SendError
	if !errors.As(err, &se) || !se.Temporary || strings.Contains(se.Error(), "wrong-password") || strings.Contains(se.Error(), customerEmail) {
		t.Fatalf("wrong password: err = %v, want a temporary SendError without secrets", err)
	}
	// Without TLS trust the mandatory STARTTLS fails: nothing is sent in clear.
	m, err = notify.NewMailer(notify.MailerConfig{SMTPURL: url, From: organizer, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Send(context.Background(), notify.Message{Kind: "test", To: customerEmail, Subject: "x", Text: "y"}); !errors.As(err, &se) || !se.Temporary {
		t.Fatalf("untrusted certificate: err = %v", err)
	}
	if n := len(srv.Messages()); n != 0 {
		t.Fatalf("%d messages arrived over a failed session", n)
	}
}
