package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"bokat"
)

// RequestSource is what the notification worker needs of the follow-up
// requests.
type RequestSource interface {
	// NotificationRequest returns the request as its provider messages
	// show it, or an error wrapping bokat.ErrNotFound.
	NotificationRequest(ctx context.Context, requestID string) (bokat.RequestNotice, error)
}

// nextStepsSV says the contract's customer_next_step values in Swedish.
var nextStepsSV = map[string]string{
	"home_visit":     "kunden önskar ett hembesök",
	"price_info":     "kunden vill ha prisuppgifter",
	"contact_me":     "kunden vill bli kontaktad",
	"direct_booking": "kunden vill helst boka en tid direkt",
}

// request renders the message handing r to provider p, in Swedish.
func (c composer) request(r bokat.RequestNotice, p bokat.NoticeCandidate) Message {
	subject := "Ny förfrågan: " + r.JobTypeLabelSV
	if r.Postcode != "" {
		subject += " i " + r.Postcode
	}
	var body lines
	greeting := "Hej"
	if p.Name != "" {
		greeting += " " + p.Name
	}
	body.para(greeting + ",")
	body.para("en kund i ert område söker hjälp via Bokat och har samtyckt till att vi lämnar uppgifterna nedan till er.")
	body.para("Observera: det här är en förfrågan, inte en bokning. Ingen tid, inget pris och inget uppdrag är " +
		"bekräftat, och kunden kan ha fått samma förfrågan skickad till fler företag. Kontakta kunden direkt om ni " +
		"kan ta jobbet.")
	job := r.JobTypeLabelSV
	if r.VerticalLabelSV != "" {
		job += " (" + r.VerticalLabelSV + ")"
	}
	body.row("Jobb", job)
	body.WriteString("Beskrivning:\n")
	for _, l := range strings.Split(strings.TrimSpace(r.Description), "\n") {
		body.WriteString("  " + strings.TrimRight(l, " \t\r") + "\n")
	}
	body.WriteString("\n")
	body.row("Adress", r.Address)
	body.row("Postnummer", r.Postcode)
	body.row("Plats enligt kunden", r.LocationInput)
	body.row("Önskad tid", r.PreferredTimeText)
	body.row("Hur brådskande", r.Urgency)
	if r.BudgetSEK != nil {
		body.row("Budget", priceLabel(int(*r.BudgetSEK), false))
	}
	body.row("Kundens önskemål", nextStepsSV[r.CustomerNextStep])
	if len(r.Details) > 0 {
		body.WriteString("Övriga uppgifter:\n")
		for _, d := range r.Details {
			body.WriteString("  " + d + "\n")
		}
	}
	body.WriteString("\n")
	body.row("Kund", r.CustomerName)
	body.row("Telefon", r.CustomerPhone)
	body.row("E-post", r.CustomerEmail)
	body.WriteString("\n")
	body.row("Förfrågan", r.ID)
	if !r.CreatedAt.IsZero() {
		body.row("Skickad", instantLabel(r.CreatedAt)+" (svensk tid)")
	}
	body.WriteString("\n")
	body.para("Kunduppgifterna får bara användas för att svara på den här förfrågan.")
	body.WriteString("Vänliga hälsningar\nBokat\n")
	return Message{Kind: bokat.NotificationRequestCreated + "/" + bokat.RecipientProvider, To: p.Email, ToName: p.Name,
		Subject: subject, Text: body.String()}
}

// deliverRequest makes one attempt at a request.created job: it writes to
// every candidate provider not yet written to, then records the job's
// outcome. Logs name providers by id only.
func (w *Worker) deliverRequest(ctx context.Context, j ClaimedJob) {
	log := w.cfg.Logger.With("job_id", j.ID, "request_id", j.RequestID, "event_type", j.EventType,
		"recipient", j.Recipient, "attempt", j.Attempt, "api_request_id", j.APIRequestID, "trace_id", j.TraceID)
	o := w.attemptRequest(ctx, j, log)
	w.record(ctx, log, j, o, requestLogs, func(ctx context.Context, tx Tx) error {
		if o.status == bokat.NotificationSent {
			return nil
		}
		// Nothing more will be sent: providers still pending end with the job.
		return tx.EndPendingRequestCandidates(ctx, j.RequestID, o.status)
	})
}

var requestLogs = outcomeLogs{
	sent: "follow-up request sent to its providers", skipped: "follow-up request not sent",
	retry: "follow-up request attempt failed; retry scheduled", failed: "follow-up request failed for good",
}

