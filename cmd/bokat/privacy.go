package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"strings"
	"time"
	"unicode"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/notify"
	"bokat/internal/privacy"
	"bokat/internal/sqlstore"
)

// resealWorker re-seals contact data written in plain text (before sealing,
// or by an older binary during a rolling upgrade) or sealed with a key that
// is no longer the first of --secret-key: one pass at once (privacy's
// ResealPass), then one every interval. Several processes may run it.
func resealWorker(db *sqlstore.DB, log *slog.Logger, interval time.Duration) worker {
	p := privacy.New(sqlstore.Bind[privacy.Tx](db))
	return worker{name: "contact-reseal", run: func(ctx context.Context) error {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			total := p.ResealPass(ctx, func(err error, resealed int) {
				// Rows that do not open are skipped and named (ids only);
				// the others are re-sealed all the same.
				log.Warn("contact re-seal incomplete", "error", err.Error(), "resealed_rows", resealed)
			})
			if total > 0 {
				log.Info("contact data re-sealed", "rows", total)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
			}
		}
	}}
}

// retentionConfig holds how long customer contact data, and the operators'
// audit trail, are kept.
type retentionConfig struct {
	RetainBookings      time.Duration
	RetainRequests      time.Duration
	RetainOperatorAudit time.Duration
}

func (c *retentionConfig) register(fs *flagSet) {
	c.RetainBookings, c.RetainRequests = privacy.DefaultRetainBookings, privacy.DefaultRetainRequests
	c.RetainOperatorAudit = privacy.DefaultRetainOperatorAudit
	fs.Text(new(string), "retain-bookings", "BOKAT_RETAIN_BOOKINGS", "1095d",
		"how long a booking's customer contact data is kept after its slot ended or it was cancelled (Go duration or days, e.g. 1095d)",
		retentionSetter(&c.RetainBookings))
	fs.Text(new(string), "retain-requests", "BOKAT_RETAIN_REQUESTS", "30d",
		"how long a follow-up request's customer contact data is kept after it was created (Go duration or days, e.g. 30d)",
		retentionSetter(&c.RetainRequests))
	fs.Text(new(string), "retain-operator-audit", "BOKAT_RETAIN_OPERATOR_AUDIT", "730d",
		"how long a row of the operators' audit trail (credential actions, by operator or user name) is kept (Go duration or days)",
		retentionSetter(&c.RetainOperatorAudit))
}

func retentionSetter(p *time.Duration) func(string) error {
	return func(s string) error {
		d, err := privacy.ParseRetention(s)
		if err != nil {
			return err
		}
		*p = d
		return nil
	}
}

// retentionWorker erases expired customer contact data (eraseExpired) at
// once and then every interval. Several processes may run it.
func retentionWorker(db *sqlstore.DB, log *slog.Logger, now func() time.Time, c retentionConfig, mailDir string, interval time.Duration) worker {
	return worker{name: "contact-retention", run: func(ctx context.Context) error {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			eraseExpired(ctx, db, log, now, c, mailDir)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
			}
		}
	}}
}

// devMailDir is the development mail folder serve writes .eml files to, or
// "" when mail goes by SMTP.
func (c opsConfig) devMailDir() string {
	if c.SMTPURL != "" {
		return ""
	}
	return c.MailDir
}

