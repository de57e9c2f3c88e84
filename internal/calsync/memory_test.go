//go:build !race

// The allocation bound is a property of the program as built for use: the
// race detector's instrumentation makes the same parse allocate tens of
// times more, so this file is left out of -race builds (the suite without
// -race, the README's test command, runs it).

package calsync_test

import (
	"runtime"
	"strings"
	"testing"

	"bokat/internal/calsync"
)

// TestHostileFeedMemoryBounded: parsing a feed at the default size cap
// allocates at most 32 times its size in all, whatever it holds (one huge
// property, or as many small events as fit). Not parallel: the count is
// the process's.
func TestHostileFeedMemoryBounded(t *testing.T) {
	event := "BEGIN:VEVENT\r\nUID:m@x\r\nDTSTART:20261021T100000Z\r\nDTEND:20261021T110000Z\r\nSUMMARY:x\r\nEND:VEVENT\r\n"
	bodies := map[string]string{
		"small events": "BEGIN:VCALENDAR\r\n" + strings.Repeat(event, calsync.DefaultMaxFeedBytes/len(event)-1) + "END:VCALENDAR\r\n",
		"one huge property": "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:a@x\r\nDTSTART:20261021T100000Z\r\nDTEND:20261021T110000Z\r\nDESCRIPTION:" +
			strings.Repeat("x", calsync.DefaultMaxFeedBytes-200) + "\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
	}
	for name, body := range bodies {
		if len(body) > calsync.DefaultMaxFeedBytes {
			t.Fatalf("%s: %d bytes, over the cap", name, len(body))
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, _ = calsync.Parse([]byte(body), calsync.ParseOptions{From: windowFrom, To: windowTo})
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32*uint64(len(body)) {
			t.Errorf("%s: parsing %d KiB allocated %d MiB, more than 32 times its size", name, len(body)>>10, alloc>>20)
		}
	}
}
