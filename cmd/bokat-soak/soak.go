package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// appName marks the soak's own database connections, which the
// connection count leaves out.
const appName = "bokat-soak"

// restartGrace is how long after an instance answers again its restart
// may still explain a failed request (nginx marks the instance down for
// fail_timeout, 2 s, after a failure).
const restartGrace = 5 * time.Second

type soak struct {
	c      config
	d      deployment
	log    io.Writer
	client *http.Client
	db     *sql.DB

	mu       sync.Mutex
	statuses map[string]map[int]int
	refusals map[string]int
	failures []failure
	pool     []*booking // bookings a worker may pick (not in use)
	created  []*booking // every booking answered 201
	windows  []window
	snaps    []snapshot
	samples  []sample
	pgMax    int
	notes    []string

	steady, flaky *receiver
	feed          *feedServer
	feedID        string
	seq           atomic.Int64
}

// booking is one booking the soak made.
type booking struct {
	id, postcode string
	// cancelled: the soak's cancellation was answered 200; cancelUnknown:
	// a cancellation got no answer (it may have committed).
	cancelled, cancelUnknown bool
}

// failure is a request answered 5xx or not at all.
type failure struct {
	at     time.Time
	op     string
	status int
}

// window is a restart: from the signal until the instance answered again,
// plus restartGrace.
type window struct {
	Instance string    `json:"instance"`
	Signal   string    `json:"signal"`
	From     time.Time `json:"from"`
	Ready    time.Time `json:"ready"`
}

func (w window) covers(t time.Time) bool {
	return !t.Before(w.From.Add(-time.Second)) && !t.After(w.Ready.Add(restartGrace))
}