// attemptRequest loads the request and writes to each candidate provider
// still pending, recording each provider's outcome as it goes. The job is
// sent when every provider with an address got the message; a temporary
// failure retries the providers still pending; a permanent one fails the
// job once nothing is pending.
func (w *Worker) attemptRequest(ctx context.Context, j ClaimedJob, log *slog.Logger) outcome {
	if j.EventType != bokat.NotificationRequestCreated || j.Recipient != bokat.RecipientProvider {
		return outcome{status: bokat.NotificationSkipped, reason: "no message for event type " + j.EventType + " to " + j.Recipient}
	}
	r, err := w.cfg.Requests.NotificationRequest(ctx, j.RequestID)
	switch {
	case errors.Is(err, bokat.ErrNotFound):
		return outcome{status: bokat.NotificationFailed, reason: "request not found"}
	case err != nil:
		return w.retry(j, "loading the request failed: "+redact(err.Error()))
	}
	// Stay inside the lease, so that no other worker claims the job while
	// this one is still writing; providers not reached in time are retried.
	actx, cancel := context.WithTimeout(ctx, w.cfg.Lease*3/4)
	defer cancel()
	var sent, failed, waiting int
	var permanent, temporary string
	for _, c := range r.Candidates {
		plog := log.With("provider_id", c.ProviderID)
		switch c.Status {
		case bokat.NotificationSent:
			sent++
			continue
		case bokat.NotificationSkipped:
			continue
		case bokat.NotificationFailed:
			failed++
			continue
		}
		if c.Email == "" || !c.Active {
			why := "no e-mail address"
			if !c.Active {
				why = "provider withdrawn from the supply"
			}
			w.setCandidate(ctx, plog, j.RequestID, c.ProviderID, bokat.NotificationSkipped)
			plog.InfoContext(ctx, "follow-up request not sent to a provider", "reason", why)
			continue
		}
		if actx.Err() != nil {
			waiting++
			temporary = "ran out of time before every provider was written to"
			continue
		}
		err := w.send(actx, j, w.c.request(r, c))
		if errors.Is(err, errNotCaptured) {
			w.setCandidate(ctx, plog, j.RequestID, c.ProviderID, bokat.NotificationSkipped)
			continue
		}
		if err == nil {
			w.setCandidate(ctx, plog, j.RequestID, c.ProviderID, bokat.NotificationSent)
			plog.InfoContext(ctx, "follow-up request sent to a provider")
			sent++
			continue
		}
		var se *SendError
		if !errors.As(err, &se) {
			se = &SendError{Temporary: true, Summary: redact(err.Error())}
		}
		if se.Temporary {
			plog.WarnContext(ctx, "follow-up request not sent to a provider; will retry", "error", se.Summary)
			waiting++
			temporary = se.Summary
			continue
		}
		w.setCandidate(ctx, plog, j.RequestID, c.ProviderID, bokat.NotificationFailed)
		plog.WarnContext(ctx, "follow-up request refused for a provider", "error", se.Summary)
		failed++
		permanent = se.Summary
	}
	total := len(r.Candidates)
	switch {
	case waiting > 0:
		return w.retry(j, fmt.Sprintf("%s (%d of %d providers not reached)", temporary, waiting, total))
	case failed > 0:
		if permanent == "" {
			permanent = "refused earlier"
		}
		return outcome{status: bokat.NotificationFailed, reason: fmt.Sprintf("%s (%d of %d providers not reached)", permanent, failed, total)}
	case sent > 0:
		return outcome{status: bokat.NotificationSent}
	case total == 0:
		return outcome{status: bokat.NotificationSkipped, reason: "no provider candidates"}
	default:
		return outcome{status: bokat.NotificationSkipped, reason: "no provider with an e-mail address"}
	}
}

// setCandidate records one provider's outcome. A failure to record is
// logged and otherwise ignored: at worst the provider gets the message
// again on a retry (delivery is at least once).
func (w *Worker) setCandidate(ctx context.Context, log *slog.Logger, requestID, providerID, status string) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := w.cfg.Store.SetRequestCandidateStatus(rctx, requestID, providerID, status, w.cfg.Now()); err != nil {
		log.WarnContext(ctx, "provider outcome of a follow-up request not recorded", "status", status, "error", redact(err.Error()))
	}
}
