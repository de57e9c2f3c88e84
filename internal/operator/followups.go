package operator

import (
	"context"
	"fmt"
	"time"

	"bokat"
)

// FollowUp is a provider follow-up request as the console's queue shows
// it: what was asked for where, and what was done with it.
type FollowUp struct {
	ID                    string
	CreatedAt             time.Time
	VerticalID, JobTypeID string
	Postcode              string
	Status                string
	Mode                  string
	// CandidateCount is how many providers cover the job there; zero is a
	// request no provider covers.
	CandidateCount int
	// Candidates are the providers it was handed to, with how sending it
	// went.
	Candidates []FollowUpCandidate
	// Notes are the operators' notes of what they did, newest first.
	Notes []AuditEntry
}

// FollowUpCandidate is a provider a request was handed to.
type FollowUpCandidate struct {
	ProviderID string
	// Status is pending, sent, skipped or failed.
	Status     string
	NotifiedAt time.Time
}

// QueueLimit is the most follow-up requests the queue shows.
const QueueLimit = 100

// FollowUps returns the latest follow-up requests, newest first (only
// those no provider covers when uncovered), each with the operators'
// notes.
func (s *Service) FollowUps(ctx context.Context, uncovered bool) ([]FollowUp, error) {
	list, err := s.store.FollowUps(ctx, uncovered, QueueLimit)
	if err != nil {
		return nil, err
	}
	for i := range list {
		if list[i].Notes, err = s.store.ConsoleAudit(ctx, "follow_up", list[i].ID, 20); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// NoteFollowUp records what the operator did about a follow-up request
// (2 to NoteMax characters, no contact data) in the audit log. An unknown
// request fails with bokat.ErrNotFound, a bad note with ErrInvalid.
func (s *Service) NoteFollowUp(ctx context.Context, op Operator, requestID, note string) error {
	note, err := cleanNote(note, 2, NoteMax)
	if err != nil {
		return err
	}
	now := s.now()
	return s.store.InTx(ctx, func(tx Tx) error {
		ok, err := tx.FollowUpExists(ctx, requestID)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("follow-up request %s: %w", requestID, bokat.ErrNotFound)
		}
		return Audit(ctx, tx, op.ID, now, ActionFollowUpAnnotated, "follow_up", requestID, details("note", note))
	})
}
