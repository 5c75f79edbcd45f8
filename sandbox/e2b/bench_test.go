package e2b_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/e2b/e2bfake"
	"github.com/openrath/rath/session"
)

// benchFile is the size of the file the transfer benchmarks move.
const benchFile = 10 << 20

// BenchmarkRemoteExec measures what the client adds to the provider's own
// work, against the in-process fake:
//
//   - exec: Exec of `true`. overhead-ms/op is the wall time of an Exec less
//     the time the fake spent handling its requests (every route: the
//     guard's process stream, and whatever else one Exec asks for), which
//     is fake-ms/op — the fake starts a real local shell for the guard.
//     What remains is the client, the guard's framing and the loopback TLS
//     connection (target: under 1 ms).
//   - upload, download: WriteFile and ReadFile of a 10 MiB file (MB/s),
//     including the guard's rename into place and its checked read, with
//     the same split of each op's time. The fake's time includes reading
//     an upload's body as it arrives and writing a download's stream, so
//     there the split says little more than which side is slower.
//
// Benchmarks report; they assert no timing.
func BenchmarkRemoteExec(b *testing.B) {
	for _, c := range []struct {
		name string
		fo   e2bfake.Options
	}{
		{"backend=e2b", e2bfake.Options{}},
		{"backend=cube", e2bfake.Options{Cube: true, Domain: "cube.test"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			srv, be := startFake(b, c.fo)
			sb := open(b, be, session.Spec{})
			b.Cleanup(func() { _ = sb.Close() })
			b.Run("exec", func(b *testing.B) { benchExec(b, srv, sb) })
			b.Run("upload", func(b *testing.B) { benchUpload(b, srv, sb) })
			b.Run("download", func(b *testing.B) { benchDownload(b, srv, sb) })
		})
	}
}

func benchExec(b *testing.B, srv *e2bfake.Server, sb sandbox.Sandbox) {
	ctx := context.Background()
	cmd := sandbox.Command{Args: []string{"true"}}
	if _, err := sb.Exec(ctx, cmd); err != nil { // warm the connection
		b.Fatal(err)
	}
	before := handled(b, srv)
	for b.Loop() {
		r, err := sb.Exec(ctx, cmd)
		if err != nil || r.ExitCode != 0 {
			b.Fatalf("exec true: exit %d, %v", r.ExitCode, err)
		}
	}
	report(b, srv, before)
}

// report splits the loop's time per op into the fake's (fake-ms/op) and
// the rest (overhead-ms/op); before is handled's answer before the loop.
func report(b *testing.B, srv *e2bfake.Server, before time.Duration) {
	wall := b.Elapsed()
	fake := handled(b, srv) - before
	n := float64(b.N)
	b.ReportMetric(ms(fake)/n, "fake-ms/op")
	b.ReportMetric(ms(wall-fake)/n, "overhead-ms/op")
}

// handled is the fake's total handling time once every request it was
// sent has been handled: a stream's handler may return a moment after the
// client has read its end.
func handled(b *testing.B, srv *e2bfake.Server) time.Duration {
	deadline := time.Now().Add(10 * time.Second)
	for {
		spent, n := srv.Handling("/")
		if n == srv.Requests("/") {
			return spent
		}
		if time.Now().After(deadline) {
			b.Logf("the fake still handles %d requests; its time is counted without them", srv.Requests("/")-n)
			return spent
		}
		time.Sleep(100 * time.Microsecond)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func benchData(b *testing.B) []byte {
	data := make([]byte, benchFile)
	if _, err := rand.Read(data); err != nil {
		b.Fatal(err)
	}
	return data
}

func benchUpload(b *testing.B, srv *e2bfake.Server, sb sandbox.Sandbox) {
	ctx := context.Background()
	data := benchData(b)
	b.SetBytes(benchFile)
	before := handled(b, srv)
	for b.Loop() {
		if err := sb.WriteFile(ctx, "bench-up.bin", data); err != nil {
			b.Fatal(err)
		}
	}
	report(b, srv, before)
}

func benchDownload(b *testing.B, srv *e2bfake.Server, sb sandbox.Sandbox) {
	ctx := context.Background()
	data := benchData(b)
	if err := sb.WriteFile(ctx, "bench-down.bin", data); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(benchFile)
	before := handled(b, srv)
	var got []byte
	for b.Loop() {
		var err error
		if got, err = sb.ReadFile(ctx, "bench-down.bin"); err != nil {
			b.Fatal(err)
		}
	}
	report(b, srv, before)
	if !bytes.Equal(got, data) {
		b.Fatalf("read back %d bytes that differ from the %d written", len(got), len(data))
	}
}
