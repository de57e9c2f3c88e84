package httpapi_test

import (
	"bokat/internal/httpapi"
	"bokat/internal/oauth"
	"bokat/internal/testrealm"
	"bokat/internal/webhook"
	"bokat/internal/wire"
)

// The API's test servers are built by the process wiring. The wiring
// imports httpapi, so only this external test package may import it; it
// hands the wiring to the package's own test files through WireTest.
func init() { httpapi.WireTest = wireTest }

// wireTest completes w.Config: the use cases and the operations parts it
// lacks are built by the wiring, on w's store and keys; the ones the test
// set are kept.
func wireTest(w httpapi.TestWiring) error {
	cfg := w.Config
	b := wire.Base{Log: cfg.Logger, Now: cfg.Now, Store: w.DB, Catalog: cfg.Catalog,
		Keys: wire.Keys{Hasher: w.Hasher, Sealing: w.Sealing, Options: w.OptionKeys, Feed: w.FeedKey}}
	o := wire.Options{BaseURL: cfg.BaseURL, Production: cfg.Production, WebhookAllowPrivate: cfg.WebhookAllowPrivate,
		OAuth: w.OAuth, AccessTokens: w.AccessTokens}
	u := wire.UseCases{Search: cfg.Search, Bookings: cfg.Bookings, Followups: cfg.Followups, Feed: cfg.CalendarFeed, Auth: cfg.Auth}
	if cfg.Webhooks != nil {
		u.Webhooks = cfg.Webhooks.(*webhook.Service)
	}
	if cfg.OAuth != nil {
		u.OAuth = cfg.OAuth.(*oauth.Server)
	}
	if err := u.Build(b, o); err != nil {
		return err
	}
	cfg.Search, cfg.Bookings, cfg.Followups, cfg.CalendarFeed, cfg.Auth = u.Search, u.Bookings, u.Followups, u.Feed, u.Auth
	cfg.Webhooks, cfg.OAuth = u.Webhooks, u.OAuth
	if cfg.Providers == nil {
		cfg.Providers = u.Providers
	}
	if cfg.TestMessages == nil {
		cfg.TestMessages = w.DB
	}
	if cfg.TestClock == nil {
		cfg.TestClock = testrealm.NewClock(w.DB, cfg.Now)
	}
	if cfg.Events == nil {
		cfg.Events = w.DB
	}
	ops := wire.Ops{Metrics: cfg.Metrics, Health: cfg.Health, Limiter: cfg.RateLimiter}
	ops.Complete(cfg.Logger, cfg.Store, cfg.Now)
	cfg.Metrics, cfg.Health, cfg.RateLimiter = ops.Metrics, ops.Health, ops.Limiter
	return nil
}
