package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"bokat"
	"bokat/internal/oauth"
)

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, " ") }

func (l *stringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// runOAuthClientCreate registers an OAuth client and prints exactly one
// JSON object {"client_id","client_secret"}; a public client gets no
// secret. The secret is shown this once and stored only as a keyed hash.
func runOAuthClientCreate(ctx context.Context, args []string, e env) error {
	sc := newStoreCommand("oauth-client create", e)
	var (
		name, scopeList string
		modeName        string
		mode            bokat.Mode
		redirects       stringList
		public          bool
		scopes          []bokat.Scope
	)
	sc.fs.String(&name, "name", "", "", "client name, shown to customers on the consent page (required)")
	sc.fs.Var(&redirects, "redirect-uri", "exact redirect URI: https, or http on a loopback address; repeat for several (required)")
	sc.fs.String(&scopeList, "scopes", "", "all", "comma-separated scopes the client may request, or all")
	sc.fs.Bool(&public, "public", "", false, "a public client (native or browser app): no secret, PKCE only")
	sc.fs.String(&modeName, "mode", "", "live", "live, or test for a client of the test realm (its access tokens start with bka_test_)")
	_, err := sc.parse(args, func([]string) error {
		if strings.TrimSpace(name) == "" || len(redirects) == 0 {
			return fmt.Errorf("%w: --name and --redirect-uri are required", errUsage)
		}
		var err error
		if scopes, err = bokat.ParseScopes(scopeList); err != nil {
			return fmt.Errorf("%w: --scopes: %v", errUsage, err)
		}
		if mode, err = bokat.ParseMode(modeName); err != nil {
			return fmt.Errorf("%w: --mode: %v", errUsage, err)
		}
		for _, u := range redirects {
			if err := oauth.ValidateRedirectURI(u); err != nil {
				return fmt.Errorf("%w: --redirect-uri: %v", errUsage, detailOf(err))
			}
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
	id, secret, err := svc.CreateOAuthClient(ctx, cliActor(e), oauth.ClientSpec{
		Name: name, RedirectURIs: redirects, Scopes: scopes, Public: public, Mode: mode,
	})
	if err != nil {
		return err
	}
	return json.NewEncoder(e.stdout).Encode(struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret,omitempty"`
	}{id, secret})
}

// detailOf returns the caller-facing detail of a *bokat.Error.
func detailOf(err error) string {
	var be *bokat.Error
	if errors.As(err, &be) {
		return be.Detail
	}
	return err.Error()
}
