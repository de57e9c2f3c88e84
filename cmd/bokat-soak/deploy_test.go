package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"bokat/internal/clocktest"
	"bokat/internal/gobuild"
	"bokat/internal/sqlstore/sqlstoretest"
)

// bokat is the real program, as the go command builds and caches it:
// linked only when its code changed, shared with the other packages' tests.
func bokat(t *testing.T) string {
	t.Helper()
	bin, err := gobuild.Cached(context.Background(), "bokat/cmd/bokat")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// freePorts returns n loopback ports that are free, each with its port +
// 1000 free too (the instances' metrics addresses).
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
		p := l.Addr().(*net.TCPAddr).Port
		if p+1000 > 65535 {
			continue
		}
		m, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+1000))
		if err != nil {
			continue
		}
		held = append(held, m)
		ports = append(ports, p)
	}
	return ports
}

// TestStartScriptBringsUpTheDeployment runs deploy/soak-up.sh: nginx in
// front of two serve instances on a fresh PostgreSQL database and Redis.
// A search through nginx is answered, /metrics is not proxied, both
// instances serve their metrics apart, an instance killed with SIGKILL
// comes back, and SIGTERM stops everything and drops the database.
func TestStartScriptBringsUpTheDeployment(t *testing.T) {
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		if _, err := os.Stat("/usr/sbin/nginx"); err != nil {
			t.Skip("nginx is not installed (Debian package nginx-light or nginx): the start script needs it, so its smoke test cannot run")
		}
		nginx = "/usr/sbin/nginx"
	}
	pgURL := os.Getenv(sqlstoretest.PostgresURLEnv)
	if pgURL == "" {
		t.Skipf("the deployment runs on PostgreSQL: %s is unset (CI's PostgreSQL pass sets it and runs this test)", sqlstoretest.PostgresURLEnv)
	}
	redisURL := os.Getenv("BOKAT_TEST_REDIS_URL")
	if redisURL == "" {
		t.Skip("the deployment shares rate limits in Redis: BOKAT_TEST_REDIS_URL is unset (CI sets it and runs this test)")
	}
	u, err := url.Parse(pgURL)
	if err != nil {
		t.Fatal(err)
	}
	server := (&url.URL{Scheme: u.Scheme, User: u.User, Host: u.Host}).String()

	state := t.TempDir()
	ports := freePorts(t, 3)
	cmd := exec.Command(filepath.Join(repoRoot(t), "deploy", "soak-up.sh"), state)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.Env = append(os.Environ(), "BOKAT_BIN="+bokat(t), "NGINX="+nginx, "SOAK_PG="+server, "SOAK_REDIS="+redisURL,
		"SOAK_DROP_DB=1", fmt.Sprintf("SOAK_PORT=%d", ports[0]), fmt.Sprintf("SOAK_PORT_A=%d", ports[1]), fmt.Sprintf("SOAK_PORT_B=%d", ports[2]))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			<-done
		}
	})
	patience := clocktest.Patience(t)
	for ready := false; !ready; {
		select {
		case err := <-done:
			stopped = true
			t.Fatalf("soak-up.sh exited before it was ready: %v\n%s", err, logs.String())
		case <-patience.Done():
			t.Fatalf("soak-up.sh not ready before the test's deadline\n%s", logs.String())
		case <-time.After(200 * time.Millisecond):
			_, err := os.Stat(filepath.Join(state, "ready"))
			ready = err == nil
		}
	}

	raw, err := os.ReadFile(filepath.Join(state, "soak.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d deployment
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	if d.BaseURL != fmt.Sprintf("http://127.0.0.1:%d", ports[0]) || d.Partner.Token == "" || d.Provider.Token == "" || len(d.Instances) != 2 {
		t.Fatalf("soak.json: %s", raw)
	}
	if fi, err := os.Stat(filepath.Join(state, "soak.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("soak.json holds tokens: mode %v, %v", fi.Mode().Perm(), err)
	}

	body := `{"vertical_id":"vvs","job_type_id":"install_faucet","description":"Byta köksblandare, ny finns på plats.",` +
		`"location":{"country_code":"SE","postcode":"113 45"},"timing":{"preferred_time_text":"inom två veckor"}}`
	req, _ := http.NewRequestWithContext(patience, "POST", d.BaseURL+"/v1/booking-options", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+d.Partner.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	found, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Contains(found, []byte(`"booking_option_id"`)) {
		t.Errorf("search through nginx: %d %s", resp.StatusCode, found)
	}
	if resp, err := http.Get(d.BaseURL + "/metrics"); err != nil || resp.StatusCode != 404 {
		t.Errorf("/metrics through nginx: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	for _, in := range d.Instances {
		if !strings.HasPrefix(in.Addr, "127.0.0.1:") || !strings.HasPrefix(in.Metrics, "127.0.0.1:") {
			t.Errorf("instance %s listens beyond loopback: %+v", in.Name, in)
		}
		if m := scrape(in.Metrics, "go_goroutines", "go_memstats_heap_inuse_bytes"); m["go_goroutines"] <= 0 || m["go_memstats_heap_inuse_bytes"] <= 0 {
			t.Errorf("instance %s: no go_goroutines or heap in use at %s: %v", in.Name, in.Metrics, m)
		}
		// The soak's instances serve their heap profiles on the metrics
		// address, never through nginx.
		if resp, err := http.Get("http://" + in.Metrics + "/debug/pprof/heap?debug=1"); err != nil || resp.StatusCode != 200 {
			t.Errorf("instance %s: heap profile on its metrics address: %v %v", in.Name, resp, err)
		} else {
			resp.Body.Close()
		}
	}
	if resp, err := http.Get(d.BaseURL + "/debug/pprof/heap"); err != nil || resp.StatusCode != 404 {
		t.Errorf("/debug/pprof/heap through nginx: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// An instance killed with SIGKILL is started again by its loop.
	killed, err := readPID(d.Instances[0].PIDFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(killed, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for back := false; !back; {
		select {
		case <-patience.Done():
			t.Fatalf("instance a did not come back after SIGKILL\n%s", logs.String())
		case <-time.After(200 * time.Millisecond):
		}
		pid, err := readPID(d.Instances[0].PIDFile)
		if err != nil || pid == killed {
			continue
		}
		if resp, err := http.Get("http://" + d.Instances[0].Addr + "/readyz"); err == nil {
			resp.Body.Close()
			back = resp.StatusCode == 200
		}
	}
	var pids []int
	for _, in := range d.Instances {
		pid, err := readPID(in.PIDFile)
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		stopped = true
		if err != nil {
			t.Errorf("soak-up.sh after SIGTERM: %v\n%s", err, logs.String())
		}
	case <-patience.Done():
		t.Fatalf("soak-up.sh did not stop\n%s", logs.String())
	}
	for _, pid := range pids {
		if syscall.Kill(pid, 0) == nil {
			t.Errorf("serve %d still runs after the script stopped", pid)
		}
	}
	if resp, err := http.Get(d.BaseURL + "/readyz"); err == nil {
		resp.Body.Close()
		t.Errorf("nginx still answers after the script stopped")
	}
	dbu, _ := url.Parse(d.Database)
	db, err := sql.Open("pgx", server+"/postgres?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM pg_database WHERE datname = $1`,
		strings.TrimPrefix(dbu.Path, "/")).Scan(&n); err != nil || n != 0 {
		t.Errorf("the soak database is still there (%d, %v)", n, err)
	}
}
