package booking

import (
	"runtime/debug"
	"testing"
)

// A reload lowers the collector's heap growth to reloadGCPercent for its
// duration, and leaves a lower one, or none, as it is.
func TestAReloadTightensTheCollectorAndRestoresIt(t *testing.T) {
	// Not parallel: the heap growth is the process's.
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, tt := range []struct{ before, during int }{{100, reloadGCPercent}, {400, reloadGCPercent}, {30, 30}, {-1, -1}} {
		debug.SetGCPercent(tt.before)
		restore := tightenGC()
		if got := debug.SetGCPercent(tt.during); got != tt.during {
			t.Errorf("GOGC %d: %d during a reload, want %d", tt.before, got, tt.during)
		}
		restore()
		if got := debug.SetGCPercent(tt.before); got != tt.before {
			t.Errorf("GOGC %d: %d after a reload", tt.before, got)
		}
	}
}
