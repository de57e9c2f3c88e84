package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"time"
)

// errUsage marks a command-line mistake (exit status 2).
var errUsage = errors.New("usage")

func exitCode(err error) int {
	if errors.Is(err, errUsage) || errors.Is(err, flag.ErrHelp) {
		return 2
	}
	return 1
}

// env is the process environment as run sees it.
type env struct {
	getenv func(string) string
	stdout io.Writer
	stderr io.Writer
	// now is the clock of every command: whatever decides by the time
	// (expiry, due times, retention) reads this one.
	now func() time.Time
	// hooks are what only tests set; their zero value is production's.
	hooks hooks
}

// hooks are settings no flag or environment variable reaches: tests set
// them (through runIn) to see background work make rounds without waiting
// on real time. The zero value leaves every default.
type hooks struct {
	// calendarTick is how often serve's calendar sync worker looks for
	// due feeds (calsync.Config.Tick); zero keeps its default, a tenth of
	// the sync interval between one and thirty seconds.
	calendarTick time.Duration
	// notifyPoll is how long serve's idle notification worker waits
	// before it looks for due jobs again (notify.WorkerConfig.Poll); zero
	// keeps its default, a second. Jobs serve's own writes queue wake it
	// at once either way; a test shortens the wait for jobs another
	// process queued (the command line's erasure).
	notifyPoll time.Duration
}

// run executes one bokat command. Tests call it directly.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return runOn(ctx, time.Now, args, getenv, stdout, stderr)
}

// runOn is run on the clock now: tests that count quotas or expiry against
// the program stop or move its time.
func runOn(ctx context.Context, now func() time.Time, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return runIn(ctx, args, env{getenv: getenv, stdout: stdout, stderr: stderr, now: now})
}

// runIn is run in the environment e, its hooks included.
func runIn(ctx context.Context, args []string, e env) error {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, usage)
		return fmt.Errorf("%w: no command given", errUsage)
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return runServe(ctx, rest, e)
	case "migrate":
		return runMigrate(ctx, rest, e)
	case "webhook-check":
		return runWebhookCheck(ctx, rest, e)
	case "listen":
		return runListen(ctx, rest, e)
	case "trigger":
		return runTrigger(ctx, rest, e)
	case "partner":
		switch {
		case len(rest) > 0 && rest[0] == "create":
			return runPartnerCreate(ctx, rest[1:], e)
		case len(rest) > 0 && rest[0] == "list":
			return runPartnerList(ctx, rest[1:], e)
		case len(rest) > 0 && rest[0] == "rotate":
			return runPartnerRotate(ctx, rest[1:], e)
		case len(rest) > 0 && rest[0] == "revoke":
			return runPartnerRevoke(ctx, rest[1:], e)
		}
		return fmt.Errorf("%w: bokat partner create --name N --scopes LIST|all | list [--json] | rotate PARTNER_ID [--overlap 24h] | revoke PARTNER_ID", errUsage)
	case "supply":
		switch {
		case len(rest) > 0 && rest[0] == "import":
			return runSupplyImport(ctx, rest[1:], e)
		case len(rest) > 0 && rest[0] == "generate":
			return runSupplyGenerate(ctx, rest[1:], e)
		}
		return fmt.Errorf("%w: bokat supply import FILE | bokat supply generate [--providers N] [--seed S]", errUsage)
	case "oauth-client":
		switch {
		case len(rest) > 0 && rest[0] == "create":
			return runOAuthClientCreate(ctx, rest[1:], e)
		case len(rest) > 0 && rest[0] == "list":
			return runOAuthClientList(ctx, rest[1:], e)
		case len(rest) > 0 && rest[0] == "revoke":
			return runOAuthClientRevoke(ctx, rest[1:], e)
		case len(rest) > 0 && rest[0] == "purge":
			return runOAuthClientPurge(ctx, rest[1:], e)
		}
		return fmt.Errorf("%w: bokat oauth-client create --name N --redirect-uri URI [--scopes LIST|all] [--public] | list [--json] | revoke CLIENT_ID | purge [--unused-for 90d]", errUsage)
	case "provider":
		switch {
		case len(rest) > 0 && rest[0] == "feed-url":
			return runProviderFeedURL(ctx, rest[1:], e)
		case len(rest) > 0 && rest[0] == "invite":
			return runProviderInvite(ctx, rest[1:], e)
		case len(rest) > 0 && rest[0] == "audit":
			return runProviderAudit(ctx, rest[1:], e)
		case len(rest) > 0 && rest[0] == "calendar":
			return runProviderCalendar(ctx, rest[1:], e)
		case len(rest) > 1 && rest[0] == "token" && rest[1] == "create":
			return runProviderTokenCreate(ctx, rest[2:], e)
		case len(rest) > 1 && rest[0] == "token" && rest[1] == "list":
			return runProviderTokenList(ctx, rest[2:], e)
		case len(rest) > 1 && rest[0] == "token" && rest[1] == "revoke":
			return runProviderTokenRevoke(ctx, rest[2:], e)
		}
		return fmt.Errorf("%w: bokat provider feed-url [PROVIDER_ID...] | invite PROVIDER_ID --email ADDRESS [--role owner|staff] | audit PROVIDER_ID | calendar add|list|remove|rule ... | token create PROVIDER_ID --scopes LIST|all | token list PROVIDER_ID [--json] | token revoke TOKEN_ID", errUsage)
	case "operator":
		if len(rest) == 0 || rest[0] != "invite" {
			return fmt.Errorf("%w: bokat operator invite --email ADDRESS", errUsage)
		}
		return runOperatorInvite(ctx, rest[1:], e)
	case "privacy":
		switch {
		case len(rest) > 0 && rest[0] == "export":
			return runPrivacyExport(ctx, rest[1:], e)
		case len(rest) > 0 && rest[0] == "erase":
			return runPrivacyErase(ctx, rest[1:], e)
		case len(rest) > 0 && rest[0] == "correct":
			return runPrivacyCorrect(ctx, rest[1:], e)
		}
		return fmt.Errorf("%w: bokat privacy export|erase|correct --email ADDRESS [--phone NUMBER] [--cancel-future] [--set-email ...]", errUsage)
	case "version", "--version":
		fmt.Fprintln(e.stdout, versionString())
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(e.stdout, usage)
		return nil
	}
	fmt.Fprint(e.stderr, usage)
	return fmt.Errorf("%w: unknown command %q", errUsage, cmd)
}

