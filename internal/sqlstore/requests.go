package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"bokat"
	"bokat/internal/followup"
)

// InsertFollowUpRequest writes a request and its candidates in the transaction.
func (tx *Tx) InsertFollowUpRequest(ctx context.Context, r followup.Record) error {
	var budget sql.NullInt64
	if r.BudgetSEK != nil {
		budget = sql.NullInt64{Int64: *r.BudgetSEK, Valid: true}
	}
	details := r.DetailsJSON
	if len(details) == 0 {
		details = []byte("{}")
	}
	v, err := tx.db.contactVault()
	if err != nil {
		return fmt.Errorf("insert request: %w", err)
	}
	keyID, emailIndex, phoneIndex, err := v.sealRequest(&r)
	if err != nil {
		return fmt.Errorf("insert request: %w", err)
	}
	_, err = tx.tx.ExecContext(ctx,
		`INSERT INTO follow_up_requests (id, session_id, owner_client_id, owner_user_id, vertical_id, job_type_id, status,
		        description, customer_json, location_json, postcode, timing_json, details_json, budget_sek,
		        customer_next_step, source, external_reference, locale, timezone, consent_statement, consent_source,
		        consent_collected_at, candidate_count, created_at, contact_key_id, customer_email_index, customer_phone_index, mode)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24,
		         $25, $26, $27, $28)`,
		r.ID, r.SessionID, r.OwnerClientID, r.OwnerUserID, r.VerticalID, r.JobTypeID, r.Status,
		r.Description, string(r.CustomerJSON), string(r.LocationJSON), r.Postcode, string(r.TimingJSON), string(details), budget,
		r.CustomerNextStep, r.Source, r.ExternalReference, r.Locale, r.Timezone, r.ConsentStatement, r.ConsentSource,
		NullMillis(r.ConsentCollectedAt), len(r.Candidates), Millis(r.CreatedAt), keyID, emailIndex, phoneIndex,
		string(r.Mode.Or()))
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
func (db *DB) FollowUpRequest(ctx context.Context, id string) (followup.Record, error) {
	v, err := db.contactVault()
	if err != nil {
		return followup.Record{}, err
	}
	var (
		r                       followup.Record
		customer, loc, tim, det string
		budget, consentAt       sql.NullInt64
		created                 int64
		keyID                   sql.NullString
	)
	err = db.read.QueryRowContext(ctx,
		`SELECT id, session_id, owner_client_id, owner_user_id, vertical_id, job_type_id, status, description,
		        customer_json, location_json, postcode, timing_json, details_json, budget_sek, customer_next_step,
		        source, external_reference, locale, timezone, consent_statement, consent_source, consent_collected_at, created_at,
		        contact_key_id
		   FROM follow_up_requests WHERE id = $1`, id).Scan(
		&r.ID, &r.SessionID, &r.OwnerClientID, &r.OwnerUserID, &r.VerticalID, &r.JobTypeID, &r.Status, &r.Description,
		&customer, &loc, &r.Postcode, &tim, &det, &budget, &r.CustomerNextStep,
		&r.Source, &r.ExternalReference, &r.Locale, &r.Timezone, &r.ConsentStatement, &r.ConsentSource, &consentAt, &created,
		&keyID)
	if err != nil {
		return followup.Record{}, translate(err)
	}
	r.CustomerJSON, r.LocationJSON, r.TimingJSON, r.DetailsJSON = []byte(customer), []byte(loc), []byte(tim), []byte(det)
	if err := v.openRequest(&r, keyID.String); err != nil {
		return followup.Record{}, err
	}
	if budget.Valid {
		b := budget.Int64
		r.BudgetSEK = &b
	}
	r.ConsentCollectedAt = FromNullMillis(consentAt)
	r.CreatedAt = FromMillis(created)
	rows, err := db.read.QueryContext(ctx,
		`SELECT provider_id, direct_booking, notification_status FROM follow_up_request_candidates
		  WHERE request_id = $1 ORDER BY provider_id`, id)
	if err != nil {
		return followup.Record{}, translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var c followup.RecordCandidate
		if err := rows.Scan(&c.ProviderID, &c.DirectBooking, &c.NotificationStatus); err != nil {
			return followup.Record{}, translate(err)
		}
		r.Candidates = append(r.Candidates, c)
	}
	return r, translate(rows.Err())
}

// ProviderCandidates returns the active providers covering the five-digit
// postcode in the realm mode that offer at least one of serviceIDs, ordered by name then id;
// DirectBooking marks those owning a price for directServiceID.
func (db *DB) ProviderCandidates(ctx context.Context, mode bokat.Mode, serviceIDs []string, directServiceID string, postcode int) ([]followup.ProviderMatch, error) {
	if len(serviceIDs) == 0 {
		return nil, nil
	}
	args := []any{postcode, directServiceID, string(mode.Or())}
	in := make([]byte, 0, 4*len(serviceIDs))
	for i, id := range serviceIDs {
		if i > 0 {
			in = append(in, ", "...)
		}
		args = append(args, id)
		in = append(in, fmt.Sprintf("$%d", len(args))...)
	}
	rows, err := db.read.QueryContext(ctx, `
		SELECT p.id, p.name,
		       EXISTS (SELECT 1 FROM provider_services d WHERE d.provider_id = p.id AND d.service_id = $2)
		  FROM providers p
		 WHERE p.active AND p.mode = $3
		   AND EXISTS (SELECT 1 FROM provider_postcodes c
		                WHERE c.provider_id = p.id AND c.postcode_from <= $1 AND $1 <= c.postcode_to)
		   AND EXISTS (SELECT 1 FROM provider_services s
		                WHERE s.provider_id = p.id AND s.service_id IN (`+string(in)+`))
		 ORDER BY p.name, p.id`, args...)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []followup.ProviderMatch
	for rows.Next() {
		var c followup.ProviderMatch
		if err := rows.Scan(&c.ID, &c.Name, &c.DirectBooking); err != nil {
			return nil, translate(err)
		}
		out = append(out, c)
	}
	return out, translate(rows.Err())
}

// EngineName is the transaction's engine as text ("sqlite", "postgres").
func (tx *Tx) EngineName() string { return string(tx.engine) }

var (
	_ followup.Tx    = (*Tx)(nil)
	_ followup.Store = Bound[followup.Tx]{}
)