func newSoak(ctx context.Context, c config, d deployment, logw io.Writer) (*soak, error) {
	dsn := d.Database
	if strings.Contains(dsn, "?") {
		dsn += "&application_name=" + appName
	} else {
		dsn += "?application_name=" + appName
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(2)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("the deployment's database: %w", err)
	}
	s := &soak{c: c, d: d, log: logw, db: db, statuses: map[string]map[int]int{}, refusals: map[string]int{},
		client: &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	s.steady, err = newReceiver("steady", 0)
	if err != nil {
		return nil, err
	}
	s.flaky, err = newReceiver("flaky", 3)
	if err != nil {
		return nil, err
	}
	s.feed, err = newFeedServer()
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *soak) close() {
	s.steady.close()
	s.flaky.close()
	s.feed.close()
	s.db.Close()
}

func (s *soak) logf(format string, args ...any) {
	fmt.Fprintf(s.log, "%s bokat-soak: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// record counts one answer (status 0: none) of op.
func (s *soak) record(op string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.statuses[op]
	if m == nil {
		m = map[int]int{}
		s.statuses[op] = m
	}
	m[status]++
	if status == 0 || status >= 500 {
		s.failures = append(s.failures, failure{at: time.Now(), op: op, status: status})
	}
}

// call sends a JSON request through nginx and records its status under op.
func (s *soak) call(ctx context.Context, op, method, path, token string, body any, header ...string) (int, map[string]any) {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.d.BaseURL+path, rd)
	if err != nil {
		panic(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := s.client.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			s.record(op, 0)
		}
		return 0, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	s.record(op, resp.StatusCode)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	if resp.StatusCode >= 400 {
		s.refusal(op, resp.StatusCode, out)
	}
	return resp.StatusCode, out
}

var postcodes = []string{"113 45", "118 60", "112 21", "114 34"}

func searchBody(rng *rand.Rand) map[string]any {
	return searchAt(postcodes[rng.IntN(len(postcodes))], rng)
}

func searchAt(postcode string, rng *rand.Rand) map[string]any {
	timing := []string{"inom två veckor", "nästa vecka", "så snart som möjligt", "om två veckor"}
	return map[string]any{
		"vertical_id": "vvs", "job_type_id": "install_faucet", "description": "Byta köksblandare, ny finns på plats.",
		"location": map[string]any{"country_code": "SE", "postcode": postcode},
		"timing":   map[string]any{"preferred_time_text": timing[rng.IntN(len(timing))]},
	}
}

func (s *soak) key(kind string) string {
	return fmt.Sprintf("soak-%s-%d-%d", kind, time.Now().UnixNano(), s.seq.Add(1))
}

func options(res map[string]any) []map[string]any {
	raw, _ := res["options"].([]any)
	var out []map[string]any
	for _, o := range raw {
		if m, ok := o.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func termsVersion(o map[string]any) any {
	t, _ := o["terms"].(map[string]any)
	return t["version"]
}

func serviceLocation(postcode string) map[string]any {
	return map[string]any{"country_code": "SE", "address": "Drottninggatan 1", "postcode": postcode}
}

// unanswered reports whether a write's outcome is unknown: no answer, or
// the proxy's own 502/503/504 (the instance went away with the request).
// A client retries those with the same idempotency key.
func unanswered(status int) bool {
	return status == 0 || status == 502 || status == 503 || status == 504
}

// searchAndMaybeConfirm searches and, with probability p, confirms one of
// the options.
func (s *soak) searchAndMaybeConfirm(ctx context.Context, rng *rand.Rand, p float64) {
	postcode := postcodes[rng.IntN(len(postcodes))]
	status, res := s.call(ctx, "search", "POST", "/v1/booking-options", s.d.Partner.Token, searchAt(postcode, rng))
	opts := options(res)
	if status != 200 || len(opts) == 0 || rng.Float64() >= p {
		return
	}
	o := opts[rng.IntN(len(opts))]
	k := s.key("confirm")
	body := map[string]any{
		"booking_option_id":         o["booking_option_id"],
		"customer":                  map[string]any{"name": "Soak Kund", "phone": "+46701234567", "email": "soak.kund@example.se"},
		"service_location":          serviceLocation(postcode),
		"user_consent_confirmed":    true,
		"booking_terms_accepted":    true,
		"booking_terms_version":     termsVersion(o),
		"booking_terms_accepted_at": time.Now().Format(time.RFC3339),
		"idempotency_key":           k,
	}
	status, res = s.call(ctx, "confirm", "POST", "/v1/bookings", s.d.Partner.Token, body)
	if unanswered(status) {
		// No answer (a restart): retry with the same key, as a client would.
		status, res = s.call(ctx, "confirm_retry", "POST", "/v1/bookings", s.d.Partner.Token, body)
	}
	if status == 201 || (status == 200 && res["idempotent_replay"] == true) {
		b, _ := res["booking"].(map[string]any)
		id, _ := b["id"].(string)
		if id == "" {
			s.note("a confirmation answered %d without a booking id", status)
			return
		}
		bk := &booking{id: id, postcode: postcode}
		s.mu.Lock()
		s.created = append(s.created, bk)
		s.pool = append(s.pool, bk)
		s.mu.Unlock()
	}
}

// refusal counts a 4xx or 5xx answer by its Problem code.
func (s *soak) refusal(op string, status int, res map[string]any) {
	code := ""
	for _, k := range []string{"code", "error_code", "type", "title"} {
		if v, ok := res[k].(string); ok && v != "" {
			code = v
			break
		}
	}
	if e, ok := res["error"].(map[string]any); ok && code == "" {
		code, _ = e["code"].(string)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refusals[fmt.Sprintf("%s %d %s", op, status, code)]++
}

func (s *soak) note(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.notes) < 20 {
		s.notes = append(s.notes, fmt.Sprintf(format, args...))
	}
}

// take removes a random booking from the pool (nil when empty); give puts
// it back.
func (s *soak) take(rng *rand.Rand) *booking {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pool) == 0 {
		return nil
	}
	i := rng.IntN(len(s.pool))
	b := s.pool[i]
	s.pool[i] = s.pool[len(s.pool)-1]
	s.pool = s.pool[:len(s.pool)-1]
	return b
}

func (s *soak) give(b *booking) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pool = append(s.pool, b)
}

func (s *soak) poolSize() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pool)
}

func (s *soak) status(ctx context.Context, b *booking) {
	s.call(ctx, "status", "GET", "/v1/bookings/"+b.id, s.d.Partner.Token, nil)
}

func (s *soak) cancel(ctx context.Context, b *booking) {
	body := map[string]any{"user_confirmation_confirmed": true, "reason": "customer_changed_mind", "idempotency_key": s.key("cancel")}
	status, _ := s.call(ctx, "cancel", "POST", "/v1/bookings/"+b.id+"/cancel", s.d.Partner.Token, body)
	if unanswered(status) {
		status, _ = s.call(ctx, "cancel_retry", "POST", "/v1/bookings/"+b.id+"/cancel", s.d.Partner.Token, body)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case status == 200:
		b.cancelled = true
	case unanswered(status):
		b.cancelUnknown = true
	}
}

// reschedule moves a booking to another time of its provider; the booking
// stays in the pool.
func (s *soak) reschedule(ctx context.Context, b *booking) {
	status, res := s.call(ctx, "reschedule_options", "POST", "/v1/bookings/"+b.id+"/booking-options", s.d.Partner.Token,
		map[string]any{"timing": map[string]any{"preferred_time_text": "inom två veckor"}})
	opts := options(res)
	if status != 200 || len(opts) == 0 {
		return
	}
	o := opts[len(opts)-1]
	body := map[string]any{
		"booking_option_id": o["booking_option_id"], "service_location": serviceLocation(b.postcode),
		"user_confirmation_confirmed": true, "booking_terms_accepted": true, "booking_terms_version": termsVersion(o),
		"booking_terms_accepted_at": time.Now().Format(time.RFC3339), "idempotency_key": s.key("reschedule"),
	}
	status, _ = s.call(ctx, "reschedule", "POST", "/v1/bookings/"+b.id+"/reschedule", s.d.Partner.Token, body)
	if unanswered(status) {
		s.call(ctx, "reschedule_retry", "POST", "/v1/bookings/"+b.id+"/reschedule", s.d.Partner.Token, body)
	}
}

func (s *soak) request(ctx context.Context, rng *rand.Rand) {
	body := map[string]any{
		"vertical_id": "vvs", "job_type_id": "install_faucet", "description": "Kranen droppar, vill ha den bytt.",
		"user_consent_confirmed": true,
		"customer":               map[string]any{"name": "Soak Förfrågan", "phone": "+46707654321", "email": "soak.fraga@example.se"},
		"location":               map[string]any{"address": "Ringvägen 100", "postcode": postcodes[rng.IntN(len(postcodes))]},
		"timing":                 map[string]any{"preferred_time_text": "nästa vecka"},
	}
	s.call(ctx, "request", "POST", "/v1/requests", s.d.Partner.Token, body, "Idempotency-Key", s.key("request"))
}

// statusTransport records the status of every MCP HTTP request.
type statusTransport struct {
	s     *soak
	token string
}

func (t statusTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	resp, err := t.s.client.Transport.RoundTrip(r)
	if err != nil {
		if r.Context().Err() == nil {
			t.s.record("mcp", 0)
		}
		return nil, err
	}
	t.s.record("mcp", resp.StatusCode)
	return resp, nil
}

// mcpSession opens an MCP session through nginx and calls the search tool
// and, when the soak has a booking, the status tool.
func (s *soak) mcpSession(ctx context.Context, rng *rand.Rand) {
	client := sdk.NewClient(&sdk.Implementation{Name: "bokat-soak", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: s.d.BaseURL + "/mcp",
		HTTPClient: &http.Client{Timeout: 60 * time.Second, Transport: statusTransport{s: s, token: s.d.Partner.Token}}},
		&sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return
	}
	defer cs.Close()
	args := searchBody(rng)
	args["spec_version"] = "public_bookings_api_v1"
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "search_booking_options", Arguments: args})
	if err == nil && res.IsError {
		s.note("MCP search answered a tool error")
	}
	if b := s.take(rng); b != nil {
		_, _ = cs.CallTool(ctx, &sdk.CallToolParams{Name: "booking_status", Arguments: map[string]any{"booking_id": b.id}})
		s.give(b)
	}
}