const usage = `Usage: bokat <command> [flags]

Commands:
  serve                       run the HTTP API (add --demo for demo supply and a development token)
  migrate                     apply the database migrations embedded in this binary
  partner create --name N --scopes LIST|all
                              create a partner credential; prints {"client_id","token"}
  partner list [--json]       list partner credentials: id, name, mode, created, last used, state
  partner rotate PARTNER_ID [--overlap 24h]
                              give a partner credential a new token; prints {"client_id","token",
                              "previous_token_valid_until"}; the old token works until the overlap ends
                              (0: at once)
  partner revoke PARTNER_ID   revoke a partner credential at once (every token of it)
  supply import FILE          validate a supply file and import it (providers, postcodes, prices,
                              hours, blocked periods); nothing is written when it has a problem
  supply generate [--providers N] [--seed S] [--from DATE] [--busy-hours H] [--out FILE]
                              write a deterministic supply file of fictional providers for tests
                              and benchmarks (the same flags give the same bytes)
  oauth-client create --name N --redirect-uri URI [--redirect-uri URI ...] [--scopes LIST|all] [--public]
                              register an OAuth client of an assistant acting for signed-in customers;
                              prints {"client_id","client_secret"} (no secret with --public)
  oauth-client list [--json]  list OAuth clients: id, name, registration, mode, type, created, last used,
                              state
  oauth-client revoke CLIENT_ID
                              revoke an OAuth client with every grant and token issued to it
  oauth-client purge [--unused-for 90d]
                              delete dynamically registered clients unused that long (and holding no
                              valid token); serve does it hourly (--purge-dynamic-clients)
  provider feed-url [PROVIDER_ID...]
                              print each provider's secret calendar feed address (all providers
                              when none is named); use the --base-url and secrets serve uses
  provider invite PROVIDER_ID --email ADDRESS [--role owner|staff]
                              invite a person to the provider's pages (owner by default; an owner
                              invites staff on the pages); use the secrets serve uses
  provider calendar add PROVIDER_ID URL [--rule R] | list PROVIDER_ID | remove PROVIDER_ID FEED_ID
                  | rule PROVIDER_ID FEED_ID RULE
                              subscribe a provider to their own calendar (an iCalendar address, stored
                              sealed), list subscriptions with last sync and error, end one, or set which
                              events block; use the secrets serve uses
  operator invite --email ADDRESS [--console-url URL]
                              give a person an operator account; they sign in to the operator console
                              (/operator/, on --admin-addr when serve has one) with a one-time e-mail
                              code; use the secrets serve uses
  privacy export --email ADDRESS [--phone NUMBER]
                              print as JSON everything held for a person (bookings, follow-up requests,
                              consent, sign-in account); use the secrets serve uses
  privacy erase --email ADDRESS [--phone NUMBER] [--cancel-future]
                              erase all of it in one transaction; prints the ids erased; refuses a
                              booking still to come unless --cancel-future (which cancels it first)
  privacy correct --email ADDRESS [--phone NUMBER] [--set-name N | --set-first-name N --set-last-name N]
                  [--set-phone NUMBER] [--set-email ADDRESS]
                              correct the person's contact data in every booking and follow-up request
                              in one transaction; prints the ids corrected
  listen --token TOKEN --forward-to URL [--base-url URL] [--speedup N]
                              follow the token's events as they happen and forward each to a local
                              URL as a signed delivery (prints the whsec_ secret it signs with);
                              failed deliveries retry along the real ladder, N times faster
  trigger --token TEST_TOKEN EVENT
                              make the real test-mode calls that produce EVENT (booking.confirmed,
                              booking.cancelled, booking.rescheduled, booking.provider_action_required)
  webhook-check --url URL --secret whsec_...
                              send a webhook receiver the cases it must handle (valid, wrong signature,
                              stale timestamp, replayed Webhook-Id, unknown event type, rotated secret);
                              exits 0 only when every case was answered as it should
  version                     print the version

Run 'bokat <command> -h' for the flags of a command. Every flag has a BOKAT_* environment twin.
`

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

func versionString() string {
	v := version
	if v == "" {
		if info, ok := debug.ReadBuildInfo(); ok {
			v = info.Main.Version
			for _, s := range info.Settings {
				if s.Key == "vcs.revision" && len(s.Value) >= 12 {
					v += " " + s.Value[:12]
				}
			}
		}
	}
	return strings.TrimSpace("bokat " + v)
}
