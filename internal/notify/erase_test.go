package notify_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"bokat/internal/notify"
)

func TestEraseFolderMessages(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "mail")
	m, err := notify.NewMailer(notify.MailerConfig{From: "Bokat <bokning@mail.bokat.example>", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// A long text puts the booking id where quoted-printable may break the line.
	long := strings.Repeat("Åtgärden gäller köksblandaren på tredje våningen. ", 3)
	msgs := []notify.Message{
		{Kind: "booking.confirmed/customer", To: "Greta@Example.se", Subject: "Bokningsbekräftelse", Text: "Hej Greta"},
		{Kind: "booking.confirmed/provider", To: "rorfix@provider.example", Subject: "Nytt bokat uppdrag",
			Text: long + "Bokning bkg_0123456789abcdef0123456789abcdef, kund Greta, 070-123 45 67"},
		{Kind: "sign_in_code", To: "greta@example.se", Subject: "Din kod", Text: "123456"},
		{Kind: "booking.confirmed/customer", To: "gustav@example.se", Subject: "Bokningsbekräftelse", Text: "Hej Gustav"},
		{Kind: "booking.confirmed/provider", To: "rorfix@provider.example", Subject: "Nytt bokat uppdrag",
			Text: long + "Bokning bkg_ffffffffffffffffffffffffffffffff, kund Gustav"},
	}
	for _, msg := range msgs {
		if err := m.Send(context.Background(), msg); err != nil {
			t.Fatal(err)
		}
	}
	n, err := notify.EraseFolderMessages(dir, []string{"greta@example.se"}, []string{"bkg_0123456789abcdef0123456789abcdef"})
	if err != nil || n != 3 {
		t.Fatalf("removed %d files (%v), want 3", n, err)
	}
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"Greta", "greta@", "bkg_0123"} {
			if strings.Contains(string(raw), s) {
				t.Errorf("%s still names %q", e.Name(), s)
			}
		}
		left = append(left, e.Name())
	}
	if len(left) != 2 || !slices.ContainsFunc(left, func(s string) bool { return strings.Contains(s, "provider") }) {
		t.Errorf("left %v, want Gustav's two messages", left)
	}
	if n, err := notify.EraseFolderMessages(filepath.Join(dir, "none"), []string{"x@example.se"}, nil); n != 0 || err != nil {
		t.Errorf("missing folder: %d %v", n, err)
	}
}
