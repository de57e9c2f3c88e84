package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/credentials"
)

// runProviderTokenCreate creates a provider API token:
// `bokat provider token create PROVIDER_ID --scopes LIST|all [--name N]`.
// It prints one JSON object {"token_id","provider_id","token"}; the token
// is shown this once and stored only as its keyed hash.
func runProviderTokenCreate(ctx context.Context, args []string, e env) error {
	fs := newFlagSet("provider token create", e)
	var c commonConfig
	c.register(fs)
	var name, scopeList string
	fs.String(&name, "name", "", "", "what the token is for, e.g. the provider's booking system")
	fs.String(&scopeList, "scopes", "", "", "comma-separated provider scopes, or all (required)")
	ids, err := fs.parse(args)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if len(ids) != 1 || scopeList == "" {
		return fmt.Errorf("%w: bokat provider token create PROVIDER_ID --scopes LIST|all [--name N]", errUsage)
	}
	scopes, err := bokat.ParseProviderScopes(scopeList)
	if err != nil {
		return fmt.Errorf("%w: --scopes: %v", errUsage, err)
	}
	if err := c.validate(); err != nil {
		return err
	}
	db, err := openStore(ctx, c)
	if err != nil {
		return err
	}
	defer db.Close()
	hasher, err := tokenHasher(ctx, c, db)
	if err != nil {
		return err
	}
	authn := auth.NewAuthenticator(hasher, db, nil).WithProviderTokens(db)
	id, token, err := authn.CreateProviderToken(ctx, ids[0], strings.TrimSpace(name), scopes, e.now())
	if errors.Is(err, bokat.ErrNotFound) {
		return fmt.Errorf("no provider %q", ids[0])
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(e.stdout).Encode(struct {
		TokenID    string `json:"token_id"`
		ProviderID string `json:"provider_id"`
		Token      string `json:"token"`
	}{id, ids[0], token})
}

// runProviderTokenList prints a provider's API tokens: id, name, scopes,
// created, last used, state. Never a token or its hash.
// `bokat provider token list PROVIDER_ID [--json]`.
func runProviderTokenList(ctx context.Context, args []string, e env) error {
	c := newCredentialCommand("provider token list", e, true)
	positional, err := c.parse(args, oneID("bokat provider token list PROVIDER_ID [--json]"))
	if err != nil {
		return err
	}
	svc, db, err := c.service(ctx, e)
	if err != nil {
		return err
	}
	defer db.Close()
	tokens, err := svc.ProviderTokens(ctx, positional[0])
	if err != nil {
		return err
	}
	if c.json {
		type row struct {
			TokenID    string   `json:"token_id"`
			ProviderID string   `json:"provider_id"`
			Name       string   `json:"name"`
			Scopes     []string `json:"scopes"`
			State      string   `json:"state"`
			CreatedAt  *string  `json:"created_at"`
			LastUsedAt *string  `json:"last_used_at"`
			RevokedAt  *string  `json:"revoked_at"`
		}
		rows := make([]row, 0, len(tokens))
		for _, t := range tokens {
			rows = append(rows, row{TokenID: t.ID, ProviderID: t.ProviderID, Name: t.Name, Scopes: scopeStrings(t.Scopes),
				State: t.State(), CreatedAt: jsonTime(t.CreatedAt), LastUsedAt: jsonTime(t.LastUsedAt), RevokedAt: jsonTime(t.RevokedAt)})
		}
		return printJSON(e.stdout, rows)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSCOPES\tCREATED\tLAST USED\tSTATE")
	for _, t := range tokens {
		st := t.State()
		if st == credentials.StateRevoked {
			st += " " + stamp(t.RevokedAt)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, oneLine(t.Name), strings.Join(scopeStrings(t.Scopes), ","),
			stamp(t.CreatedAt), stamp(t.LastUsedAt), st)
	}
	return tw.Flush()
}

// runProviderTokenRevoke revokes a provider API token at once (audited).
// `bokat provider token revoke TOKEN_ID`.
func runProviderTokenRevoke(ctx context.Context, args []string, e env) error {
	return runRevoke(ctx, args, e, "provider token revoke", "TOKEN_ID", (*credentials.Service).RevokeProviderToken,
		func(t credentials.ProviderToken) string {
			return fmt.Sprintf("provider token %s revoked at %s", t.ID, stamp(t.RevokedAt))
		})
}
