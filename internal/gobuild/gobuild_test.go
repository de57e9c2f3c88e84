package gobuild

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"testing"
)

// TestCachedIsTheProgramAndStays: the path is an executable of the
// command that runs and outlives the go command that printed it, and a
// second call finds the same executable.
func TestCachedIsTheProgramAndStays(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a command of the module")
	}
	ctx := context.Background()
	path, err := Cached(ctx, "bokat/cmd/bokat")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(path, "version").CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("bokat")) {
		t.Fatalf("%s version: %v\n%s", path, err, out)
	}
	again, err := Cached(ctx, "bokat/cmd/bokat")
	if err != nil || again != path {
		t.Errorf("second call: %q, %v; want %q", again, err, path)
	}
	if _, err := os.Stat(path); err != nil {
		t.Error(err)
	}
}

// TestCachedReportsABuildFailure: a package that is no command is an
// error, not a path.
func TestCachedReportsABuildFailure(t *testing.T) {
	if path, err := Cached(context.Background(), "bokat/internal/nosuchpackage"); err == nil {
		t.Fatalf("got %q, want an error", path)
	}
}
