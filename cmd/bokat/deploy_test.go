package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestEnvironmentFileNamesEverySetting: deploy/bokat.env (with the
// per-instance files) names every environment variable serve reads, as
// serve -h lists them.
func TestEnvironmentFileNamesEverySetting(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	_ = run(context.Background(), []string{"serve", "-h"}, getenvFrom(nil), &out, &out)
	names := regexp.MustCompile(`\[\$(BOKAT_[A-Z0-9_]+)\]`).FindAllStringSubmatch(out.String(), -1)
	if len(names) < 30 {
		t.Fatalf("serve -h lists %d settings:\n%s", len(names), out.String())
	}
	var files []byte
	for _, f := range []string{"bokat.env", "instance-a.env", "instance-b.env"} {
		raw, err := os.ReadFile(filepath.Join("..", "..", "deploy", f))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, raw...)
	}
	for _, n := range names {
		if !regexp.MustCompile(`(?m)^#?` + n[1] + `=`).Match(files) {
			t.Errorf("deploy/bokat.env does not document %s", n[1])
		}
	}
}
