package httpapi

import (
	"os"
	"testing"

	"bokat/internal/web/webtest"
)

// TestMain runs the tests through webtest.Main: the browser tests share one
// Chromium, which it stops after them.
func TestMain(m *testing.M) { os.Exit(webtest.Main(m)) }
