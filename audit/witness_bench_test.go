package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/session"
)

// BenchmarkWitnessLine: one witness line appended — lock, read the last
// line, write, fsync — what a Log pays each time a line is due; beside
// it the same bytes written and synced to a plain file (fsync).
func BenchmarkWitnessLine(b *testing.B) {
	l := witnessLine{Time: time.Now(), Lane: session.ID("ses_01M993ZNSCCGAFYWDS7Y23TN76"), Head: session.ChunkID("sha256:" + strings.Repeat("ab", 32))}
	b.Run("line", func(b *testing.B) {
		wf, err := openWitnessFile(filepath.Join(b.TempDir(), "audit.witness"))
		if err != nil {
			b.Fatal(err)
		}
		defer wf.close()
		b.ReportAllocs()
		for b.Loop() {
			l.Len++
			if err := wf.append([]witnessLine{l}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fsync", func(b *testing.B) {
		f, err := os.OpenFile(filepath.Join(b.TempDir(), "plain"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		data, _, err := l.encode("")
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := f.Write(data); err != nil {
				b.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
