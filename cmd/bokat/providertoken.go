package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"bokat"
	"bokat/internal/auth"
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
