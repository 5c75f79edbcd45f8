package flow

import (
	"context"
	"maps"

	"github.com/openrath/rath/runctx"
)

type outputLabelsKey struct{}

// WithOutputLabels has Run label the output it commits with labels too, in
// the same write as its run label (a runtime that names the workflow a run
// belongs to, say, needs no second write for it).
func WithOutputLabels(ctx context.Context, labels map[string]string) context.Context {
	return context.WithValue(ctx, outputLabelsKey{}, maps.Clone(labels))
}

// outputLabels are the labels Run gives the output of the run whose input
// is in: its run label and ctx's.
func outputLabels(ctx context.Context, in string) map[string]string {
	out := map[string]string{runctx.Label: in}
	if extra, ok := ctx.Value(outputLabelsKey{}).(map[string]string); ok {
		for k, v := range extra {
			if k != runctx.Label {
				out[k] = v
			}
		}
	}
	return out
}
