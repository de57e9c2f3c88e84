package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Check is one readiness condition. Run returns nil when it holds. To show
// a reason in the /readyz body, return an error made by Failed; other errors
// show only "failed" (their text goes to the log, not to the caller).
type Check struct {
	Name string
	Run  func(ctx context.Context) error
}

// CheckError is a failed check with a reason safe to show to anyone who can
// reach /readyz: no secrets, no host names, no customer data.
type CheckError struct {
	Reason string
	Err    error
}

func (e *CheckError) Error() string {
	if e.Err != nil {
		return e.Reason + ": " + e.Err.Error()
	}
	return e.Reason
}

func (e *CheckError) Unwrap() error { return e.Err }

// Failed returns a CheckError with a public reason and the logged cause.
func Failed(reason string, cause error) error { return &CheckError{Reason: reason, Err: cause} }

// Health answers the operator endpoints /healthz (liveness) and /readyz
// (readiness).
type Health struct {
	log     *slog.Logger
	checks  []Check
	timeout time.Duration
}

// NewHealth returns a Health running the checks, each bounded by 2 s.
func NewHealth(log *slog.Logger, checks ...Check) *Health {
	return &Health{log: log, checks: checks, timeout: 2 * time.Second}
}

// Add adds a check; call it before serving.
func (h *Health) Add(c Check) *Health {
	h.checks = append(h.checks, c)
	return h
}

// WithTimeout sets how long each check may run (2 s by default).
func (h *Health) WithTimeout(d time.Duration) *Health {
	h.timeout = d
	return h
}

// CheckResult is the outcome of one check in the /readyz body.
type CheckResult struct {
	Name   string `json:"name"`
	Status string `json:"status"` // "ok" or "fail"
	Reason string `json:"reason,omitempty"`
}

// Report is the /readyz body.
type Report struct {
	Status  string        `json:"status"` // "ok" or "fail"
	Checks  []CheckResult `json:"checks"`
	Failing []string      `json:"failing,omitempty"`
}

// Ready runs every check concurrently and reports the outcome.
func (h *Health) Ready(ctx context.Context) Report {
	results := make([]CheckResult, len(h.checks))
	var wg sync.WaitGroup
	for i, c := range h.checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, h.timeout)
			defer cancel()
			err := c.Run(cctx)
			if err == nil && cctx.Err() != nil {
				err = Failed("timed out", cctx.Err())
			}
			results[i] = CheckResult{Name: c.Name, Status: "ok"}
			if err != nil {
				results[i].Status = "fail"
				results[i].Reason = "failed"
				var ce *CheckError
				if errors.As(err, &ce) {
					results[i].Reason = ce.Reason
				}
				h.log.WarnContext(ctx, "readiness check failed", "check", c.Name, "error", err.Error())
			}
		}()
	}
	wg.Wait()
	rep := Report{Status: "ok", Checks: results}
	for _, r := range results {
		if r.Status != "ok" {
			rep.Status = "fail"
			rep.Failing = append(rep.Failing, r.Name)
		}
	}
	return rep
}

// LiveHandler answers 200 {"status":"ok"} while the process serves.
func (h *Health) LiveHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeOperatorJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
}

// ReadyHandler answers 200 with the Report when every check holds, and 503
// with the Report (naming the failing checks) otherwise.
func (h *Health) ReadyHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rep := h.Ready(r.Context())
		status := http.StatusOK
		if rep.Status != "ok" {
			status = http.StatusServiceUnavailable
			w.Header().Set("Retry-After", "5")
		}
		writeOperatorJSON(w, status, rep)
	})
}

func writeOperatorJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// Heartbeats knows the background workers that must be running and when
// each last showed it is alive.
type Heartbeats struct {
	now     func() time.Time
	mu      sync.Mutex
	workers []*Heartbeat
}

// NewHeartbeats returns an empty registry on the clock (time.Now when nil).
func NewHeartbeats(now func() time.Time) *Heartbeats {
	if now == nil {
		now = time.Now
	}
	return &Heartbeats{now: now}
}

// Heartbeat is one worker's pulse. Methods on a nil *Heartbeat do nothing.
type Heartbeat struct {
	hb         *Heartbeats
	name       string
	maxSilence time.Duration
	last       atomic.Int64 // Unix nanoseconds
	stopped    atomic.Bool
}

// Register adds a worker that must beat at least every maxSilence. It
// counts as alive from now.
func (h *Heartbeats) Register(name string, maxSilence time.Duration) *Heartbeat {
	b := &Heartbeat{hb: h, name: name, maxSilence: maxSilence}
	b.last.Store(h.now().UnixNano())
	h.mu.Lock()
	h.workers = append(slices.DeleteFunc(h.workers, func(o *Heartbeat) bool { return o.name == name }), b)
	h.mu.Unlock()
	return b
}

// Beat records that the worker is alive.
func (b *Heartbeat) Beat() {
	if b == nil {
		return
	}
	b.last.Store(b.hb.now().UnixNano())
}

// Stop records that the worker has ended; readiness fails from then on.
func (b *Heartbeat) Stop() {
	if b == nil {
		return
	}
	b.stopped.Store(true)
}

// Check returns nil when every registered worker runs and beat recently,
// and a CheckError naming the others.
func (h *Heartbeats) Check(ctx context.Context) error {
	h.mu.Lock()
	workers := slices.Clone(h.workers)
	h.mu.Unlock()
	now := h.now()
	var bad []string
	for _, b := range workers {
		switch silent := now.Sub(time.Unix(0, b.last.Load())); {
		case b.stopped.Load():
			bad = append(bad, b.name+" stopped")
		case silent > b.maxSilence:
			bad = append(bad, fmt.Sprintf("%s silent for %s", b.name, silent.Round(time.Second)))
		}
	}
	if len(bad) > 0 {
		return Failed(fmt.Sprintf("workers not running: %v", bad), nil)
	}
	return nil
}
