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
// object {"client_id","token"}; a test token starts with bkp_test_. The token is shown this once.
func runPartnerCreate(ctx context.Context, args []string, e env) error {
	sc := newStoreCommand("partner create", e)
	var name, scopeList, modeName string
	sc.fs.String(&name, "name", "", "", "partner name (required)")
	sc.fs.String(&scopeList, "scopes", "", "", "comma-separated scopes, or all (required)")
	sc.fs.String(&modeName, "mode", "", "live", "live, or test for a bkp_test_ credential of the test realm")
	var scopes []bokat.Scope
	var mode bokat.Mode
	_, err := sc.parse(args, func([]string) error {
		name = strings.TrimSpace(name)
		if name == "" || scopeList == "" {
			return fmt.Errorf("%w: --name and --scopes are required", errUsage)
		}
		var err error
		if scopes, err = bokat.ParseScopes(scopeList); err != nil {
			return fmt.Errorf("%w: --scopes: %v", errUsage, err)
		}
		if mode, err = bokat.ParseMode(modeName); err != nil {
			return fmt.Errorf("%w: --mode: %v", errUsage, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	db, hasher, err := sc.openHashed(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	authn := auth.NewAuthenticator(hasher, db, nil)
	id, token, err := authn.CreatePartnerIn(ctx, mode, name, scopes, e.now())
	if err != nil {
		return err
	}
	return json.NewEncoder(e.stdout).Encode(struct {
		ClientID string `json:"client_id"`
		Token    string `json:"token"`
	}{id, token})
}
