package policy

import "context"

// Observer is told of every decision an observed Decider makes (err is
// the Decider's own, for a decision it could not make).
type Observer func(ctx context.Context, a Action, d Decision, err error)

// Observed returns d, telling o of each decision before it is returned;
// o runs on the deciding goroutine. The command line observes the
// runtime's policy this way to put every decision in the audit log.
func Observed(d Decider, o Observer) Decider { return observed{d, o} }

type observed struct {
	d Decider
	o Observer
}

func (ob observed) Decide(ctx context.Context, a Action) (Decision, error) {
	dec, err := ob.d.Decide(ctx, a)
	ob.o(ctx, a, dec, err)
	return dec, err
}
