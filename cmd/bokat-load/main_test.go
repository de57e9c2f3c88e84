package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestLoadToolRuns runs the tool for a moment: both servers answer, the
// bodies have the same size, and the report carries every figure. It checks
// no speed target (those are judged on an idle machine).
func TestLoadToolRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two servers and generates load")
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-duration", "150ms", "-rounds", "1", "-workers", "4", "-json"}, &out); err != nil {
		t.Fatal(err)
	}
	var rep report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, out.String())
	}
	if rep.BodyBytes < 10_000 || len(rep.Runs) != 3 || rep.BareMax <= 0 || rep.SearchMax <= 0 || rep.Ratio <= 0 ||
		rep.HalfLoadP99 <= 0 || rep.HalfLoadP99 > 30*time.Second {
		t.Errorf("report = %+v", rep)
	}
	for _, m := range rep.Runs {
		if m.Success != 1 || m.Requests == 0 {
			t.Errorf("run %+v had failures", m)
		}
	}
}

// TestLoadToolScaleModeRuns runs scale mode on a small generated supply:
// both servers answer and the report carries every figure.
func TestLoadToolScaleModeRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two servers, imports a generated supply and generates load")
	}
	var out bytes.Buffer
	err := run(context.Background(), []string{"-large", "60", "-duration", "150ms", "-rounds", "1", "-workers", "2", "-json"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	var rep scaleReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, out.String())
	}
	if rep.Providers != 60 || len(rep.Runs) != 3 || rep.DemoMax <= 0 || rep.LargeMax <= 0 || rep.Ratio <= 0 ||
		rep.HalfLoadP99 <= 0 || rep.ImportSeconds <= 0 || rep.PeakRSSBytes < 1<<20 {
		t.Errorf("report = %+v", rep)
	}
	for i, want := range []string{"demo", "large", "large"} {
		if m := rep.Runs[i]; m.Server != want || m.Success != 1 || m.Requests == 0 {
			t.Errorf("run %d = %+v, want a successful %s run", i, m, want)
		}
	}
	if err := run(context.Background(), []string{"-large", "10", "-rate", "5"}, &out); err == nil {
		t.Error("-large with -rate was accepted")
	}
}
