package mcp

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/booking"
)

// Elicitation (protocol 2026-07-28, multi round-trip): for a client that
// declares form elicitation, confirm_booking, cancel_booking and
// reschedule_booking first run the write's checks without writing and
// answer an input-required result: a form asking the user to accept what
// the verified option or the owned booking says, and a signed requestState.
// The client retries the same call with the user's answer and the state;
// the write then runs as over REST, using the state's nonce in its
// transaction and recording the consent method elicitation.

// ElicitationKeyLabel is the HKDF label of the key that signs requestState,
// derived from the option signing keys.
const ElicitationKeyLabel = "bokat mcp elicitation state v1"

// ElicitationTTL is how long a consent form may stay unanswered.
const ElicitationTTL = 5 * time.Minute

// consentInput is the id of the consent form in inputRequests.
const consentInput = "consent"

// elicitationState is what requestState binds: the principal, the tool, the
// canonical arguments, an expiry and a single-use nonce.
type elicitationState struct {
	KeyID    string `json:"k"`
	ClientID string `json:"c"`
	UserID   string `json:"u"`
	Tool     string `json:"t"`
	Args     string `json:"a"`
	Expires  int64  `json:"e"`
	Nonce    string `json:"n"`
}

// multiRoundTrip reports whether the protocol negotiated for req lets a
// tool result ask for input (input-required results arrived with
// 2026-07-28). It decides as the SDK does when it relays such a result: by
// the session's protocol version when the request came in on an older one
// (a stateless session cannot elicit then: it would answer a JSON-RPC error
// without a code), by the request's own otherwise. A 2025-era call that
// declares elicitation in its _meta keeps the caller-declared consent.
func multiRoundTrip(req *sdk.CallToolRequest) bool {
	version := req.ProtocolVersion()
	if req.Session != nil {
		if p := req.Session.InitializeParams(); p != nil {
			version = p.ProtocolVersion
		}
	}
	return version >= multiRoundTripVersion
}

// multiRoundTripVersion is the first protocol revision with input-required
// results. Revisions are dates, so they compare as strings.
const multiRoundTripVersion = "2026-07-28"

// formElicitation reports whether the client declared form elicitation (an
// empty elicitation capability means form, as the specification says).
func formElicitation(c *sdk.ClientCapabilities) bool {
	if c == nil || c.Elicitation == nil {
		return false
	}
	return c.Elicitation.Form != nil || c.Elicitation.URL == nil
}

// argumentsHash is the SHA-256 of the arguments in canonical JSON (object
// members sorted, no insignificant space).
func argumentsHash(args json.RawMessage) (string, error) {
	var v any
	if len(args) > 0 {
		if err := json.Unmarshal(args, &v); err != nil {
			return "", err
		}
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:]), nil
}

// signState returns the requestState of st under the current key.
func (s *Server) signState(st elicitationState) (string, error) {
	id, key, err := s.backend.ElicitationKey("")
	if err != nil {
		return "", err
	}
	st.KeyID = id
	payload, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	p := base64.RawURLEncoding.EncodeToString(payload)
	return p + "." + base64.RawURLEncoding.EncodeToString(stateMAC(key, p)), nil
}

