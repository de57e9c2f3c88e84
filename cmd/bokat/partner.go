package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"bokat"
	"bokat/internal/auth"
)

// runPartnerCreate creates a partner credential and prints exactly one JSON
// object {"client_id","token"}. The token is shown this once.
func runPartnerCreate(ctx context.Context, args []string, e env) error {
	fs := newFlagSet("partner create", e)
	var c commonConfig
	c.register(fs)
	var name, scopeList string
	fs.String(&name, "name", "", "", "partner name (required)")
	fs.String(&scopeList, "scopes", "", "", "comma-separated scopes, or all (required)")
	if _, err := fs.parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	name = strings.TrimSpace(name)
	if name == "" || scopeList == "" {
		return fmt.Errorf("%w: --name and --scopes are required", errUsage)
	}
	scopes, err := bokat.ParseScopes(scopeList)
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
	authn := auth.NewAuthenticator(hasher, db, nil)
	id, token, err := authn.CreatePartner(ctx, name, scopes, e.now())
	if err != nil {
		return err
	}
	return json.NewEncoder(e.stdout).Encode(struct {
		ClientID string `json:"client_id"`
		Token    string `json:"token"`
	}{id, token})
}
