package flow_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
)

// BenchmarkParallel: fork a session 1,000 ways, run a module appending a
// chunk on each branch, and merge the branches.
func BenchmarkParallel(b *testing.B) {
	b.Run("branches=1000", func(b *testing.B) {
		in := session.FromUser("start")
		for i := range 100 {
			in = in.Append(session.Note(fmt.Sprint("context ", i)))
		}
		branches := make([]flow.Module, 1000)
		for i := range branches {
			branches[i] = flow.Func(func(ctx context.Context, s *session.Session) (*session.Session, error) {
				return runctx.Record(ctx, s, runctx.Invoke(ctx, "work"), session.Note(fmt.Sprint("result ", i)))
			})
		}
		p := flow.Parallel(branches...)
		for b.Loop() {
			out, err := flow.Run(context.Background(), nil, p, in)
			if err != nil || out.Len() != in.Len()+1000 {
				b.Fatal(err, out.Len())
			}
		}
	})
}
