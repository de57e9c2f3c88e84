// Package logtest gives tests a buffer that the code under test may write
// its logs to from several goroutines while the test reads them.
package logtest

import (
	"bytes"
	"sync"
)

// Buffer is a goroutine-safe bytes.Buffer for writing and reading whole.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
