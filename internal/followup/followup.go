// Package followup creates provider follow-up requests: the fallback when no
// direct booking option exists. A request hands a consented job description
// to the providers that cover the customer's postcode; it never confirms a
// booking, a provider, availability, a time or a price.
package followup

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"bokat"
	"bokat/internal/catalog"
	"bokat/internal/idem"
)

// OpCreate is the idempotency operation of Create: keys are scoped to the
// principal and it.
const OpCreate = "requests.create"

// Values of the request fields the contract leaves open. They are stable and
// documented in docs/decisions.md.
const (
	// StatusReadyToSend is the status of a created request.
	StatusReadyToSend = "ready_to_send"
	// TaxonomyDeclared: the caller chose the job type; the service checked it
	// against the catalog but did not classify the description itself.
	TaxonomyDeclared = "caller_declared"
	// BookingModeFollowUp: the request is handed to providers who contact
	// the customer; nothing is booked.
	BookingModeFollowUp = "provider_follow_up"
	// PersistenceStored: the request was committed to the store.
	PersistenceStored = "stored"
	// DefaultNextStep is the customer_next_step when the caller gives none.
	DefaultNextStep = "contact_me"
	// DefaultSource is the source when the caller gives none.
	DefaultSource = "external_model"
	// EventRequestCreated is the event type of the provider notification job.
	EventRequestCreated = bokat.NotificationRequestCreated
)

// Customer is the customer's contact data. It never leaves the store except
// in the provider notification.
type Customer struct {
	Name      string `json:"name,omitempty"`
	FirstName string `json:"first_name,omitempty"`
	LastName  string `json:"last_name,omitempty"`
	Phone     string `json:"phone"`
	Email     string `json:"email"`
}

// Location is where the job is; at least one field is set.
type Location struct {
	Input    string `json:"input,omitempty"`
	Address  string `json:"address,omitempty"`
	Postcode string `json:"postcode,omitempty"`
}

// Timing is when the customer wants the job done.
type Timing struct {
	PreferredTimeText string `json:"preferred_time_text,omitempty"`
	Urgency           string `json:"urgency,omitempty"`
}

// Input is a validated request-creation body.
type Input struct {
	VerticalID         string
	JobTypeID          string
	Description        string
	Customer           Customer
	Location           Location
	Timing             Timing
	BudgetSEK          *int64
	Details            map[string]any
	CustomerNextStep   string
	Source             string
	ExternalReference  string
	Locale             string
	Timezone           string
	ConsentConfirmed   bool
	ConsentStatement   string
	ConsentSource      string
	ConsentCollectedAt time.Time
}

// Candidate is a provider that may receive the request.
type Candidate struct {
	ProviderID string
	Name       string
	// DirectBooking: the provider owns a fixed price for the job type's
	// seed service, so a search may find a direct option with it.
	DirectBooking bool
}

// Request is a created request as the API reports it.
type Request struct {
	ID               string
	SessionID        string
	Status           string
	VerticalID       string
	JobTypeID        string
	TaxonomyConf     string
	CustomerNextStep string
	Candidates       []Candidate
	BookingMode      string
	Persistence      string
	Backend          string
}

// Service creates follow-up requests.
type Service struct {
	db       Store
	cat      *catalog.Catalog
	now      func() time.Time
	onQueued func()
}

// New returns a Service; now is its clock (time.Now when nil). onQueued,
// when not nil, is called after Create committed a request's notification
// jobs (the serve process wakes its notification worker with it).
func New(db Store, cat *catalog.Catalog, now func() time.Time, onQueued func()) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{db: db, cat: cat, now: now, onQueued: onQueued}
}

// idempotencyTTL is how long request keys are kept (DECISIONS.md: at least 30 days).
const idempotencyTTL = 30 * 24 * time.Hour

