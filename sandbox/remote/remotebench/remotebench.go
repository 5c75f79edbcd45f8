// Package remotebench is the benchmark body every remote sandbox backend
// runs against its in-process fake: what the client adds to the
// provider's own work per Exec, and the throughput of moving a file.
package remotebench

import (
	"bytes"
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/openrath/rath/sandbox"
)

// FileSize is the size of the file the transfer benchmarks move.
const FileSize = 10 << 20

// Fake is what the benchmark needs of a fake provider: how many requests
// it has seen, and the time it spent handling them, whose path starts
// with prefix.
type Fake interface {
	Requests(prefix string) int
	Handling(prefix string) (spent time.Duration, handled int)
}

// Run runs three sub-benchmarks on sb, a sandbox on fake:
//
//   - exec: Exec of `true`. fake-ms/op is the time the fake spent on the
//     requests one Exec makes (every route: the guard runs in a real local
//     shell); overhead-ms/op is the rest of the wall time — the client,
//     the guard's framing and the loopback connection.
//   - upload, download: WriteFile and ReadFile of a FileSize file (MB/s),
//     with the same split; as the fake reads and writes the bytes as they
//     stream, there it says little more than which side is slower.
//
// It reports and asserts no timing; it fails on a wrong result only.
func Run(b *testing.B, fake Fake, sb sandbox.Sandbox) {
	b.Run("exec", func(b *testing.B) { benchExec(b, fake, sb) })
	b.Run("upload", func(b *testing.B) { benchUpload(b, fake, sb) })
	b.Run("download", func(b *testing.B) { benchDownload(b, fake, sb) })
}

func benchExec(b *testing.B, fake Fake, sb sandbox.Sandbox) {
	ctx := context.Background()
	cmd := sandbox.Command{Args: []string{"true"}}
	if _, err := sb.Exec(ctx, cmd); err != nil { // warm the connection
		b.Fatal(err)
	}
	before := handled(b, fake)
	for b.Loop() {
		r, err := sb.Exec(ctx, cmd)
		if err != nil || r.ExitCode != 0 {
			b.Fatalf("exec true: exit %d, %v", r.ExitCode, err)
		}
	}
	report(b, fake, before)
}

func benchUpload(b *testing.B, fake Fake, sb sandbox.Sandbox) {
	ctx := context.Background()
	data := randomFile(b)
	b.SetBytes(FileSize)
	before := handled(b, fake)
	for b.Loop() {
		if err := sb.WriteFile(ctx, "bench-up.bin", data); err != nil {
			b.Fatal(err)
		}
	}
	report(b, fake, before)
}

func benchDownload(b *testing.B, fake Fake, sb sandbox.Sandbox) {
	ctx := context.Background()
	data := randomFile(b)
	if err := sb.WriteFile(ctx, "bench-down.bin", data); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(FileSize)
	before := handled(b, fake)
	var got []byte
	for b.Loop() {
		var err error
		if got, err = sb.ReadFile(ctx, "bench-down.bin"); err != nil {
			b.Fatal(err)
		}
	}
	report(b, fake, before)
	if !bytes.Equal(got, data) {
		b.Fatalf("read back %d bytes that differ from the %d written", len(got), len(data))
	}
}

// report splits the loop's time per op into the fake's (fake-ms/op) and
// the rest (overhead-ms/op); before is handled's answer before the loop.
func report(b *testing.B, fake Fake, before time.Duration) {
	wall := b.Elapsed()
	spent := handled(b, fake) - before
	n := float64(b.N)
	b.ReportMetric(ms(spent)/n, "fake-ms/op")
	b.ReportMetric(ms(wall-spent)/n, "overhead-ms/op")
}

// handled is the fake's total handling time once every request it was
// sent has been handled: a stream's handler may return a moment after the
// client has read its end.
func handled(b *testing.B, fake Fake) time.Duration {
	deadline := time.Now().Add(10 * time.Second)
	for {
		spent, n := fake.Handling("/")
		if n == fake.Requests("/") {
			return spent
		}
		if time.Now().After(deadline) {
			b.Logf("the fake still handles %d requests; its time is counted without them", fake.Requests("/")-n)
			return spent
		}
		time.Sleep(100 * time.Microsecond)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func randomFile(b *testing.B) []byte {
	data := make([]byte, FileSize)
	if _, err := rand.Read(data); err != nil {
		b.Fatal(err)
	}
	return data
}
