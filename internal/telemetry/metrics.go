// Package telemetry is what operators see of a running Bokat: Prometheus
// metrics (one registry per server, never the global default), liveness and
// readiness checks, and the heartbeats of background workers. It holds no
// customer data: labels are route patterns, statuses and fixed result names.
package telemetry

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Result names used as the `result` label of delivery counters. Any other
// value is counted as "other" so that callers cannot explode the series.
const (
	// ResultDelivered: a webhook delivery got a 2xx.
	ResultDelivered = "delivered"
	// ResultSent: a notification was accepted by the mail server (or written
	// to the mail folder in development).
	ResultSent = "sent"
	// ResultSkipped: a notification had nobody to go to, or was superseded.
	ResultSkipped = "skipped"
	// ResultRetry: an attempt failed and another is scheduled.
	ResultRetry = "retry"
	// ResultFailed: the last attempt failed; no more will be made.
	ResultFailed = "failed"
)

var (
	webhookResults      = []string{ResultDelivered, ResultRetry, ResultFailed}
	notificationResults = []string{ResultSent, ResultSkipped, ResultRetry, ResultFailed}
	recipients          = []string{"customer", "provider"}
	bookingChanges      = []string{"confirmed", "cancelled", "rescheduled"}
)

// Metrics holds the server's Prometheus registry and its instruments. Every
// method is safe on a nil *Metrics (it does nothing), so code under test may
// run without one.
type Metrics struct {
	reg           *prometheus.Registry
	now           func() time.Time
	requests      *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	toolResults   *prometheus.CounterVec
	bookings      *prometheus.CounterVec
	webhooks      *prometheus.CounterVec
	notifications *prometheus.CounterVec
	rateLimited   *prometheus.CounterVec
	limiterErrors prometheus.Counter
	searchWarmup  prometheus.Gauge
	searchReloads *prometheus.CounterVec
	searchReload  prometheus.Gauge
	// series caches the request counter and duration histogram of each
	// method, route and status seen, so that a request looks them up in
	// one map read instead of hashing its labels twice (see ObserveRequest).
	series      sync.Map // requestLabels → requestSeries
	seriesCount atomic.Int64
}

// requestLabels are the labels of a request's series.
type requestLabels struct {
	method, route string
	status        int
}

// requestSeries are the instruments of one requestLabels.
type requestSeries struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

// maxCachedSeries bounds the series cache: routes are patterns and statuses
// few, but methods are what clients send, so past the bound a request takes
// the label lookups instead.
const maxCachedSeries = 1024

// NewMetrics returns the instruments on a fresh registry that also carries
// the Go runtime and process collectors. now is the clock of gauges that
// report ages (time.Now when nil).
func NewMetrics(now func() time.Time) *Metrics {
	if now == nil {
		now = time.Now
	}
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		now: now,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bokat_http_requests_total",
			Help: "HTTP requests answered, by method, route pattern and status code.",
		}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "bokat_http_request_duration_seconds",
			Help:    "Time to answer HTTP requests, by method and route pattern.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"method", "route"}),
		toolResults: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bokat_mcp_tool_results_total",
			Help: "MCP tool results, by tool and the HTTP status of the operation's answer (input_required: a consent form).",
		}, []string{"tool", "status"}),
		bookings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bokat_booking_changes_total",
			Help: "Committed booking changes: confirmed, cancelled, rescheduled.",
		}, []string{"change"}),
		webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bokat_webhook_deliveries_total",
			Help: "Webhook delivery attempts by result: delivered, retry, failed.",
		}, []string{"result"}),
		notifications: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bokat_notifications_total",
			Help: "Customer and provider notification attempts by recipient and result: sent, skipped, retry, failed.",
		}, []string{"recipient", "result"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bokat_rate_limit_rejections_total",
			Help: "Requests refused with 429 rate_limited, by policy (search, writes, reads).",
		}, []string{"policy"}),
		limiterErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "bokat_rate_limit_backend_errors_total",
			Help: "Requests let through unchecked because the rate-limit backend (Redis) failed.",
		}),
		searchWarmup: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "bokat_search_index_warmup_seconds",
			Help: "Time the search index took to build at start-up (0 until it is built).",
		}),
		searchReloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bokat_search_index_reloads_total",
			Help: "Reloads of a large supply beside the search index in use, by result: replaced (the index), failed.",
		}, []string{"result"}),
		searchReload: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "bokat_search_index_reload_seconds",
			Help: "Time the last reload beside the search index in use took (0 until one ended).",
		}),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.duration, m.toolResults, m.bookings, m.webhooks, m.notifications, m.rateLimited, m.limiterErrors, m.searchWarmup,
		m.searchReloads, m.searchReload,
	)
	// Known series exist from the start, at zero, so rates and alerts work
	// before the first event.
	for _, c := range bookingChanges {
		m.bookings.WithLabelValues(c)
	}
	for _, r := range webhookResults {
		m.webhooks.WithLabelValues(r)
	}
	for _, r := range reloadResults {
		m.searchReloads.WithLabelValues(r)
	}
	for _, rc := range recipients {
		for _, r := range notificationResults {
			m.notifications.WithLabelValues(rc, r)
		}
	}
	return m
}