// eraseExpired runs the retention job once (privacy's EraseExpired). With
// mailDir (the development mail folder; empty when mail goes by SMTP) each
// batch also removes, before it commits, the .eml files of the messages
// about the erased bookings and requests: every booking message names its
// booking id, every request message its request id
// (notify.EraseFolderMessages). It logs counts only.
func eraseExpired(ctx context.Context, db *sqlstore.DB, log *slog.Logger, now func() time.Time, c retentionConfig, mailDir string) {
	var copies func([]string) (int, error)
	if mailDir != "" {
		copies = func(ids []string) (int, error) {
			removed, err := notify.EraseFolderMessages(mailDir, nil, ids)
			if err != nil {
				// The error names a file path, never its content; still,
				// say only what failed.
				return removed, errors.New("cannot read or remove a file in the mail folder")
			}
			return removed, nil
		}
	}
	p := privacy.New(sqlstore.Bind[privacy.Tx](db))
	e, err := p.EraseExpired(ctx, now, privacy.Retention{Bookings: c.RetainBookings, Requests: c.RetainRequests,
		OperatorAudit: c.RetainOperatorAudit}, copies)
	if err != nil && ctx.Err() == nil {
		log.Warn("contact retention failed", "error", err.Error())
	}
	if len(e.Bookings)+len(e.Requests) > 0 {
		log.Info("expired contact data erased", "bookings", len(e.Bookings), "requests", len(e.Requests),
			"dropped_notifications", e.DroppedNotifications, "removed_mail_files", e.Copies)
	}
	if e.IdempotencyKeys > 0 {
		log.Info("expired idempotency keys deleted", "keys", e.IdempotencyKeys)
	}
	if e.InvitationAddresses > 0 {
		log.Info("addresses of expired provider invitations erased", "invitations", e.InvitationAddresses)
	}
	if e.OperatorAudit > 0 {
		log.Info("old operator audit rows deleted", "rows", e.OperatorAudit)
	}
}

// privacyConfig is the configuration of `bokat privacy`: the store, and the
// keys that open sealed contact data and key the blind index.
type privacyConfig struct {
	commonConfig
	SecretKey string
	Email     string
	Phone     string
}

func (c *privacyConfig) register(fs *flagSet) {
	c.commonConfig.register(fs)
	fs.Text(&c.SecretKey, "secret-key", "BOKAT_SECRET_KEY", "", "base64 key (32 bytes) sealing customer contact data, as given to serve; comma-separated when rotating",
		func(s string) error {
			_, err := parseSecretKeys(s)
			return err
		})
	fs.String(&c.Email, "email", "", "", "the person's e-mail address")
	fs.String(&c.Phone, "phone", "", "", "the person's phone number")
}