func stateMAC(key []byte, payload string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// verifyState returns the state of requestState when its signature holds,
// it has not expired and it binds this principal, tool and arguments;
// otherwise a consent_required error saying which.
func (s *Server) verifyState(raw string, p bokat.Principal, tool, args string, now time.Time) (elicitationState, error) {
	var st elicitationState
	payload, sig, ok := strings.Cut(raw, ".")
	mac, err1 := base64.RawURLEncoding.DecodeString(sig)
	body, err2 := base64.RawURLEncoding.DecodeString(payload)
	if !ok || err1 != nil || err2 != nil || json.Unmarshal(body, &st) != nil || st.KeyID == "" {
		return st, stateRefused("it is not a state this server issued")
	}
	_, key, err := s.backend.ElicitationKey(st.KeyID)
	if err != nil || !hmac.Equal(mac, stateMAC(key, payload)) {
		return st, stateRefused("its signature does not verify")
	}
	switch {
	case st.ClientID != p.ClientID || st.UserID != p.UserID:
		return st, stateRefused("it was issued to another caller")
	case st.Tool != tool || st.Args != args:
		return st, stateRefused("it was issued for another call (tool or arguments differ)")
	case !now.Before(time.UnixMilli(st.Expires)):
		return st, stateRefused("it has expired")
	}
	return st, nil
}

func stateRefused(why string) *bokat.Error {
	return &bokat.Error{
		Code:   bokat.CodeConsentRequired,
		Detail: "The requestState is refused: " + why + ". Nothing was changed.",
		Issues: []string{"requestState: " + why},
		SafeNextStep: "Call the tool again with the same arguments and no requestState, so that the user is asked " +
			"afresh; send their answer with the requestState of that result.",
	}
}

func consentDeclined(action string) *bokat.Error {
	return &bokat.Error{
		Code:   bokat.CodeConsentRequired,
		Detail: fmt.Sprintf("The user did not accept the %s in the consent form. Nothing was changed.", action),
		Issues: []string{"inputResponses.consent: the user did not accept"},
		SafeNextStep: "Tell the user nothing was changed. Ask what they want instead; call the tool again only if " +
			"they want to go ahead.",
	}
}

// consentSchema is the form: one required boolean.
var consentSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"accept": map[string]any{"type": "boolean", "title": "I accept", "description": "Yes: go ahead as described above."},
	},
	"required": []any{"accept"},
}

// consentMessage shows the user what they accept, from the summary the
// booking use case read from the verified option or the owned booking.
func consentMessage(c booking.ConsentSummary) string {
	verb := map[string]string{"confirm": "Book", "cancel": "Cancel the booking of", "reschedule": "Move the booking to"}[c.Action]
	price := fmt.Sprintf("%d SEK", c.PriceSEK)
	if c.PriceType != "" && c.PriceType != "fixed" {
		price += " (" + c.PriceType + ")"
	}
	msg := fmt.Sprintf("%s %s with %s, %s, for %s. Terms version %s.", verb, c.Service, c.ProviderName, c.SlotLabel, price, c.TermsVersion)
	if c.ScopeSummary != "" {
		msg += " Included: " + c.ScopeSummary + "."
	}
	return msg
}

// callElicited runs a write tool for a client that declared form
// elicitation (see the comment at the top of this file).
func (s *Server) callElicited(ctx context.Context, t tool, req *sdk.CallToolRequest, op Operation) result {
	p := auth.PrincipalFrom(ctx)
	args, err := argumentsHash(req.Params.Arguments)
	if err != nil {
		// Not JSON the operation could accept: its validation answers.
		return answerResult(s.backend.Invoke(ctx, op))
	}
	now := s.now()
	if req.Params.RequestState == "" {
		op.Elicitation = &booking.Elicitation{Preview: true}
		a := s.backend.Invoke(ctx, op)
		if a.Preview == nil {
			return answerResult(a)
		}
		nonce := make([]byte, 16)
		_, _ = rand.Read(nonce)
		state, err := s.signState(elicitationState{ClientID: p.ClientID, UserID: p.UserID, Tool: t.def.Name, Args: args,
			Expires: now.Add(ElicitationTTL).UnixMilli(), Nonce: hex.EncodeToString(nonce)})
		if err != nil {
			return toolResult(s.backend.Problem(ctx, err))
		}
		return result{CallToolResult: &sdk.CallToolResult{
			InputRequests: sdk.InputRequestMap{consentInput: &sdk.ElicitParams{Mode: "form", Message: consentMessage(*a.Preview),
				RequestedSchema: consentSchema}},
			RequestState: state,
		}}
	}
	st, err := s.verifyState(req.Params.RequestState, p, t.def.Name, args, now)
	if err != nil {
		return toolResult(s.backend.Problem(ctx, err))
	}
	answer, _ := req.Params.InputResponses[consentInput].(*sdk.ElicitResult)
	if answer == nil || answer.Action != "accept" || answer.Content["accept"] != true {
		return toolResult(s.backend.Problem(ctx, consentDeclined(strings.TrimSuffix(t.def.Name, "_booking"))))
	}
	op.Elicitation = &booking.Elicitation{Nonce: st.Nonce, NonceExpiresAt: time.UnixMilli(st.Expires)}
	return answerResult(s.backend.Invoke(ctx, op))
}
