package runctx

import "context"

type (
	noStoreKey  struct{}
	reviewKey   struct{}
	verdictsKey struct{}
)

// WithoutStore returns ctx in which agents commit nothing to their stores:
// a pure replay, which must leave the store as it found it.
func WithoutStore(ctx context.Context) context.Context {
	return context.WithValue(ctx, noStoreKey{}, true)
}

// Storeless reports whether ctx is WithoutStore.
func Storeless(ctx context.Context) bool { return flag(ctx, noStoreKey{}) }

// WithReview returns ctx in which a resumed run stops with an
// *agent.Unsettled error at a non-idempotent call its record shows made
// but unfinished, instead of giving the model an interrupted result.
func WithReview(ctx context.Context) context.Context {
	return context.WithValue(ctx, reviewKey{}, true)
}

// ReviewRequired reports whether ctx is WithReview.
func ReviewRequired(ctx context.Context) bool { return flag(ctx, reviewKey{}) }

// WithRecordedVerdicts returns ctx in which a resumed run that reaches tool
// calls waiting for approval takes the verdicts its record holds after the
// requests (recorded by agent.Decide) and goes on, instead of pausing
// again: how the cluster continues a run after `rath approve`. (Without it
// a run pauses there and agent.Resume gives the verdict, as it did the
// first time.)
func WithRecordedVerdicts(ctx context.Context) context.Context {
	return context.WithValue(ctx, verdictsKey{}, true)
}

// RecordedVerdicts reports whether ctx is WithRecordedVerdicts.
func RecordedVerdicts(ctx context.Context) bool { return flag(ctx, verdictsKey{}) }

func flag(ctx context.Context, k any) bool {
	on, _ := ctx.Value(k).(bool)
	return on
}
