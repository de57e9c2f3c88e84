package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"bokat"
	"bokat/internal/operator"
	"bokat/internal/sqlstore"
)

// runOperatorInvite makes an operator account: `bokat operator invite
// --email ADDRESS`. The account (the address sealed, as serve seals it) is
// written with its audit row; the person then signs in to the console at
// the printed address with a one-time code sent to the address. It must
// run with the secrets serve uses (--token-pepper, --secret-key), or the
// address is not found at sign-in.
func runOperatorInvite(ctx context.Context, args []string, e env) error {
	fs := newFlagSet("operator invite", e)
	var (
		c                         commonConfig
		secretKey, email, consURL string
	)
	c.register(fs)
	fs.Text(&secretKey, "secret-key", "BOKAT_SECRET_KEY", "", "base64 key (32 bytes) sealing personal data, as given to serve; comma-separated when rotating",
		func(s string) error {
			_, err := parseSecretKeys(s)
			return err
		})
	fs.String(&email, "email", "", "", "the operator's e-mail address")
	fs.Text(&consURL, "console-url", "", "http://127.0.0.1:8080", "origin of the console, as serve was given it (--admin-base-url or --base-url)", checkBaseURL)
	rest, err := fs.parse(args)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if len(rest) != 0 || strings.TrimSpace(email) == "" {
		return fmt.Errorf("%w: bokat operator invite --email ADDRESS", errUsage)
	}
	if err := c.validate(); err != nil {
		return err
	}
	db, _, _, err := openSealedStore(ctx, c, secretKey)
	if err != nil {
		return err
	}
	defer db.Close()
	svc := operator.NewService(sqlstore.Bind[operator.Tx](db), e.now, nil, nil)
	o, err := svc.Invite(ctx, cliActor(e), email)
	switch {
	case errors.Is(err, operator.ErrInvalid):
		return fmt.Errorf("%w: %v", errUsage, err)
	case errors.Is(err, bokat.ErrConflict):
		return errors.New("the address already has an operator account")
	case err != nil:
		return err
	}
	fmt.Fprintf(e.stdout, "%s is an operator; sign in at %s%s/sign-in\n", o.ID, strings.TrimRight(consURL, "/"), operator.Prefix)
	return nil
}
