package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"bokat/internal/booking"
)

type serveConfig struct {
	commonConfig
	opsConfig
	retentionConfig
	Addr    string
	BaseURL string
	// AdminAddr, when set, is the operator console's own listener: the
	// console is then served there only, not on Addr. AdminBaseURL is its
	// origin (default http://<admin-addr>).
	AdminAddr       string
	AdminBaseURL    string
	Demo            bool
	AuthOptional    bool
	ShutdownTimeout time.Duration
	// OptionSigningKeys are "kid:base64key,..." (first signs, all verify);
	// generated once and kept in the database in development.
	OptionSigningKeys string
	OptionTTL         time.Duration
	// SecretKey seals stored secrets: base64 AES-256 keys, comma-separated,
	// the first sealing (rotation). Required in production.
	SecretKey           string
	WebhookAllowPrivate bool
	// LegacySunset is the announced removal date of the deprecated paths
	// ("" for none), as accepted by parseSunset.
	LegacySunset string
	calendarSyncConfig
	// PurgeDynamicClients is how long a dynamically registered OAuth
	// client may go unused before serve deletes it (0: never).
	PurgeDynamicClients time.Duration
}

func (c *serveConfig) register(fs *flagSet) {
	c.commonConfig.register(fs)
	c.retentionConfig.register(fs)
	c.calendarSyncConfig.register(fs)
	fs.Text(&c.Addr, "addr", "BOKAT_ADDR", "127.0.0.1:8080", "listen address", checkListenAddr)
	fs.Text(&c.BaseURL, "base-url", "BOKAT_BASE_URL", "", "public base URL (default http://<addr>)", checkBaseURL)
	fs.Text(&c.AdminAddr, "admin-addr", "BOKAT_ADMIN_ADDR", "", "serve the operator console (/operator/) on this address only, not on --addr (host:port)",
		func(s string) error {
			if s == "" {
				return nil
			}
			return checkListenAddr(s)
		})
	fs.Text(&c.AdminBaseURL, "admin-base-url", "BOKAT_ADMIN_BASE_URL", "", "origin the operator console is reached at with --admin-addr (default http://<admin-addr>)", checkBaseURL)
	fs.Bool(&c.Demo, "demo", "BOKAT_DEMO", false, "seed the demo supply and print a development partner token with every scope (development only)")
	fs.Bool(&c.AuthOptional, "auth-optional", "BOKAT_AUTH_OPTIONAL", false, "admit requests without a credential (development only)")
	fs.Duration(&c.ShutdownTimeout, "shutdown-timeout", "BOKAT_SHUTDOWN_TIMEOUT", 15*time.Second, "how long to drain requests on shutdown")
	fs.Text(&c.OptionSigningKeys, "option-signing-keys", "BOKAT_OPTION_SIGNING_KEYS", "",
		`booking option signing keys "kid:base64key,kid:base64key" (first signs, all verify; >= 32 bytes each); generated in development`,
		func(s string) error {
			if s == "" {
				return nil
			}
			_, err := booking.ParseKeyring(s)
			return err
		})
	fs.DurationIn(&c.OptionTTL, "option-ttl", "BOKAT_OPTION_TTL", booking.DefaultOptionTTL, time.Second, 24*time.Hour,
		"lifetime of a booking option, 1m to 24h (down to 1s in development, to exercise expiry)")
	fs.Text(&c.SecretKey, "secret-key", "BOKAT_SECRET_KEY", "", "base64 key (32 bytes) sealing stored secrets and customer contact data; comma-separated to rotate, the first seals; required in production",
		func(s string) error {
			if s == "" {
				return nil
			}
			_, err := parseSecretKeys(s)
			return err
		})
	fs.Bool(&c.WebhookAllowPrivate, "webhook-allow-private", "BOKAT_WEBHOOK_ALLOW_PRIVATE", false, "let webhooks target http:// and private or loopback addresses (development only)")
	fs.Text(&c.LegacySunset, "legacy-sunset", "BOKAT_LEGACY_SUNSET", "",
		"removal date of the deprecated /api/public paths, YYYY-MM-DD (midnight UTC) or RFC 3339; sent as the Sunset header on every response of theirs",
		func(s string) error {
			_, err := parseSunset(s)
			return err
		})
	c.PurgeDynamicClients = defaultPurgeDynamicClients
	fs.Text(new(string), "purge-dynamic-clients", "BOKAT_PURGE_DYNAMIC_CLIENTS", "90d",
		"delete dynamically registered OAuth clients unused this long, hourly (whole days or a Go duration, at least 1d), or off",
		purgeDynamicClientsSetter(&c.PurgeDynamicClients))
	c.opsConfig.register(fs)
}

