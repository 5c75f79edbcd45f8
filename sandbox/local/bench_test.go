package local

import (
	"context"
	"fmt"
	"testing"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

func benchSandbox(b *testing.B) sandbox.Sandbox {
	b.Helper()
	b.Setenv("RATH_HOME", b.TempDir())
	sb, err := Backend{}.Open(context.Background(), session.Spec{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sb.Close() })
	return sb
}

// fill writes n small source files across 10 directories.
func fill(b *testing.B, sb sandbox.Sandbox, n int) {
	b.Helper()
	for i := range n {
		p := fmt.Sprintf("pkg%d/file%d.go", i%10, i)
		if err := sb.WriteFile(context.Background(), p, fmt.Appendf(nil, "package pkg\n\n// File %d.\nfunc F%d() int { return %d }\n", i, i, i)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExec is the round trip of running `true`.
func BenchmarkExec(b *testing.B) {
	b.Run("backend=local", func(b *testing.B) {
		sb := benchSandbox(b)
		for b.Loop() {
			if r, err := sb.Exec(context.Background(), sandbox.Command{Args: []string{"true"}}); err != nil || r.ExitCode != 0 {
				b.Fatal(r, err)
			}
		}
	})
}

// BenchmarkClone copies a workspace of 1,000 files.
func BenchmarkClone(b *testing.B) {
	b.Run("files=1000", func(b *testing.B) {
		sb := benchSandbox(b)
		fill(b, sb, 1000)
		for b.Loop() {
			cl, err := sb.Clone(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			cl.Close()
		}
	})
}

// BenchmarkEffects is Effects over 10,000 files of which 10 changed since
// the mark (the mark itself is taken outside the timing).
func BenchmarkEffects(b *testing.B) {
	b.Run("files=10000", func(b *testing.B) {
		sb := benchSandbox(b)
		fill(b, sb, 10000)
		ctx := context.Background()
		round := 0
		for b.Loop() {
			round++
			b.StopTimer()
			m, err := sb.Mark(ctx)
			if err != nil {
				b.Fatal(err)
			}
			for i := range 10 {
				sb.WriteFile(ctx, fmt.Sprintf("pkg%d/file%d.go", i, i), fmt.Appendf(nil, "package pkg // round %d\n", round))
			}
			b.StartTimer()
			eff, err := sb.Effects(ctx, m)
			if err != nil || len(eff.Modified) != 10 {
				b.Fatalf("%d modified, %v", len(eff.Modified), err)
			}
		}
	})
}
