package sqlstore

import (
	"context"
	"database/sql"
	"time"
)

// FollowUpRequest is a stored provider follow-up request. CustomerJSON holds
// the customer's contact data: it is never returned by the API or logged.
type FollowUpRequest struct {
	ID                 string
	SessionID          string
	OwnerClientID      string
	OwnerUserID        string
	VerticalID         string
	JobTypeID          string
	Status             string
	Description        string
	CustomerJSON       []byte
	LocationJSON       []byte
	Postcode           string
	TimingJSON         []byte
	DetailsJSON        []byte
	BudgetSEK          *int64
	CustomerNextStep   string
	Source             string
	ExternalReference  string
	Locale             string
	Timezone           string
	ConsentStatement   string
	ConsentSource      string
	ConsentCollectedAt time.Time
	Candidates         []RequestCandidate
	CreatedAt          time.Time
}

// RequestCandidate is a provider a request is handed to.
type RequestCandidate struct {
	ProviderID    string
	DirectBooking bool
}

// InsertFollowUpRequest writes a request and its candidates in the transaction.
func (tx *Tx) InsertFollowUpRequest(ctx context.Context, r FollowUpRequest) error {
	var budget sql.NullInt64
	if r.BudgetSEK != nil {
		budget = sql.NullInt64{Int64: *r.BudgetSEK, Valid: true}
	}
	details := r.DetailsJSON
	if len(details) == 0 {
		details = []byte("{}")
	}
	_, err := tx.tx.ExecContext(ctx,
		`INSERT INTO follow_up_requests (id, session_id, owner_client_id, owner_user_id, vertical_id, job_type_id, status,
		        description, customer_json, location_json, postcode, timing_json, details_json, budget_sek,
		        customer_next_step, source, external_reference, locale, timezone, consent_statement, consent_source,
		        consent_collected_at, candidate_count, created_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24)`,
		r.ID, r.SessionID, r.OwnerClientID, r.OwnerUserID, r.VerticalID, r.JobTypeID, r.Status,
		r.Description, string(r.CustomerJSON), string(r.LocationJSON), r.Postcode, string(r.TimingJSON), string(details), budget,
		r.CustomerNextStep, r.Source, r.ExternalReference, r.Locale, r.Timezone, r.ConsentStatement, r.ConsentSource,
		NullMillis(r.ConsentCollectedAt), len(r.Candidates), Millis(r.CreatedAt))
	if err != nil {
		return translate(err)
	}
	for _, c := range r.Candidates {
		if _, err := tx.tx.ExecContext(ctx,
			`INSERT INTO follow_up_request_candidates (request_id, provider_id, direct_booking) VALUES ($1, $2, $3)`,
			r.ID, c.ProviderID, c.DirectBooking); err != nil {
			return translate(err)
		}
	}
	return nil
}

// FollowUpRequest reads a request by id, or returns bokat.ErrNotFound.
func (db *DB) FollowUpRequest(ctx context.Context, id string) (FollowUpRequest, error) {
	var (
		r                       FollowUpRequest
		customer, loc, tim, det string
		budget, consentAt       sql.NullInt64
		created                 int64
	)
	err := db.read.QueryRowContext(ctx,
		`SELECT id, session_id, owner_client_id, owner_user_id, vertical_id, job_type_id, status, description,
		        customer_json, location_json, postcode, timing_json, details_json, budget_sek, customer_next_step,
		        source, external_reference, locale, timezone, consent_statement, consent_source, consent_collected_at, created_at
		   FROM follow_up_requests WHERE id = $1`, id).Scan(
		&r.ID, &r.SessionID, &r.OwnerClientID, &r.OwnerUserID, &r.VerticalID, &r.JobTypeID, &r.Status, &r.Description,
		&customer, &loc, &r.Postcode, &tim, &det, &budget, &r.CustomerNextStep,
		&r.Source, &r.ExternalReference, &r.Locale, &r.Timezone, &r.ConsentStatement, &r.ConsentSource, &consentAt, &created)
	if err != nil {
		return FollowUpRequest{}, translate(err)
	}
	r.CustomerJSON, r.LocationJSON, r.TimingJSON, r.DetailsJSON = []byte(customer), []byte(loc), []byte(tim), []byte(det)
	if budget.Valid {
		b := budget.Int64
		r.BudgetSEK = &b
	}
	r.ConsentCollectedAt = FromNullMillis(consentAt)
	r.CreatedAt = FromMillis(created)
	rows, err := db.read.QueryContext(ctx,
		`SELECT provider_id, direct_booking FROM follow_up_request_candidates WHERE request_id = $1 ORDER BY provider_id`, id)
	if err != nil {
		return FollowUpRequest{}, translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var c RequestCandidate
		if err := rows.Scan(&c.ProviderID, &c.DirectBooking); err != nil {
			return FollowUpRequest{}, translate(err)
		}
		r.Candidates = append(r.Candidates, c)
	}
	return r, translate(rows.Err())
}
