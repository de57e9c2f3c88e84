package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"bokat"
	"bokat/internal/followup"
	"bokat/internal/idem"
)

// Wire types of request creation (CreatePublicRequest and its response).

type customerWire struct {
	Name      string `json:"name,omitempty"`
	FirstName string `json:"first_name,omitempty"`
	LastName  string `json:"last_name,omitempty"`
	Phone     string `json:"phone"`
	Email     string `json:"email"`
}

type createRequestBody struct {
	SpecVersion          string       `json:"spec_version,omitempty"`
	VerticalID           string       `json:"vertical_id"`
	JobTypeID            string       `json:"job_type_id"`
	Description          string       `json:"description"`
	UserConsentConfirmed bool         `json:"user_consent_confirmed"`
	UserConsentStatement string       `json:"user_consent_statement,omitempty"`
	ConsentCollectedAt   *time.Time   `json:"consent_collected_at,omitempty"`
	ConsentSource        string       `json:"consent_source,omitempty"`
	Customer             customerWire `json:"customer"`
	Location             struct {
		Input    string `json:"input,omitempty"`
		Address  string `json:"address,omitempty"`
		Postcode string `json:"postcode,omitempty"`
	} `json:"location"`
	Timing            timingWire     `json:"timing"`
	BudgetSEK         *wholeNumber   `json:"budget_sek,omitempty"`
	Details           map[string]any `json:"details,omitempty"`
	CustomerNextStep  string         `json:"customer_next_step,omitempty"`
	Source            string         `json:"source,omitempty"`
	ExternalReference string         `json:"external_reference,omitempty"`
	IdempotencyKey    string         `json:"idempotency_key,omitempty"`
	Locale            string         `json:"locale,omitempty"`
	Timezone          string         `json:"timezone,omitempty"`
}

type providerCandidateWire struct {
	ID                string `json:"id"`
	Name              string `json:"name"`
	CanReceiveRequest bool   `json:"can_receive_request"`
	DirectBooking     bool   `json:"direct_booking"`
}

type requestWire struct {
	ID                     string                  `json:"id"`
	SessionID              string                  `json:"session_id"`
	Status                 string                  `json:"status"`
	VerticalID             string                  `json:"vertical_id"`
	JobTypeID              string                  `json:"job_type_id"`
	TaxonomyConfidence     string                  `json:"taxonomy_confidence"`
	CustomerNextStep       string                  `json:"customer_next_step"`
	CandidateProviderCount int                     `json:"candidate_provider_count"`
	ProviderCandidates     []providerCandidateWire `json:"provider_candidates"`
	BookingMode            string                  `json:"booking_mode"`
	PersistenceStatus      string                  `json:"persistence_status"`
	PersistenceBackend     string                  `json:"persistence_backend"`
}

type createRequestResponse struct {
	OK                  bool        `json:"ok"`
	SpecVersion         string      `json:"spec_version"`
	Request             requestWire `json:"request"`
	BookingCreated      bool        `json:"booking_created"`
	AvailabilityChecked bool        `json:"availability_checked"`
	ProviderSelected    bool        `json:"provider_selected"`
	SafeNextStep        string      `json:"safe_next_step"`
}

const requestSafeNextStep = "A provider follow-up request was created; it is NOT a booking. Tell the user that %s " +
	"may contact them, and that no booking, provider, availability, appointment time or price is confirmed. " +
	"Do not claim any of these. To check for a directly bookable option, search booking options."

// handleCreateRequest serves POST /v1/requests and its deprecated twin.
// Its key may come in the Idempotency-Key header or the body; a replay
// repeats the 201 with the stored body.
func (s *Server) handleCreateRequest(w http.ResponseWriter, r *http.Request) error {
	return serveKeyed(s, w, r, keyedWrite{operation: followup.OpCreate, precheck: s.requestPrecheck, headerKey: true,
		status: http.StatusCreated},
		func(p bokat.Principal, in *createRequestBody, key idem.Key, fp string) (idem.Outcome, bool, error) {
			return s.followups.Create(r.Context(), p, in.input(), key, fp, createRequestOutcome)
		})
}

// requestPrecheck checks a request's consent (the use case's rule,
// followup.CheckConsent) before anything else (without it the personal data
// in the body is not processed at all), then its taxonomy, so that an
// unknown vertical or job type gets its own code.
func (s *Server) requestPrecheck(body []byte) error {
	var peek struct {
		UserConsentConfirmed *bool `json:"user_consent_confirmed"`
		VerticalID           any   `json:"vertical_id"`
		JobTypeID            any   `json:"job_type_id"`
	}
	_ = json.Unmarshal(body, &peek)
	if err := followup.CheckConsent(peek.UserConsentConfirmed != nil && *peek.UserConsentConfirmed); err != nil {
		return err
	}
	if v, ok := peek.VerticalID.(string); ok {
		if jt, ok := peek.JobTypeID.(string); ok {
			return s.followups.CheckTaxonomy(v, jt)
		}
	}
	return nil
}

// input maps a request to the use case's input.
func (in *createRequestBody) input() followup.Input {
	input := followup.Input{
		VerticalID: in.VerticalID, JobTypeID: in.JobTypeID, Description: in.Description,
		Customer:  followup.Customer(in.Customer),
		Location:  followup.Location(in.Location),
		Timing:    followup.Timing(in.Timing),
		BudgetSEK: in.BudgetSEK.int64(), Details: in.Details, CustomerNextStep: in.CustomerNextStep, Source: in.Source,
		ExternalReference: in.ExternalReference, Locale: in.Locale, Timezone: in.Timezone,
		ConsentConfirmed: in.UserConsentConfirmed, ConsentStatement: in.UserConsentStatement, ConsentSource: in.ConsentSource,
	}
	if in.ConsentCollectedAt != nil {
		input.ConsentCollectedAt = *in.ConsentCollectedAt
	}
	return input
}

// createRequestOutcome renders the answer of a new request (HTTP 201),
// stored with its idempotency key.
func createRequestOutcome(req followup.Request) (idem.Outcome, error) {
	resp := createRequestResponse{
		OK: true, SpecVersion: bokat.RequestsContractVersion,
		Request: requestWire{
			ID: req.ID, SessionID: req.SessionID, Status: req.Status, VerticalID: req.VerticalID,
			JobTypeID: req.JobTypeID, TaxonomyConfidence: req.TaxonomyConf, CustomerNextStep: req.CustomerNextStep,
			CandidateProviderCount: len(req.Candidates), ProviderCandidates: []providerCandidateWire{},
			BookingMode: req.BookingMode, PersistenceStatus: req.Persistence, PersistenceBackend: req.Backend,
		},
	}
	for _, c := range req.Candidates {
		resp.Request.ProviderCandidates = append(resp.Request.ProviderCandidates, providerCandidateWire{
			ID: c.ProviderID, Name: c.Name, CanReceiveRequest: true, DirectBooking: c.DirectBooking})
	}
	who := "providers covering the area"
	if len(req.Candidates) == 0 {
		who = "a provider, once one covers the area,"
	}
	resp.SafeNextStep = fmt.Sprintf(requestSafeNextStep, who)
	raw, err := json.Marshal(resp)
	return idem.Outcome{Body: raw}, err
}