// Registry returns the registry, for registering further collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler(log *slog.Logger) http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      m.reg,
	})
}

// ObserveRequest records one answered HTTP request. route is the matched
// pattern (never the raw path, which would hold ids).
func (m *Metrics) ObserveRequest(method, route string, status int, d time.Duration) {
	if m == nil {
		return
	}
	key := requestLabels{method, route, status}
	v, ok := m.series.Load(key)
	if !ok {
		s := requestSeries{
			count:    m.requests.WithLabelValues(method, route, strconv.Itoa(status)),
			duration: m.duration.WithLabelValues(method, route),
		}
		if m.seriesCount.Load() >= maxCachedSeries {
			s.count.Inc()
			s.duration.Observe(d.Seconds())
			return
		}
		var loaded bool
		if v, loaded = m.series.LoadOrStore(key, s); !loaded {
			m.seriesCount.Add(1)
		}
	}
	s := v.(requestSeries)
	s.count.Inc()
	s.duration.Observe(d.Seconds())
}

// ObserveToolResult records one MCP tool result: its tool (a name of the
// fixed tool set) and the HTTP status of the operation's answer, which
// travels inside an HTTP 200; 0 counts an input-required result.
func (m *Metrics) ObserveToolResult(tool string, status int) {
	if m == nil {
		return
	}
	label := strconv.Itoa(status)
	if status == 0 {
		label = "input_required"
	}
	m.toolResults.WithLabelValues(tool, label).Inc()
}

// BookingConfirmed counts a committed confirmation (not a replay). Call it
// after the transaction commits.
func (m *Metrics) BookingConfirmed() { m.bookingChange("confirmed") }

// BookingCancelled counts a committed cancellation (not a replay).
func (m *Metrics) BookingCancelled() { m.bookingChange("cancelled") }

// BookingRescheduled counts a committed reschedule (not a replay).
func (m *Metrics) BookingRescheduled() { m.bookingChange("rescheduled") }

func (m *Metrics) bookingChange(c string) {
	if m == nil {
		return
	}
	m.bookings.WithLabelValues(c).Inc()
}

// WebhookDelivery counts one webhook delivery attempt by result:
// ResultDelivered, ResultRetry or ResultFailed.
func (m *Metrics) WebhookDelivery(result string) {
	if m == nil {
		return
	}
	m.webhooks.WithLabelValues(oneOf(result, webhookResults)).Inc()
}

// Notification counts one notification attempt by recipient ("customer",
// "provider") and result: ResultSent, ResultSkipped, ResultRetry or
// ResultFailed.
func (m *Metrics) Notification(recipient, result string) {
	if m == nil {
		return
	}
	m.notifications.WithLabelValues(oneOf(recipient, recipients), oneOf(result, notificationResults)).Inc()
}

