package remote_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/sandboxtest"
	"github.com/openrath/rath/session"
)

// The remote layer passes the conformance suite over a transport that
// carries bytes, and over one that carries text lines only (execd's).
func TestConformanceBinaryTransport(t *testing.T) {
	sandboxtest.Run(t, func(t *testing.T, spec session.Spec) sandbox.Sandbox { return openHost(t, false, spec) })
}

func TestConformanceTextTransport(t *testing.T) {
	sandboxtest.Run(t, func(t *testing.T, spec session.Spec) sandbox.Sandbox { return openHost(t, true, spec) })
}

// A large file is read through staging and a download, a small one through
// the guard's output; both come back whole, and nothing stays staged.
func TestReadFileLargeAndSmall(t *testing.T) {
	for _, text := range []bool{false, true} {
		sb := openHost(t, text, session.Spec{})
		ctx := context.Background()
		for _, n := range []int{0, 10, 1 << 20, 1<<20 + 1, 3 << 20} {
			data := make([]byte, n)
			for i := range data {
				data[i] = byte(i * 7)
			}
			if err := sb.WriteFile(ctx, "f.bin", data); err != nil {
				t.Fatal(err)
			}
			got, err := sb.ReadFile(ctx, "f.bin")
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("text %v, %d bytes: read %d bytes, %v", text, n, len(got), err)
			}
		}
		r, err := sb.Exec(ctx, sandbox.Command{Shell: "ls -A ~/.rath-stage | wc -l"})
		if err != nil || strings.TrimSpace(string(r.Stdout)) != "0" {
			t.Fatalf("text %v: staged files left: %q, %v", text, r.Stdout, err)
		}
	}
}
