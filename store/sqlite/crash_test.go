package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/openrath/rath/store/storetest"
)

func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: 30 SIGKILLed child processes; skipped in -short mode")
	}
	storetest.Crash(t, "sqlite://"+filepath.Join(t.TempDir(), "crash.db"), 30)
}

func TestCrashChild(t *testing.T) { storetest.CrashChild(t) }