// providerCalls uses the provider API: the provider's bookings, its hours
// read and written back unchanged, a block outside its hours added and
// removed.
func (s *soak) providerCalls(ctx context.Context, rng *rand.Rand) {
	tok := s.d.Provider.Token
	switch rng.IntN(5) {
	case 0:
		s.call(ctx, "provider_bookings", "GET", "/v1/provider/bookings", tok, nil)
	case 3:
		s.call(ctx, "provider_calendars", "GET", "/v1/provider/calendars", tok, nil)
	case 4:
		// The provider's Bokat calendar feed, as a calendar app polls it.
		if s.d.ProviderFeed != "" {
			s.getFeed(ctx)
		}
	case 1:
		status, hours := s.call(ctx, "provider_hours_get", "GET", "/v1/provider/hours", tok, nil)
		if status != 200 {
			return
		}
		body := map[string]any{}
		for _, k := range []string{"weekly", "min_notice_minutes", "horizon_days"} {
			if v, ok := hours[k]; ok {
				body[k] = v
			}
		}
		if st, _ := s.call(ctx, "provider_hours_put", "PUT", "/v1/provider/hours", tok, body, "Idempotency-Key", s.key("hours")); st >= 400 && st < 500 {
			s.note("provider hours put answered %d to %v", st, body)
		}
	case 2:
		from := time.Now().AddDate(0, 0, 1+rng.IntN(10)).Format(time.DateOnly)
		status, res := s.call(ctx, "provider_block_add", "POST", "/v1/provider/blocks", tok,
			map[string]any{"kind": "hours", "from": from, "start": "06:00", "end": "07:00", "weeks": 1, "note": "soak"},
			"Idempotency-Key", s.key("block"))
		if status != 200 && status != 201 {
			if status >= 400 && status < 500 {
				s.note("provider block add answered %d: %v", status, res)
			}
			return
		}
		id := blockID(res)
		if id == "" {
			s.note("provider block add: no block id in %v", res)
			return
		}
		s.call(ctx, "provider_block_remove", "POST", "/v1/provider/blocks/"+id+"/remove", tok, map[string]any{},
			"Idempotency-Key", s.key("unblock"))
	}
}

