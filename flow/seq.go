package flow

import (
	"context"
	"fmt"

	"github.com/openrath/rath/session"
)

// Seq runs its children in order, each on the previous one's output.
type Seq struct{ Children []Module }

// Sequential returns the modules run in order.
func Sequential(ms ...Module) *Seq { return &Seq{Children: ms} }

// Forward implements Module.
func (q *Seq) Forward(ctx context.Context, s *session.Session) (*session.Session, error) {
	for i, m := range q.Children {
		out, err := Call(ctx, segment(i, m), m, s)
		if err != nil {
			if out == nil {
				out = s
			}
			return out, err
		}
		s = out
	}
	return s, nil
}

// segment is child i's path segment: its name if Named, else its index
// (an agent names its own node below it).
func segment(i int, m Module) string {
	if n, ok := m.(named); ok {
		return n.name
	}
	return fmt.Sprint(i)
}
