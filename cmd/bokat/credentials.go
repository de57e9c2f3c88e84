package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os/user"
	"strings"
	"text/tabwriter"
	"time"

	"bokat"
	"bokat/internal/credentials"
	"bokat/internal/privacy"
	"bokat/internal/sqlstore"
)

// The credential lifecycle on the command line: bokat partner
// list|rotate|revoke and bokat oauth-client list|revoke|purge (with create,
// in partner.go and oauth.go). Every change is written to the operator
// audit as "cli:<os user>" (docs/operators.md).

// cliActor is the audit actor of this process: the operating-system user.
func cliActor(e env) string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return credentials.CLIActor(u.Username)
	}
	return credentials.CLIActor(e.getenv("USER"))
}

// credentialCommand is a lifecycle command: the common settings, an
// optional --json, and the service on the store once parsed.
type credentialCommand struct {
	*storeCommand
	json bool
}

func newCredentialCommand(name string, e env, withJSON bool) *credentialCommand {
	c := &credentialCommand{storeCommand: newStoreCommand(name, e)}
	if withJSON {
		c.fs.Bool(&c.json, "json", "", false, "print JSON instead of a table")
	}
	return c
}

// service opens the store and the token hasher and returns the lifecycle
// on them, on the command's clock.
func (c *credentialCommand) service(ctx context.Context, e env) (*credentials.Service, *sqlstore.DB, error) {
	db, hasher, err := c.openHashed(ctx)
	if err != nil {
		return nil, nil, err
	}
	return credentials.New(sqlstore.Bind[credentials.Tx](db), hasher, e.now), db, nil
}

// jsonTime is an optional instant in JSON: RFC 3339, or null.
func jsonTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339)
	return &s
}

// noArgs checks that a command was given no positional argument.
func noArgs(usage string) func([]string) error {
	return func(positional []string) error {
		if len(positional) != 0 {
			return fmt.Errorf("%w: %s", errUsage, usage)
		}
		return nil
	}
}

func oneID(usage string) func([]string) error {
	return func(positional []string) error {
		if len(positional) != 1 || strings.TrimSpace(positional[0]) == "" {
			return fmt.Errorf("%w: %s", errUsage, usage)
		}
		return nil
	}
}

