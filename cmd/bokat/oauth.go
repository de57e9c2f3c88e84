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
	fs := newFlagSet("oauth-client create", e)
	var c commonConfig
	c.register(fs)
	var (
		name, scopeList string
		redirects       stringList
		public          bool
	)
	fs.String(&name, "name", "", "", "client name, shown to customers on the consent page (required)")
	fs.Var(&redirects, "redirect-uri", "exact redirect URI: https, or http on a loopback address; repeat for several (required)")
	fs.String(&scopeList, "scopes", "", "all", "comma-separated scopes the client may request, or all")
	fs.Bool(&public, "public", "", false, "a public client (native or browser app): no secret, PKCE only")
	if _, err := fs.parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if strings.TrimSpace(name) == "" || len(redirects) == 0 {
		return fmt.Errorf("%w: --name and --redirect-uri are required", errUsage)
	}
	scopes, err := bokat.ParseScopes(scopeList)
	if err != nil {
		return fmt.Errorf("%w: --scopes: %v", errUsage, err)
	}
	for _, u := range redirects {
		if err := oauth.ValidateRedirectURI(u); err != nil {
			return fmt.Errorf("%w: --redirect-uri: %v", errUsage, detailOf(err))
		}
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
	id, secret, err := oauth.CreateClient(ctx, db, hasher, oauth.ClientSpec{
		Name: name, RedirectURIs: redirects, Scopes: scopes, Public: public,
	}, e.now())
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
