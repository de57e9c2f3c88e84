package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"bokat"
	"bokat/internal/provider"
	"bokat/internal/sqlstore"
	"bokat/internal/wire"
)

// runProviderFeedURL prints the secret calendar feed address of each named
// provider, or of every provider when none is named: one "<id> <url>" line
// each. The address is derived from the token pepper and the base URL, so
// it must run with the same --token-pepper (or, in development, the same
// database) and --base-url as serve.
func runProviderFeedURL(ctx context.Context, args []string, e env) error {
	sc := newStoreCommand("provider feed-url", e)
	var baseURL string
	sc.fs.Text(&baseURL, "base-url", "BOKAT_BASE_URL", "http://127.0.0.1:8080", "public base URL of the service, as given to serve", checkBaseURL)
	ids, err := sc.parse(args, nil)
	if err != nil {
		return err
	}
	db, hasher, err := sc.openHashed(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	feed, err := wire.CalendarFeed(wire.Keys{Hasher: hasher}, db, baseURL, e.now)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		s, err := db.LoadSupply(ctx)
		if err != nil {
			return err
		}
		for _, p := range s.Providers {
			ids = append(ids, p.ID)
		}
	}
	for _, id := range ids {
		if _, err := db.ProviderName(ctx, id); errors.Is(err, bokat.ErrNotFound) {
			return fmt.Errorf("no provider %q", id)
		} else if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s %s\n", id, feed.URL(id))
	}
	return nil
}

// runProviderInvite invites a person to sign in to a provider's pages:
// `bokat provider invite PROVIDER_ID --email ADDRESS [--role owner|staff]`.
// The invitation (the address sealed, as serve seals it) is written with
// its audit row; the person then signs in at the printed address with a
// one-time code sent to the invited address. It must run with the secrets
// serve uses (--token-pepper, --secret-key), or the invitee is not found.
func runProviderInvite(ctx context.Context, args []string, e env) error {
	fs := newFlagSet("provider invite", e)
	var (
		c                          commonConfig
		secretKey, email, roleName string
		baseURL                    string
	)
	c.register(fs)
	fs.Text(&secretKey, "secret-key", "BOKAT_SECRET_KEY", "", "base64 key (32 bytes) sealing personal data, as given to serve; comma-separated when rotating",
		func(s string) error {
			_, err := parseSecretKeys(s)
			return err
		})
	fs.String(&email, "email", "", "", "the invited person's e-mail address")
	fs.String(&roleName, "role", "", string(provider.Owner), "owner (manages staff) or staff")
	fs.Text(&baseURL, "base-url", "BOKAT_BASE_URL", "http://127.0.0.1:8080", "public base URL of the service, as given to serve", checkBaseURL)
	rest, err := fs.parse(args)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if len(rest) != 1 || strings.TrimSpace(email) == "" {
		return fmt.Errorf("%w: bokat provider invite PROVIDER_ID --email ADDRESS [--role owner|staff]", errUsage)
	}
	role, err := provider.ParseRole(roleName)
	if err != nil {
		return fmt.Errorf("%w: --role: %v", errUsage, err)
	}
	if err := c.validate(); err != nil {
		return err
	}
	db, _, _, err := openSealedStore(ctx, c, secretKey)
	if err != nil {
		return err
	}
	defer db.Close()
	svc := provider.NewService(sqlstore.Bind[provider.Tx](db), e.now, nil)
	inv, err := svc.Invite(ctx, nil, rest[0], email, role)
	switch {
	case errors.Is(err, bokat.ErrNotFound):
		return fmt.Errorf("no provider %q", rest[0])
	case errors.Is(err, provider.ErrInvalid):
		return fmt.Errorf("%w: %v", errUsage, err)
	case err != nil:
		return err
	}
	fmt.Fprintf(e.stdout, "%s invited as %s of %s until %s; sign in at %s/provider/sign-in\n",
		inv.ID, inv.Role, inv.ProviderID, inv.ExpiresAt.Format(time.RFC3339), strings.TrimRight(baseURL, "/"))
	return nil
}

// runProviderAudit prints a provider's latest audit entries, newest first,
// one tab-separated line each: time, actor, action, object type and id,
// note. It is how the operator sees what providers did: acknowledgements,
// flags with their notes, openings of customer contact data, invitations.
func runProviderAudit(ctx context.Context, args []string, e env) error {
	fs := newFlagSet("provider audit", e)
	var (
		c     commonConfig
		limit string
	)
	c.register(fs)
	fs.String(&limit, "limit", "", "100", "how many entries to print, at most 10000")
	rest, err := fs.parse(args)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	n, err := strconv.Atoi(limit)
	if len(rest) != 1 || err != nil || n < 1 || n > 10000 {
		return fmt.Errorf("%w: bokat provider audit PROVIDER_ID [--limit N]", errUsage)
	}
	if err := c.validate(); err != nil {
		return err
	}
	db, err := openStore(ctx, c)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ProviderName(ctx, rest[0]); errors.Is(err, bokat.ErrNotFound) {
		return fmt.Errorf("no provider %q", rest[0])
	} else if err != nil {
		return err
	}
	entries, err := sqlstore.Bind[provider.Tx](db).ProviderAudit(ctx, rest[0], n)
	if err != nil {
		return err
	}
	for _, a := range entries {
		fmt.Fprintf(e.stdout, "%s\t%s\t%s\t%s\t%s\t%s\n", a.At.Format(time.RFC3339), a.Actor, a.Action, a.ObjectType,
			a.ObjectID, strconv.Quote(a.Note))
	}
	return nil
}