// runPartnerList prints every partner credential: id, name, mode,
// created, last used, state. Never a token or its hash.
func runPartnerList(ctx context.Context, args []string, e env) error {
	c := newCredentialCommand("partner list", e, true)
	if _, err := c.parse(args, noArgs("bokat partner list [--json]")); err != nil {
		return err
	}
	svc, db, err := c.service(ctx, e)
	if err != nil {
		return err
	}
	defer db.Close()
	partners, err := svc.Partners(ctx)
	if err != nil {
		return err
	}
	now := svc.Now()
	if c.json {
		type row struct {
			ClientID           string   `json:"client_id"`
			Name               string   `json:"name"`
			Mode               string   `json:"mode"`
			Scopes             []string `json:"scopes"`
			State              string   `json:"state"`
			CreatedAt          *string  `json:"created_at"`
			LastUsedAt         *string  `json:"last_used_at"`
			RotatedAt          *string  `json:"rotated_at"`
			PreviousValidUntil *string  `json:"previous_token_valid_until"`
			PreviousLastUsedAt *string  `json:"previous_token_last_used_at"`
			RevokedAt          *string  `json:"revoked_at"`
		}
		rows := make([]row, 0, len(partners))
		for _, p := range partners {
			r := row{ClientID: p.ID, Name: p.Name, Mode: string(p.Mode.Or()), Scopes: scopeStrings(p.Scopes), State: p.State(now),
				CreatedAt: jsonTime(p.CreatedAt), LastUsedAt: jsonTime(p.LastUsedAt), RotatedAt: jsonTime(p.RotatedAt),
				RevokedAt: jsonTime(p.RevokedAt)}
			if p.State(now) == credentials.StateRotating {
				r.PreviousValidUntil, r.PreviousLastUsedAt = jsonTime(p.PreviousValidUntil), jsonTime(p.PreviousLastUsedAt)
			}
			rows = append(rows, r)
		}
		return printJSON(e.stdout, rows)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tMODE\tCREATED\tLAST USED\tSTATE")
	for _, p := range partners {
		state := p.State(now)
		switch state {
		case credentials.StateRotating:
			state += " (previous token until " + stamp(p.PreviousValidUntil) + ", last used " + stamp(p.PreviousLastUsedAt) + ")"
		case credentials.StateRevoked:
			state += " " + stamp(p.RevokedAt)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.ID, oneLine(p.Name), p.Mode.Or(), stamp(p.CreatedAt), stamp(p.LastUsedAt), state)
	}
	return tw.Flush()
}

// runPartnerRotate gives a partner credential a new token and prints one
// JSON object {"client_id","token","previous_token_valid_until"}: the new
// token is shown this once. The replaced token works until the overlap
// ends (--overlap, default 24h; 0 ends it now).
func runPartnerRotate(ctx context.Context, args []string, e env) error {
	const use = "bokat partner rotate PARTNER_ID [--overlap 24h|0]"
	c := newCredentialCommand("partner rotate", e, false)
	overlap := credentials.DefaultOverlap
	c.fs.Text(new(string), "overlap", "", "24h",
		"how long the replaced token keeps working: a Go duration or whole days (30d at most), or 0 to end it now",
		func(s string) error {
			d, err := parseOverlap(s)
			overlap = d
			return err
		})
	positional, err := c.parse(args, oneID(use))
	if err != nil {
		return err
	}
	svc, db, err := c.service(ctx, e)
	if err != nil {
		return err
	}
	defer db.Close()
	r, err := svc.RotatePartner(ctx, cliActor(e), positional[0], overlap)
	if err != nil {
		return err
	}
	return json.NewEncoder(e.stdout).Encode(struct {
		ClientID           string  `json:"client_id"`
		Token              string  `json:"token"`
		PreviousValidUntil *string `json:"previous_token_valid_until"`
	}{r.Partner.ID, r.Token, jsonTime(r.PreviousValidUntil)})
}

// parseOverlap reads --overlap: 0, a Go duration or whole days, at most
// credentials.MaxOverlap.
func parseOverlap(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		var n int
		if _, err := fmt.Sscanf(days, "%d", &n); err != nil || fmt.Sprint(n) != days || n < 0 {
			return 0, fmt.Errorf("must be 0, a Go duration (like 24h) or whole days (like 7d)")
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil || d < 0 {
			return 0, fmt.Errorf("must be 0, a Go duration (like 24h) or whole days (like 7d)")
		}
	}
	if d > credentials.MaxOverlap {
		return 0, fmt.Errorf("must be at most 30d")
	}
	return d, nil
}

// runPartnerRevoke revokes a partner credential at once.
func runPartnerRevoke(ctx context.Context, args []string, e env) error {
	return runRevoke(ctx, args, e, "partner revoke", "PARTNER_ID", (*credentials.Service).RevokePartner,
		func(p credentials.Partner) string {
			return fmt.Sprintf("partner %s revoked at %s", p.ID, stamp(p.RevokedAt))
		})
}

// runRevoke runs a revoke command, `bokat NAME ID`: it revokes the
// credential with the lifecycle's revoke, as this process's audit actor,
// and prints the line done says of the revoked credential.
func runRevoke[C any](ctx context.Context, args []string, e env, name, idName string,
	revoke func(svc *credentials.Service, ctx context.Context, actor, id string) (C, error), done func(C) string) error {
	c := newCredentialCommand(name, e, false)
	positional, err := c.parse(args, oneID("bokat "+name+" "+idName))
	if err != nil {
		return err
	}
	svc, db, err := c.service(ctx, e)
	if err != nil {
		return err
	}
	defer db.Close()
	revoked, err := revoke(svc, ctx, cliActor(e), positional[0])
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, done(revoked))
	return nil
}

