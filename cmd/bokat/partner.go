package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"bokat"
)

// runPartnerCreate creates a partner credential and prints exactly one JSON
// object {"client_id","token"}; a test token starts with bkp_test_. The token is shown this once.
// The creation is written to the operator audit.
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
	svc, db, err := (&credentialCommand{storeCommand: sc}).service(ctx, e)
	if err != nil {
		return err
	}
	defer db.Close()
	p, token, err := svc.CreatePartner(ctx, cliActor(e), mode, name, scopes)
	if err != nil {
		return err
	}
	return json.NewEncoder(e.stdout).Encode(struct {
		ClientID string `json:"client_id"`
		Token    string `json:"token"`
	}{p.ID, token})
}