// getFeed fetches the provider's Bokat calendar feed through nginx.
func (s *soak) getFeed(ctx context.Context) {
	req, err := http.NewRequestWithContext(ctx, "GET", s.d.ProviderFeed, nil)
	if err != nil {
		s.note("feed address: %v", err)
		return
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.record("calendar_export", 0)
		return
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	s.record("calendar_export", resp.StatusCode)
	if resp.StatusCode == 200 && !bytes.HasPrefix(raw, []byte("BEGIN:VCALENDAR")) {
		s.note("the provider feed is not iCalendar")
	}
}

func blockID(res map[string]any) string {
	b, _ := res["block"].(map[string]any)
	id, _ := b["block_id"].(string)
	return id
}

// worker runs a mixed load until ctx is done.
func (s *soak) worker(ctx context.Context, w int, stop *atomic.Bool) {
	rng := rand.New(rand.NewPCG(s.c.seed, uint64(w)))
	for ctx.Err() == nil && !stop.Load() {
		n := rng.IntN(100)
		// Keep the number of live bookings bounded, so the demo supply's
		// slots do not run out over a long soak: cancel more when many.
		cancelShare := 8
		if s.poolSize() > 40 {
			cancelShare = 25
		}
		switch {
		case n < 40:
			s.searchAndMaybeConfirm(ctx, rng, 0.35)
		case n < 40+cancelShare:
			if b := s.take(rng); b != nil {
				s.cancel(ctx, b)
			}
		case n < 56:
			if b := s.take(rng); b != nil {
				s.status(ctx, b)
				s.give(b)
			}
		case n < 66:
			if b := s.take(rng); b != nil {
				s.reschedule(ctx, b)
				s.give(b)
			}
		case n < 72:
			s.request(ctx, rng)
		case n < 84:
			s.mcpSession(ctx, rng)
		default:
			s.providerCalls(ctx, rng)
		}
	}
}

// registerEndpoints registers the steady and the flaky receiver.
func (s *soak) registerEndpoints(ctx context.Context) error {
	for _, r := range []*receiver{s.steady, s.flaky} {
		status, res := s.call(ctx, "webhook_register", "POST", "/v1/webhook-endpoints", s.d.Partner.Token, map[string]any{
			"url":         r.url,
			"event_types": []string{"booking.confirmed", "booking.cancelled", "booking.rescheduled", "booking.provider_action_required"},
		})
		if status != 201 {
			return fmt.Errorf("registering the %s receiver: %d %v", r.name, status, res)
		}
		ep, _ := res["endpoint"].(map[string]any)
		r.endpointID, _ = ep["id"].(string)
		secret, _ := res["signing_secret"].(string)
		if err := r.setSecret(secret); err != nil {
			return err
		}
	}
	return nil
}

// restart signals an instance and waits until a new process answers.
func (s *soak) restart(ctx context.Context, name string, sig syscall.Signal) {
	var in *instance
	for i := range s.d.Instances {
		if s.d.Instances[i].Name == name {
			in = &s.d.Instances[i]
		}
	}
	if in == nil {
		s.note("no instance %q to restart", name)
		return
	}
	pid, err := readPID(in.PIDFile)
	if err != nil {
		s.note("restart %s: %v", name, err)
		return
	}
	w := window{Instance: name, Signal: sig.String(), From: time.Now()}
	s.logf("sending %s to instance %s (pid %d)", sig, name, pid)
	if err := syscall.Kill(pid, sig); err != nil {
		s.note("restart %s: %v", name, err)
		return
	}
	for ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
		np, err := readPID(in.PIDFile)
		if err != nil || np == pid {
			continue
		}
		if resp, err := http.Get("http://" + in.Addr + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
	}
	w.Ready = time.Now()
	s.logf("instance %s answers again after %s", name, w.Ready.Sub(w.From).Round(time.Millisecond))
	s.mu.Lock()
	s.windows = append(s.windows, w)
	s.mu.Unlock()
}

func readPID(path string) (int, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(raw)))
}