// runOAuthClientList prints every OAuth client: id, name, how it was
// registered, mode, type, created, last used, state. Never a secret.
func runOAuthClientList(ctx context.Context, args []string, e env) error {
	c := newCredentialCommand("oauth-client list", e, true)
	if _, err := c.parse(args, noArgs("bokat oauth-client list [--json]")); err != nil {
		return err
	}
	svc, db, err := c.service(ctx, e)
	if err != nil {
		return err
	}
	defer db.Close()
	clients, err := svc.OAuthClients(ctx)
	if err != nil {
		return err
	}
	kind := func(public bool) string {
		if public {
			return "public"
		}
		return "confidential"
	}
	if c.json {
		type row struct {
			ClientID     string   `json:"client_id"`
			Name         string   `json:"name"`
			Registration string   `json:"registration"`
			Mode         string   `json:"mode"`
			ClientType   string   `json:"client_type"`
			Scopes       []string `json:"scopes"`
			RedirectURIs []string `json:"redirect_uris"`
			State        string   `json:"state"`
			CreatedAt    *string  `json:"created_at"`
			LastUsedAt   *string  `json:"last_used_at"`
			RevokedAt    *string  `json:"revoked_at"`
		}
		rows := make([]row, 0, len(clients))
		for _, cl := range clients {
			rows = append(rows, row{ClientID: cl.ID, Name: cl.Name, Registration: cl.Registration, Mode: string(cl.Mode.Or()),
				ClientType: kind(cl.Public), Scopes: scopeStrings(cl.Scopes), RedirectURIs: cl.RedirectURIs, State: cl.State(),
				CreatedAt: jsonTime(cl.CreatedAt), LastUsedAt: jsonTime(cl.LastUsedAt), RevokedAt: jsonTime(cl.RevokedAt)})
		}
		return printJSON(e.stdout, rows)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tREGISTRATION\tMODE\tTYPE\tCREATED\tLAST USED\tSTATE")
	for _, cl := range clients {
		state := cl.State()
		if state == credentials.StateRevoked {
			state += " " + stamp(cl.RevokedAt)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cl.ID, oneLine(cl.Name), cl.Registration, cl.Mode.Or(), kind(cl.Public),
			stamp(cl.CreatedAt), stamp(cl.LastUsedAt), state)
	}
	return tw.Flush()
}

// runOAuthClientRevoke revokes an OAuth client with every grant and token
// issued to it.
func runOAuthClientRevoke(ctx context.Context, args []string, e env) error {
	return runRevoke(ctx, args, e, "oauth-client revoke", "CLIENT_ID", (*credentials.Service).RevokeOAuthClient,
		func(cl credentials.OAuthClient) string {
			return fmt.Sprintf("OAuth client %s revoked at %s, with its grants and tokens", cl.ID, stamp(cl.RevokedAt))
		})
}

// runOAuthClientPurge deletes the dynamically registered clients unused
// for --unused-for (default 90d) and holding no valid token, and prints
// their ids, one a line.
func runOAuthClientPurge(ctx context.Context, args []string, e env) error {
	c := newCredentialCommand("oauth-client purge", e, false)
	unusedFor := 90 * 24 * time.Hour
	c.fs.Text(new(string), "unused-for", "", "90d",
		"purge dynamically registered clients unused for this long (whole days or a Go duration, at least 1d)",
		retentionSetter(&unusedFor))
	if _, err := c.parse(args, noArgs("bokat oauth-client purge [--unused-for 90d]")); err != nil {
		return err
	}
	svc, db, err := c.service(ctx, e)
	if err != nil {
		return err
	}
	defer db.Close()
	ids, err := svc.PurgeDynamicClients(ctx, cliActor(e), unusedFor)
	for _, id := range ids {
		fmt.Fprintln(e.stdout, id)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "%d dynamically registered OAuth clients purged\n", len(ids))
	return nil
}

// defaultPurgeDynamicClients is --purge-dynamic-clients by default.
const defaultPurgeDynamicClients = 90 * 24 * time.Hour

func purgeDynamicClientsSetter(p *time.Duration) func(string) error {
	return func(s string) error {
		if strings.TrimSpace(s) == "off" {
			*p = 0
			return nil
		}
		d, err := privacy.ParseRetention(s)
		if err != nil {
			return fmt.Errorf("%v, or off", err)
		}
		if d < credentials.MinUnusedFor {
			return fmt.Errorf("must be at least 1d, or off")
		}
		*p = d
		return nil
	}
}

// dynamicClientPurgeWorker purges the dynamically registered OAuth clients
// unused for unusedFor at start-up and then every interval, as the audit
// actor credentials.PurgeJobActor; unusedFor 0 turns it off. Several
// processes may run it: a client is deleted once.
func dynamicClientPurgeWorker(svc *credentials.Service, unusedFor time.Duration, log *slog.Logger, interval time.Duration) worker {
	return worker{name: "dynamic-client-purge", run: func(ctx context.Context) error {
		if unusedFor <= 0 {
			return nil
		}
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			ids, err := svc.PurgeDynamicClients(ctx, credentials.PurgeJobActor, unusedFor)
			if err != nil && ctx.Err() == nil {
				log.Warn("purging unused dynamic OAuth clients failed", "error", err.Error(), "purged", len(ids))
			} else if len(ids) > 0 {
				log.Info("unused dynamic OAuth clients purged", "purged", len(ids))
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
			}
		}
	}}
}

func scopeStrings(scopes []bokat.Scope) []string {
	out := make([]string, len(scopes))
	for i, s := range scopes {
		out[i] = string(s)
	}
	return out
}

// oneLine keeps a name on its table row.
func oneLine(s string) string {
	return strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(s)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