// CheckConsent is the consent rule of request creation, the one place it is
// stated: without the customer's explicit consent (confirmed) a request
// carrying their personal data is not created. It answers 400
// consent_required with consent_required_before_create. Create applies it
// to its input before anything else; the REST API applies it earlier, to
// the flag of a body it has not yet decoded, so that a missing consent is
// answered before any other fault and the personal data is not processed
// without it.
func CheckConsent(confirmed bool) error {
	if confirmed {
		return nil
	}
	return &bokat.Error{Code: bokat.CodeConsentRequired,
		Detail:       "The customer's explicit consent (user_consent_confirmed: true) is required before a request with personal data is created.",
		Issues:       []string{"user_consent_confirmed: must be true"},
		SafeNextStep: "Ask the user whether they consent to sharing their name, phone, e-mail and job details with providers; retry only with user_consent_confirmed true.",
		Extra:        map[string]any{"consent_required_before_create": true}}
}

// CheckTaxonomy returns a validation_failed error for a vertical or job type
// the catalog does not accept, naming the accepted ids.
func (s *Service) CheckTaxonomy(verticalID, jobTypeID string) error {
	if u, ok := s.cat.Unavailable(verticalID); ok {
		return &bokat.Error{Code: bokat.CodeValidationFailed,
			Detail:       fmt.Sprintf("The vertical %s is not bookable or requestable yet.", u.ID),
			Issues:       []string{"vertical_id: is not available yet (not_bookable_yet)"},
			SafeNextStep: u.SafeNextStep,
			Extra:        map[string]any{"supported_vertical_ids": s.cat.VerticalIDs()}}
	}
	if _, ok := s.cat.Vertical(verticalID); !ok {
		return &bokat.Error{Code: bokat.CodeValidationFailed, Detail: "The vertical is not supported.",
			Issues: []string{"vertical_id: must be one of the supported verticals"},
			Extra:  map[string]any{"supported_vertical_ids": s.cat.VerticalIDs()}}
	}
	if _, ok := s.cat.JobType(verticalID, jobTypeID); !ok {
		return &bokat.Error{Code: bokat.CodeValidationFailed, Detail: "The job type is not one of the vertical's.",
			Issues: []string{"job_type_id: must be a job type of the vertical (see accepted_job_type_ids)"},
			Extra:  map[string]any{"accepted_job_type_ids": s.cat.JobTypeIDs(verticalID)}}
	}
	return nil
}

var postcodeRe = regexp.MustCompile(`(?:^|[^0-9])([0-9]{3}) ?([0-9]{2})(?:[^0-9]|$)`)

// Postcode returns the Swedish postcode of a location ("NNN NN"), read from
// the postcode field, else the address, else the free-text input; empty when
// none is found.
func Postcode(l Location) string {
	for _, s := range []string{l.Postcode, l.Address, l.Input} {
		if m := postcodeRe.FindStringSubmatch(s); m != nil {
			return m[1] + " " + m[2]
		}
	}
	return ""
}

