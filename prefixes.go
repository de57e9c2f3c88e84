package bokat

// The prefixes of what Bokat issues. An id names a thing and may be logged,
// shown and stored in clear; a secret grants something and is shown once,
// stored only hashed or sealed, and never logged. No secret prefix starts
// like an id prefix (nor the reverse), so a secret scanner or a person
// reading a log tells the two apart by the first characters alone.
// docs/decisions.md ("Prefixes of ids and secrets") is the public table.

// Id prefixes. Ids issued before a kind had its prefix keep their old form
// (see WebhookEndpointIDPrefix).
const (
	BookingIDPrefix         = "bkg_"
	BookingRequestIDPrefix  = "bkr_" // a booking's request_id
	CalendarEventIDPrefix   = "cal_"
	NotificationIDPrefix    = "ntf_"
	FollowUpRequestIDPrefix = "req_"
	FollowUpSessionIDPrefix = "ses_"
	BlockedPeriodIDPrefix   = "blk_"
	PartnerClientIDPrefix   = "pc_"
	OAuthClientIDPrefix     = "oc_"
	UserIDPrefix            = "usr_"
	// WebhookEndpointIDPrefix starts the ids of webhook endpoints
	// registered since issue 21; earlier endpoints keep their bare UUID
	// ids, which every endpoint route still accepts.
	WebhookEndpointIDPrefix = "whe_"
	SigningKeyIDPrefix      = "whk_" // names one version of a webhook signing secret
	SecretKeyIDPrefix       = "sk_"  // names a server sealing key (a hash of it)
	BookingOptionIDPrefix   = "bo2." // a signed, public booking option ("bo1." before issue 27, still verified)
	// A provider's people, their invitations and the audit of what they did.
	ProviderUserIDPrefix       = "pu_"
	ProviderInvitationIDPrefix = "pi_"
	ProviderAuditIDPrefix      = "pa_"
	ProviderTokenIDPrefix      = "pt_"  // names a provider API token (the token is ProviderTokenPrefix)
	ProviderBlockIDPrefix      = "pb_"  // a block of time a provider added
	CalendarFeedIDPrefix       = "cfd_" // a provider's subscribed calendar
	// The people who run the marketplace, and the audit of what they did.
	OperatorIDPrefix      = "op_"
	OperatorAuditIDPrefix = "oa_"
)

// Secret prefixes.
const (
	PartnerTokenPrefix = "bkp_"
	// PartnerTestTokenPrefix starts the tokens of test-mode partner
	// credentials (issue 25): recognisable at a glance, and still a partner
	// token (it starts with PartnerTokenPrefix). Live tokens keep their form.
	PartnerTestTokenPrefix = "bkp_test_"
	ProviderTokenPrefix    = "bkv_" // the provider API's tokens
	AccessTokenPrefix      = "bka_"
	// AccessTestTokenPrefix starts the access tokens issued to OAuth
	// clients of the test realm (issue 25); they are access tokens
	// (they start with AccessTokenPrefix).
	AccessTestTokenPrefix   = "bka_test_"
	AuthorizationCodePrefix = "bkc_"
	ClientSecretPrefix      = "bks_"
	// ClientSecretTestPrefix starts the client secrets of OAuth clients of
	// the test realm; they are client secrets (they start with
	// ClientSecretPrefix).
	ClientSecretTestPrefix = "bks_test_"
	// RefreshTokenPrefix starts OAuth refresh tokens ("f" for the token
	// family a refresh token rotates in). Refresh tokens issued before
	// started with LegacyRefreshTokenPrefix, the booking request ids'
	// prefix; they are accepted until they expire.
	RefreshTokenPrefix = "bkf_"
	// RefreshTestTokenPrefix starts the refresh tokens issued to OAuth
	// clients of the test realm; they are refresh tokens (they start with
	// RefreshTokenPrefix).
	RefreshTestTokenPrefix   = "bkf_test_"
	LegacyRefreshTokenPrefix = "bkr_"
	WebhookSecretPrefix      = "whsec_"
)

// TestSecretPrefixes pairs the prefix of each kind of secret a test
// credential holds with its live form: every test prefix is its live one
// followed by "test_", so a test secret of any kind is recognisable at a
// glance and is still a secret of its kind. A live secret never starts with
// its kind's test prefix (one drawn so is drawn again).
func TestSecretPrefixes() map[string]string {
	return map[string]string{
		PartnerTokenPrefix: PartnerTestTokenPrefix,
		AccessTokenPrefix:  AccessTestTokenPrefix,
		RefreshTokenPrefix: RefreshTestTokenPrefix,
		ClientSecretPrefix: ClientSecretTestPrefix,
	}
}

// IDPrefixes returns every id prefix.
func IDPrefixes() []string {
	return []string{BookingIDPrefix, BookingRequestIDPrefix, CalendarEventIDPrefix, NotificationIDPrefix,
		FollowUpRequestIDPrefix, FollowUpSessionIDPrefix, BlockedPeriodIDPrefix, PartnerClientIDPrefix,
		OAuthClientIDPrefix, UserIDPrefix, WebhookEndpointIDPrefix, SigningKeyIDPrefix, SecretKeyIDPrefix,
		BookingOptionIDPrefix, ProviderUserIDPrefix, ProviderInvitationIDPrefix, ProviderAuditIDPrefix,
		ProviderTokenIDPrefix, ProviderBlockIDPrefix, CalendarFeedIDPrefix, OperatorIDPrefix, OperatorAuditIDPrefix}
}

// SecretPrefixes returns the prefix of every secret issued now (not the
// legacy refresh token prefix, which only verification still accepts).
func SecretPrefixes() []string {
	return []string{PartnerTokenPrefix, PartnerTestTokenPrefix, ProviderTokenPrefix, AccessTokenPrefix, AccessTestTokenPrefix,
		AuthorizationCodePrefix, ClientSecretPrefix, ClientSecretTestPrefix, RefreshTokenPrefix, RefreshTestTokenPrefix,
		WebhookSecretPrefix}
}