// RateLimited counts a request refused under the named policy.
func (m *Metrics) RateLimited(policy string) {
	if m == nil {
		return
	}
	m.rateLimited.WithLabelValues(policy).Inc()
}

// RateLimitBackendError counts a request let through because the limiter
// failed.
func (m *Metrics) RateLimitBackendError() {
	if m == nil {
		return
	}
	m.limiterErrors.Inc()
}

// SearchIndexWarm records how long the search index took to build at
// start-up.
func (m *Metrics) SearchIndexWarm(d time.Duration) {
	if m == nil {
		return
	}
	m.searchWarmup.Set(d.Seconds())
}

// reloadResults are the results of a reload beside the search index.
var reloadResults = []string{"replaced", "failed"}

// SearchIndexReloaded records a reload beside the search index in use that
// ended: how long it took, and err when it failed (the index in use is
// kept).
func (m *Metrics) SearchIndexReloaded(took time.Duration, err error) {
	if m == nil {
		return
	}
	m.searchReload.Set(took.Seconds())
	if err != nil {
		m.searchReloads.WithLabelValues("failed").Inc()
		return
	}
	m.searchReloads.WithLabelValues("replaced").Inc()
}

func oneOf(v string, allowed []string) string {
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	return "other"
}

// BacklogSource reports the oldest waiting live work, for the lag gauges:
// test-mode events and jobs never count in them.
type BacklogSource interface {
	// OldestUnrelayedOutboxEvent returns the creation time of the oldest
	// outbox event not yet relayed; ok is false when none waits.
	OldestUnrelayedOutboxEvent(ctx context.Context) (t time.Time, ok bool, err error)
	// OldestDueNotification returns when the longest-waiting pending
	// notification job became due (at or before now); ok is false when
	// none is due.
	OldestDueNotification(ctx context.Context, now time.Time) (t time.Time, ok bool, err error)
}

// WatchBacklog registers the gauges bokat_outbox_lag_seconds and
// bokat_notification_lag_seconds, computed by a query at each scrape
// (bounded by a 2 s timeout). A failed query leaves its gauge out of that
// scrape and is logged.
func (m *Metrics) WatchBacklog(src BacklogSource, log *slog.Logger) {
	m.reg.MustRegister(&backlogCollector{src: src, log: log, now: m.now})
}

type backlogCollector struct {
	src BacklogSource
	log *slog.Logger
	now func() time.Time
}

var (
	outboxLagDesc = prometheus.NewDesc("bokat_outbox_lag_seconds",
		"Age of the oldest live outbox event not yet relayed (0 when none waits; test events never count).", nil, nil)
	notificationLagDesc = prometheus.NewDesc("bokat_notification_lag_seconds",
		"How long the longest-waiting due live notification job has waited (0 when none is due; test jobs never count).", nil, nil)
)

func (c *backlogCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- outboxLagDesc
	ch <- notificationLagDesc
}

func (c *backlogCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	now := c.now()
	if t, ok, err := c.src.OldestUnrelayedOutboxEvent(ctx); err != nil {
		c.log.Warn("metrics: outbox lag query failed", "error", err.Error())
	} else {
		ch <- prometheus.MustNewConstMetric(outboxLagDesc, prometheus.GaugeValue, age(now, t, ok))
	}
	if t, ok, err := c.src.OldestDueNotification(ctx, now); err != nil {
		c.log.Warn("metrics: notification lag query failed", "error", err.Error())
	} else {
		ch <- prometheus.MustNewConstMetric(notificationLagDesc, prometheus.GaugeValue, age(now, t, ok))
	}
}

func age(now, t time.Time, ok bool) float64 {
	if !ok || t.After(now) {
		return 0
	}
	return now.Sub(t).Seconds()
}