// openPrivacy opens the store with the vault of serve, and a logger that
// records the command with keyed hashes of the address and number only.
func openPrivacy(ctx context.Context, name string, args []string, e env, more ...func(*flagSet)) (*sqlstore.DB, privacyConfig, *slog.Logger, error) {
	fs := newFlagSet("privacy "+name, e)
	var c privacyConfig
	c.register(fs)
	for _, register := range more {
		register(fs)
	}
	rest, err := fs.parse(args)
	if err != nil {
		return nil, c, nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	if len(rest) > 0 {
		return nil, c, nil, fmt.Errorf("%w: unexpected argument %q", errUsage, rest[0])
	}
	if strings.TrimSpace(c.Email) == "" && strings.TrimSpace(c.Phone) == "" {
		return nil, c, nil, fmt.Errorf("%w: bokat privacy %s needs --email ADDRESS and/or --phone NUMBER", errUsage, name)
	}
	if err := c.validate(); err != nil {
		return nil, c, nil, err
	}
	log, err := newLogger(e.stderr, c.LogLevel)
	if err != nil {
		return nil, c, nil, err
	}
	db, hasher, _, err := openSealedStore(ctx, c.commonConfig, c.SecretKey)
	if err != nil {
		return nil, c, nil, err
	}
	log = log.With("command", "privacy "+name,
		"email_hash", keyedOrEmpty(hasher, "privacy-log-email", sqlstore.NormaliseEmail(c.Email)),
		"phone_hash", keyedOrEmpty(hasher, "privacy-log-phone", sqlstore.NormalisePhone(c.Phone)))
	return db, c, log, nil
}

func keyedOrEmpty(h *auth.Hasher, domain, value string) string {
	if value == "" {
		return ""
	}
	return h.Hash(domain, value)[:16]
}

// runPrivacyExport prints, as one JSON document, everything held for a
// person: bookings, follow-up requests (with their contact data and consent
// opened) and sign-in accounts.
func runPrivacyExport(ctx context.Context, args []string, e env) error {
	db, c, log, err := openPrivacy(ctx, "export", args, e)
	if err != nil {
		return err
	}
	defer db.Close()
	recs, err := privacy.New(sqlstore.Bind[privacy.Tx](db)).PersonRecords(ctx, c.Email, c.Phone)
	if err != nil {
		return err
	}
	doc := exportDocument(recs, e.now())
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	log.Info("personal data exported", "bookings", len(doc.Bookings), "requests", len(doc.Requests), "accounts", len(doc.Accounts))
	return nil
}

// Wire types of `bokat privacy export`.
type (
	exportWire struct {
		ExportedAt time.Time           `json:"exported_at"`
		Bookings   []exportBookingWire `json:"bookings"`
		Requests   []exportRequestWire `json:"follow_up_requests"`
		Accounts   []exportAccountWire `json:"sign_in_accounts"`
	}
	exportCustomerWire struct {
		Name      string `json:"name,omitempty"`
		FirstName string `json:"first_name,omitempty"`
		LastName  string `json:"last_name,omitempty"`
		Phone     string `json:"phone,omitempty"`
		Email     string `json:"email,omitempty"`
	}
	exportConsentWire struct {
		Statement   string     `json:"statement,omitempty"`
		Source      string     `json:"source,omitempty"`
		CollectedAt *time.Time `json:"collected_at,omitempty"`
		// Method is how a booking's consent was obtained: elicitation or
		// caller_declared.
		Method string `json:"method,omitempty"`
	}
	exportBookingWire struct {
		ID                 string             `json:"id"`
		RequestID          string             `json:"request_id"`
		Status             string             `json:"status"`
		ProviderID         string             `json:"provider_id"`
		ProviderName       string             `json:"provider_name"`
		ServiceID          string             `json:"service_id"`
		Service            string             `json:"service"`
		SlotStart          time.Time          `json:"slot_start_at"`
		SlotEnd            time.Time          `json:"slot_end_at"`
		PriceSEK           int64              `json:"price_sek"`
		TermsVersion       string             `json:"terms_version"`
		TermsAcceptedAt    time.Time          `json:"terms_accepted_at"`
		Customer           exportCustomerWire `json:"customer"`
		ServiceAddress     string             `json:"service_address,omitempty"`
		Postcode           string             `json:"postcode"`
		DestinationAddress string             `json:"destination_address,omitempty"`
		Consent            exportConsentWire  `json:"consent"`
		// ChangeConsentMethod is how consent to the latest cancellation or
		// reschedule was obtained.
		ChangeConsentMethod string     `json:"change_consent_method,omitempty"`
		ConfirmedAt         time.Time  `json:"confirmed_at"`
		CancelledAt         *time.Time `json:"cancelled_at,omitempty"`
		CancelNotes         string     `json:"cancel_notes,omitempty"`
		ContactErasedAt     *time.Time `json:"contact_erased_at,omitempty"`
	}
	exportRequestWire struct {
		ID          string            `json:"id"`
		Status      string            `json:"status"`
		VerticalID  string            `json:"vertical_id"`
		JobTypeID   string            `json:"job_type_id"`
		Description string            `json:"description,omitempty"`
		Customer    json.RawMessage   `json:"customer"`
		Location    json.RawMessage   `json:"location"`
		Timing      json.RawMessage   `json:"timing"`
		Details     json.RawMessage   `json:"details"`
		Consent     exportConsentWire `json:"consent"`
		ProviderIDs []string          `json:"provider_ids"`
		CreatedAt   time.Time         `json:"created_at"`
	}
	exportAccountWire struct {
		ID           string     `json:"id"`
		Email        string     `json:"email"`
		CreatedAt    time.Time  `json:"created_at"`
		LastSignInAt *time.Time `json:"last_sign_in_at,omitempty"`
	}
)

func optionalTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func rawOrEmpty(b []byte) json.RawMessage {
	if !json.Valid(b) {
		return json.RawMessage("{}")
	}
	return json.RawMessage(b)
}

func exportDocument(recs privacy.Records, now time.Time) exportWire {
	doc := exportWire{ExportedAt: now.UTC().Truncate(time.Second), Bookings: []exportBookingWire{},
		Requests: []exportRequestWire{}, Accounts: []exportAccountWire{}}
	for _, b := range recs.Bookings {
		doc.Bookings = append(doc.Bookings, exportBookingWire{
			ID: b.ID, RequestID: b.RequestID, Status: string(b.Status), ProviderID: b.ProviderID, ProviderName: b.ProviderName,
			ServiceID: b.ServiceID, Service: b.ServiceLabelSV, SlotStart: b.SlotStart, SlotEnd: b.SlotEnd, PriceSEK: b.PriceSEK,
			TermsVersion: b.TermsVersion, TermsAcceptedAt: b.TermsAcceptedAt,
			Customer: exportCustomerWire{Name: b.Contact.Name, FirstName: b.Contact.FirstName, LastName: b.Contact.LastName,
				Phone: b.Contact.Phone, Email: b.Contact.Email},
			ServiceAddress: b.Contact.ServiceAddress, Postcode: b.Postcode, DestinationAddress: b.Contact.DestinationAddress,
			Consent: exportConsentWire{Statement: b.Consent.Statement, Source: b.Consent.Source,
				CollectedAt: optionalTime(b.Consent.CollectedAt), Method: b.Consent.MethodOrDefault()},
			ChangeConsentMethod: string(b.ChangeConsentMethod),
			ConfirmedAt:         b.ConfirmedAt, CancelledAt: optionalTime(b.CancelledAt), CancelNotes: b.CancelNotes,
			ContactErasedAt: optionalTime(b.ContactErasedAt),
		})
	}
	for _, r := range recs.Requests {
		w := exportRequestWire{ID: r.ID, Status: r.Status, VerticalID: r.VerticalID, JobTypeID: r.JobTypeID,
			Description: r.Description, Customer: rawOrEmpty(r.CustomerJSON), Location: rawOrEmpty(r.LocationJSON),
			Timing: rawOrEmpty(r.TimingJSON), Details: rawOrEmpty(r.DetailsJSON),
			Consent: exportConsentWire{Statement: r.ConsentStatement, Source: r.ConsentSource,
				CollectedAt: optionalTime(r.ConsentCollectedAt)},
			ProviderIDs: []string{}, CreatedAt: r.CreatedAt}
		for _, c := range r.Candidates {
			w.ProviderIDs = append(w.ProviderIDs, c.ProviderID)
		}
		doc.Requests = append(doc.Requests, w)
	}
	for _, a := range recs.Accounts {
		doc.Accounts = append(doc.Accounts, exportAccountWire{ID: a.ID, Email: a.Email, CreatedAt: a.CreatedAt,
			LastSignInAt: optionalTime(a.LastSignInAt)})
	}
	return doc
}

// runPrivacyErase erases everything held for a person in one transaction
// and prints what it erased: ids and counts, no personal data. A future
// confirmed booking refuses the erasure unless --cancel-future is given.
func runPrivacyErase(ctx context.Context, args []string, e env) error {
	var (
		cancelFuture bool
		mailDir      string
	)
	db, c, log, err := openPrivacy(ctx, "erase", args, e, func(fs *flagSet) {
		fs.Bool(&cancelFuture, "cancel-future", "", false, "cancel the person's confirmed bookings still to come (with the usual events and notifications) before erasing")
		fs.String(&mailDir, "mail-dir", "BOKAT_MAIL_DIR", "bokat-data/mail", "the development mail folder serve writes .eml files to: the person's messages there are removed too")
	})
	if err != nil {
		return err
	}
	defer db.Close()
	now := e.now().UTC()
	var cancel func(context.Context, privacy.Tx, bokat.Booking) error
	if cancelFuture {
		cancel = privacy.CancelAsLifecycle(now)
	}
	out, err := privacy.New(sqlstore.Bind[privacy.Tx](db)).ErasePerson(ctx, c.Email, c.Phone, now, cancel)
	if err != nil {
		log.Warn("personal data not erased", "error", err.Error())
		return err
	}
	ids := append(append(append([]string(nil), out.Bookings...), out.Requests...), out.Cancelled...)
	files, err := notify.EraseFolderMessages(mailDir, []string{c.Email}, ids)
	if err != nil {
		log.Warn("the mail folder was not cleared of the person's messages", "error", "cannot read or remove a file in --mail-dir")
		return fmt.Errorf("erased in the database, but the mail folder %s could not be cleared: %w", mailDir, err)
	}
	doc := eraseWire{Bookings: orEmpty(out.Bookings), Requests: orEmpty(out.Requests), Accounts: orEmpty(out.Accounts),
		Cancelled: orEmpty(out.Cancelled), DroppedNotifications: out.DroppedNotifications, MailFiles: files}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	log.Info("personal data erased", "bookings", len(out.Bookings), "requests", len(out.Requests),
		"accounts", len(out.Accounts), "cancelled", len(out.Cancelled), "dropped_notifications", out.DroppedNotifications,
		"removed_mail_files", files)
	return nil
}

// eraseWire is what `bokat privacy erase` prints.
type eraseWire struct {
	Bookings             []string `json:"erased_booking_ids"`
	Requests             []string `json:"erased_follow_up_request_ids"`
	Accounts             []string `json:"deleted_sign_in_account_ids"`
	Cancelled            []string `json:"cancelled_booking_ids"`
	DroppedNotifications int      `json:"dropped_notifications"`
	MailFiles            int      `json:"removed_mail_files"`
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// correctionFlags registers the --set-* flags of `bokat privacy correct`
// into c: a flag given sets its field (validated; errors never repeat the
// value).
func correctionFlags(c *privacy.ContactCorrection) func(*flagSet) {
	return func(fs *flagSet) {
		text := func(p **string, name, usage string, check func(string) (string, error)) {
			fs.Text(new(string), name, "", "", usage, func(s string) error {
				v, err := check(s)
				if err != nil {
					return err
				}
				*p = &v
				return nil
			})
		}
		name := func(s string) (string, error) {
			s = strings.TrimSpace(s)
			if s == "" || len(s) > 200 || strings.ContainsFunc(s, unicode.IsControl) {
				return "", errors.New("must be a name of 1 to 200 characters, without control characters")
			}
			return s, nil
		}
		text(&c.Name, "set-name", "the corrected full name (replaces first and last name)", name)
		text(&c.FirstName, "set-first-name", "the corrected first name (with --set-last-name; replaces the full name)", name)
		text(&c.LastName, "set-last-name", "the corrected last name (with --set-first-name; replaces the full name)", name)
		text(&c.Phone, "set-phone", "the corrected phone number", func(s string) (string, error) {
			s = strings.TrimSpace(s)
			digits := len(strings.TrimPrefix(sqlstore.NormalisePhone(s), "+"))
			if digits < 7 || digits > 15 || strings.ContainsFunc(s, func(r rune) bool { return !strings.ContainsRune("+0123456789 -()", r) }) {
				return "", errors.New("must be a phone number: digits, spaces, dashes and parentheses, optionally a leading +")
			}
			return s, nil
		})
		text(&c.Email, "set-email", "the corrected e-mail address", func(s string) (string, error) {
			s = strings.TrimSpace(s)
			a, err := mail.ParseAddress(s)
			if err != nil || a.Address != s || a.Name != "" {
				return "", errors.New("must be a bare e-mail address, like name@example.se")
			}
			return s, nil
		})
	}
}

// runPrivacyCorrect corrects the customer contact data of every booking
// and follow-up request of a person in one transaction and prints what it
// corrected: ids and the names of the fields, no personal data. Messages
// still queued go to the corrected address (they read the booking when
// sent); messages already sent, and the development mail folder, are
// records of what was sent and stay as they are.
func runPrivacyCorrect(ctx context.Context, args []string, e env) error {
	var corr privacy.ContactCorrection
	db, c, log, err := openPrivacy(ctx, "correct", args, e, correctionFlags(&corr))
	if err != nil {
		return err
	}
	defer db.Close()
	if len(corr.Fields()) == 0 {
		return fmt.Errorf("%w: bokat privacy correct needs at least one of --set-name, --set-first-name, --set-last-name, --set-phone, --set-email", errUsage)
	}
	out, err := privacy.New(sqlstore.Bind[privacy.Tx](db)).CorrectPerson(ctx, c.Email, c.Phone, corr)
	if err != nil {
		log.Warn("personal data not corrected", "error", err.Error())
		return err
	}
	doc := correctWire{Bookings: orEmpty(out.Bookings), Requests: orEmpty(out.Requests), Fields: corr.Fields()}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	log.Info("personal data corrected", "bookings", len(out.Bookings), "requests", len(out.Requests),
		"fields", strings.Join(doc.Fields, ","))
	return nil
}

// correctWire is what `bokat privacy correct` prints.
type correctWire struct {
	Bookings []string `json:"corrected_booking_ids"`
	Requests []string `json:"corrected_follow_up_request_ids"`
	Fields   []string `json:"corrected_fields"`
}
