// Package gobuild finds the executable of a command of this module as the
// go command caches it, so that the tools and tests that run the real
// program (bokat-load's reimport mode, bokat-soak's deployment test) link
// it once per change of its code, not once per run.
package gobuild

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// Cached returns the path of pkg's executable (an import path or a
// directory, as go run takes it) in the go command's build cache. go run
// links a program once and keeps the executable in its cache (Go 1.24);
// with -exec echo it prints that executable's path instead of running it.
// On a cache miss the path it prints is the temporary copy it ran, removed
// when it exits, so Cached asks again and gets the cached one. The
// executable is shared with other processes: callers must not change or
// remove it. Cached returns an error when the program does not build or
// the cache keeps no executables (GOCACHE=off).
func Cached(ctx context.Context, pkg string) (string, error) {
	for range 2 {
		var stdout, stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, "go", "run", "-exec", "echo", pkg)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("go run %s: %w\n%s", pkg, err, stderr.Bytes())
		}
		path := string(bytes.TrimSpace(stdout.Bytes()))
		if path == "" {
			return "", fmt.Errorf("go run -exec echo %s printed no path\n%s", pkg, stderr.Bytes())
		}
		if _, err := os.Stat(path); err == nil {
			return path, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("go run keeps no executable of %s in its cache (is GOCACHE off?)", pkg)
}
