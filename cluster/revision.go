package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/openrath/rath"
)

// buildOnce is this program's build digest: the first 12 hex digits of the
// SHA-256 of its executable.
var buildOnce = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return "unknown"
	}
	f, err := os.Open(exe)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unknown"
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
})

// revisionOf is a workflow's revision in this build: name@version#build.
func revisionOf(w rath.Workflow) string {
	v := w.Version
	if v == "" {
		v = "0"
	}
	return w.Name + "@" + v + "#" + buildOnce()
}

// revisionName is the workflow name of a revision.
func revisionName(rev string) string {
	name, _, _ := strings.Cut(rev, "@")
	return name
}