// snapshot is one instance's memory and goroutines at a moment.
type snapshot struct {
	At       string `json:"at"`
	Instance string `json:"instance"`
	PID      int    `json:"pid"`
	RSSKiB   int64  `json:"rss_kib"`
	// AnonKiB is the RSS less the pages of files (the binary, shared by
	// both instances): the process's own memory. PeakKiB is the most RSS
	// the process had so far (VmHWM), which a sample between collections
	// misses.
	AnonKiB    int64 `json:"rss_anon_kib"`
	PeakKiB    int64 `json:"rss_peak_kib"`
	Goroutines int   `json:"goroutines"`
	// HeapInuseKiB is the Go heap's spans in use (go_memstats_heap_inuse_bytes):
	// what of the RSS the program's live and not yet collected data holds.
	HeapInuseKiB int64 `json:"heap_inuse_kib"`
	PGConns      int   `json:"pg_connections"`
	// HeapProfile is the file of the instance's heap profile taken then,
	// when it serves /debug/pprof on its metrics address (serve --pprof).
	HeapProfile string `json:"heap_profile,omitempty"`
}

func (s *soak) snapshot(ctx context.Context, at string) {
	pg := s.pgConnections(ctx)
	for _, in := range s.d.Instances {
		pid, status, series := observe(in, []string{"VmRSS", "RssAnon", "VmHWM"}, "go_goroutines", "go_memstats_heap_inuse_bytes")
		sn := snapshot{At: at, Instance: in.Name, PID: pid, RSSKiB: status["VmRSS"], AnonKiB: status["RssAnon"], PeakKiB: status["VmHWM"],
			Goroutines: int(series["go_goroutines"]), HeapInuseKiB: kib(series["go_memstats_heap_inuse_bytes"]), PGConns: pg}
		sn.HeapProfile = s.heapProfile(ctx, in, at, sn.PID)
		s.mu.Lock()
		s.snaps = append(s.snaps, sn)
		s.mu.Unlock()
	}
}

// heapProfile saves the instance's heap profile (after a collection) into
// the state directory's profiles folder and returns its path, or "" when
// the instance serves no profiles.
func (s *soak) heapProfile(ctx context.Context, in instance, at string, pid int) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+in.Metrics+"/debug/pprof/heap?gc=1", nil)
	if err != nil {
		return ""
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ""
	}
	dir := filepath.Join(s.c.state, "profiles")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.note("heap profile of %s: %v", in.Name, err)
		return ""
	}
	path := filepath.Join(dir, fmt.Sprintf("heap-%s-%s-%d.pb.gz", at, in.Name, pid))
	raw, err := io.ReadAll(resp.Body)
	if err == nil {
		err = os.WriteFile(path, raw, 0o644)
	}
	if err != nil {
		s.note("heap profile of %s: %v", in.Name, err)
		return ""
	}
	return path
}