// productionMinOptionTTL is the shortest option lifetime production takes:
// an assistant needs time to show an option and ask for consent.
const productionMinOptionTTL = time.Minute

func (c *serveConfig) validate(fs *flagSet) error {
	if err := c.commonConfig.validate(); err != nil {
		return err
	}
	if c.production() {
		// The settings production refuses when turned on.
		var bad []string
		for _, s := range []struct {
			name string
			on   bool
		}{{"demo", c.Demo}, {"auth-optional", c.AuthOptional}, {"webhook-allow-private", c.WebhookAllowPrivate}} {
			if s.on {
				bad = append(bad, fs.label(s.name))
			}
		}
		if len(bad) > 0 {
			return fmt.Errorf("%w: %s is development only and refused in production", errUsage, strings.Join(bad, ", "))
		}
		if c.OptionTTL < productionMinOptionTTL {
			return fmt.Errorf("%w: %s: must be at least %s in production (shorter lifetimes are development only), got %s",
				errUsage, fs.label("option-ttl"), productionMinOptionTTL, c.OptionTTL)
		}
		if c.BaseURL == "" {
			return fmt.Errorf("%w: production requires --base-url (BOKAT_BASE_URL)", errUsage)
		}
		if err := checkProductionBaseURL(c.BaseURL); err != nil {
			return fmt.Errorf("%w: %s: %v", errUsage, fs.label("base-url"), err)
		}
		if c.AdminAddr != "" {
			admin := c.AdminBaseURL
			if admin == "" {
				admin = "http://" + c.AdminAddr
			}
			if err := checkProductionBaseURL(admin); err != nil {
				return fmt.Errorf("%w: %s: %v (give an https --admin-base-url)", errUsage, fs.label("admin-addr"), err)
			}
		}
		if err := c.calendarSyncConfig.validateProduction(fs); err != nil {
			return err
		}
		if c.SecretKey == "" {
			return fmt.Errorf("production requires BOKAT_SECRET_KEY (--secret-key): a base64 key of 32 bytes sealing stored secrets; secrets are never generated in production")
		}
	}
	return c.opsConfig.validate(fs, c.production())
}

// parseSunset reads a --legacy-sunset value: a date (YYYY-MM-DD, taken as
// midnight UTC) or an RFC 3339 instant. "" is the zero time: no sunset.
func parseSunset(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is not a date (write it like 2027-06-30 or 2027-06-30T00:00:00Z)", s)
}

// checkListenAddr accepts host:port (the host may be empty: every
// interface).
func checkListenAddr(s string) error {
	if _, _, err := net.SplitHostPort(s); err != nil {
		return fmt.Errorf("%q is not host:port (e.g. 127.0.0.1:8080)", s)
	}
	return nil
}

// checkBaseURL accepts an absolute http(s) URL, or nothing (the default is
// derived from --addr).
func checkBaseURL(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil {
		return fmt.Errorf("must be an absolute http(s) URL such as https://api.example.se, got %q", raw)
	}
	return nil
}

// checkProductionBaseURL requires the public address of a production server
// to be https (sign-in cookies are Secure only there, and OAuth redirects and
// webhook links name it); plain http is accepted only for a loopback host,
// where no traffic leaves the machine. raw has passed checkBaseURL.
func checkProductionBaseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if u.Scheme == "https" {
		return nil
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); (err == nil && ip.IsLoopback()) || host == "localhost" {
		return nil
	}
	return fmt.Errorf("production requires an https --base-url (http only on a loopback address), got %q", raw)
}

// runServe runs the API until ctx is done, then shuts down in order: stop
// accepting and drain HTTP, stop the workers, close the store.
func runServe(ctx context.Context, args []string, e env) error {
	fs := newFlagSet("serve", e)
	var c serveConfig
	c.register(fs)
	if _, err := fs.parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if err := c.validate(fs); err != nil {
		return err
	}
	a, err := newApp(ctx, c, e)
	if err != nil {
		return err
	}
	return errors.Join(a.Run(ctx), a.Close())
}