// Create stores the request, its candidates and a provider notification job
// in one transaction, guarded by the idempotency key, at the realm's now
// (bokat.RealmNow: a test principal's test clock), and returns the
// outcome rendered by render (the stored response a replay returns). It
// refuses a request without consent (CheckConsent) and with a vertical or
// job type the catalog does not accept (CheckTaxonomy), in that order.
func (s *Service) Create(ctx context.Context, p bokat.Principal, in Input, key idem.Key, fingerprint string,
	render func(Request) (idem.Outcome, error)) (idem.Outcome, bool, error) {
	if err := CheckConsent(in.ConsentConfirmed); err != nil {
		return idem.Outcome{}, false, err
	}
	if err := s.CheckTaxonomy(in.VerticalID, in.JobTypeID); err != nil {
		return idem.Outcome{}, false, err
	}
	jt, _ := s.cat.JobType(in.VerticalID, in.JobTypeID)
	postcode := Postcode(in.Location)
	candidates, err := s.candidates(ctx, p.Realm(), in.VerticalID, jt, postcode)
	if err != nil {
		return idem.Outcome{}, false, err
	}
	// A test principal's request is on its owner's test clock (created_at,
	// the key's expiry), its notification job due at once on the server's.
	now := bokat.RealmNow(ctx, p.Realm(), s.now().UTC())
	out, replay, err := s.db.InIdempotentTx(ctx, key, fingerprint, now, now.Add(idempotencyTTL), func(tx Tx) (idem.Outcome, error) {
		id, session := bokat.FollowUpRequestIDPrefix+compactUUID(), bokat.FollowUpSessionIDPrefix+compactUUID()
		customer, _ := json.Marshal(in.Customer)
		loc, _ := json.Marshal(in.Location)
		tim, _ := json.Marshal(in.Timing)
		det, _ := json.Marshal(in.Details)
		if in.Details == nil {
			det = []byte("{}")
		}
		row := Record{
			ID: id, SessionID: session, OwnerClientID: p.ClientID, OwnerUserID: p.UserID, Mode: p.Realm(),
			VerticalID: in.VerticalID, JobTypeID: in.JobTypeID, Status: StatusReadyToSend, Description: in.Description,
			CustomerJSON: customer, LocationJSON: loc, Postcode: postcode, TimingJSON: tim, DetailsJSON: det,
			BudgetSEK: in.BudgetSEK, CustomerNextStep: orDefault(in.CustomerNextStep, DefaultNextStep),
			Source: orDefault(in.Source, DefaultSource), ExternalReference: in.ExternalReference,
			Locale: orDefault(in.Locale, "sv-SE"), Timezone: orDefault(in.Timezone, "Europe/Stockholm"),
			ConsentStatement: in.ConsentStatement, ConsentSource: in.ConsentSource, ConsentCollectedAt: in.ConsentCollectedAt,
			CreatedAt: now,
		}
		for _, c := range candidates {
			row.Candidates = append(row.Candidates, RecordCandidate{ProviderID: c.ProviderID, DirectBooking: c.DirectBooking})
		}
		if err := tx.InsertFollowUpRequest(ctx, row); err != nil {
			return idem.Outcome{}, err
		}
		if len(candidates) > 0 {
			err := tx.InsertNotificationJob(ctx, bokat.NotificationJob{ID: bokat.NotificationIDPrefix + compactUUID(), RequestID: id,
				EventType: EventRequestCreated, Recipient: bokat.RecipientProvider, Status: bokat.NotificationPending,
				NextAttemptAt: bokat.ServerTime(ctx, p.Realm(), now), CreatedAt: now, Mode: p.Realm()})
			if err != nil {
				return idem.Outcome{}, err
			}
		}
		out, err := render(Request{
			ID: id, SessionID: session, Status: StatusReadyToSend, VerticalID: in.VerticalID, JobTypeID: in.JobTypeID,
			TaxonomyConf: TaxonomyDeclared, CustomerNextStep: row.CustomerNextStep, Candidates: candidates,
			BookingMode: BookingModeFollowUp, Persistence: PersistenceStored, Backend: tx.EngineName(),
		})
		out.ResourceID = id
		return out, err
	})
	if err == nil && !replay && s.onQueued != nil {
		s.onQueued()
	}
	return out, replay, err
}

// candidates finds the providers a request goes to: active, covering the
// postcode, offering a service of the vertical, of the realm mode (a test
// request never reaches a live provider, nor the reverse).
func (s *Service) candidates(ctx context.Context, mode bokat.Mode, verticalID string, jt catalog.JobType, postcode string) ([]Candidate, error) {
	if postcode == "" {
		return nil, nil
	}
	code, err := strconv.Atoi(strings.ReplaceAll(postcode, " ", ""))
	if err != nil {
		return nil, nil
	}
	var serviceIDs []string
	for _, id := range s.cat.ServiceIDs() {
		if svc, _ := s.cat.Service(id); svc.VerticalID == verticalID {
			serviceIDs = append(serviceIDs, id)
		}
	}
	direct := ""
	if jt.Seed != nil {
		direct = jt.Seed.ServiceID
	}
	found, err := s.db.ProviderCandidates(ctx, mode, serviceIDs, direct, code)
	if err != nil {
		return nil, fmt.Errorf("find provider candidates: %w", err)
	}
	out := make([]Candidate, 0, len(found))
	for _, c := range found {
		out = append(out, Candidate{ProviderID: c.ID, Name: c.Name, DirectBooking: c.DirectBooking})
	}
	return out, nil
}

func orDefault(v, def string) string {
	if strings.TrimSpace(v) == "" {
		return def
	}
	return v
}

func compactUUID() string {
	id, err := uuid.NewV7()
	if err != nil {
		id = uuid.New()
	}
	return strings.ReplaceAll(id.String(), "-", "")
}