// observe reads an instance's pid, the named kB fields of its
// /proc/PID/status (procStatus) and the named series of its /metrics; a
// figure it could not read is -1 (the pid 0, whose status cannot be read).
func observe(in instance, fields []string, series ...string) (int, map[string]int64, map[string]float64) {
	pid, err := readPID(in.PIDFile)
	if err != nil {
		pid = 0
	}
	status := procStatus(pid, fields...)
	m := scrape(in.Metrics, series...)
	for _, name := range series {
		if _, ok := m[name]; !ok {
			m[name] = -1
		}
	}
	return pid, status, m
}

// kib is a byte count in KiB; an unread figure (-1) stays -1.
func kib(bytes float64) int64 {
	if bytes < 0 {
		return -1
	}
	return int64(bytes) / 1024
}

// procStatus reads the named kB fields of /proc/PID/status; a field it
// could not read is -1.
func procStatus(pid int, fields ...string) map[string]int64 {
	out := map[string]int64{}
	for _, f := range fields {
		out[f] = -1
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return out
	}
	for line := range strings.Lines(string(raw)) {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || !slices.Contains(fields, name) {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64); err == nil {
			out[name] = n
		}
	}
	return out
}

// scrape reads the named series (without labels) from an instance's
// /metrics; a series it could not read is absent from the answer.
func scrape(metricsAddr string, names ...string) map[string]float64 {
	out := map[string]float64{}
	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		return out
	}
	defer resp.Body.Close()
	return parseSeries(resp.Body, names...)
}

// parseSeries reads the named unlabelled series from a Prometheus text
// exposition.
func parseSeries(r io.Reader, names ...string) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || !slices.Contains(names, name) {
			continue
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil {
			out[name] = f
		}
	}
	return out
}

// pgConnections counts the deployment's connections to its database (the
// soak's own left out).
func (s *soak) pgConnections(ctx context.Context) int {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name <> $1`, appName).Scan(&n); err != nil {
		return -1
	}
	s.mu.Lock()
	s.pgMax = max(s.pgMax, n)
	s.mu.Unlock()
	return n
}

// run drives the load, restarts, and checks.
func (s *soak) run(ctx context.Context) (*report, error) {
	if err := s.registerEndpoints(ctx); err != nil {
		return nil, err
	}
	if err := s.subscribe(ctx); err != nil {
		return nil, err
	}
	start := time.Now()
	s.snapshot(ctx, "start")
	s.logf("driving %s through %s with %d workers", s.c.duration, s.d.BaseURL, s.c.workers)
	loadCtx, stopLoad := context.WithTimeout(ctx, s.c.duration)
	defer stopLoad()
	// The workers stop between operations: a request in flight at the end
	// gets its answer (cancelling it would leave its outcome unknown).
	var stopWorkers atomic.Bool
	var wg, workers sync.WaitGroup
	for w := range s.c.workers {
		workers.Add(1)
		go func() { defer workers.Done(); s.worker(ctx, w, &stopWorkers) }()
	}
	go func() { <-loadCtx.Done(); stopWorkers.Store(true) }()
	wg.Add(1)
	go func() { defer wg.Done(); s.sampleLoop(loadCtx, start, s.c.sample) }()
	// The restarts, the middle snapshot and the connection samples.
	wg.Add(1)
	go func() {
		defer wg.Done()
		plan := []struct {
			at time.Duration
			do func()
		}{
			{s.c.duration / 3, func() {
				if s.c.restart != "none" {
					s.restart(loadCtx, s.c.restart, syscall.SIGTERM)
				}
			}},
			{s.c.duration / 2, func() { s.snapshot(loadCtx, "middle") }},
			{2 * s.c.duration / 3, func() {
				if s.c.restart != "none" {
					s.restart(loadCtx, s.c.restart, syscall.SIGKILL)
				}
			}},
		}
		tick := time.NewTicker(2 * time.Second)
		defer tick.Stop()
		for loadCtx.Err() == nil {
			select {
			case <-loadCtx.Done():
			case <-tick.C:
				s.pgConnections(loadCtx)
				for len(plan) > 0 && time.Since(start) >= plan[0].at {
					plan[0].do()
					plan = plan[1:]
				}
			}
		}
	}()
	wg.Wait()
	workers.Wait()
	s.snapshot(ctx, "end")
	s.logf("load done; waiting up to %s for the steady receiver to get every event", s.c.drain)
	return s.check(ctx, start)
}
