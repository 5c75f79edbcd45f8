package flow

import (
	"context"
	"errors"
	"fmt"

	"github.com/openrath/rath/session"
)

// Looper runs Body again and again, each time on the last output, until
// Until accepts the output (or, with a Validator as Check, until it
// approves), at most Max times.
type Looper struct {
	Body Module
	// Until accepts an output; nil means Check decides.
	Until func(ctx context.Context, s *session.Session) (bool, error)
	// Check, if set, judges each output and records its verdict; a
	// rejection sends the loop round again with the verdict in view.
	Check *Validator
	// Max bounds the iterations (default 10); reaching it without
	// acceptance is ErrRejected.
	Max int
}

// Loop returns a Looper of body until until accepts, at most max times.
func Loop(body Module, until func(ctx context.Context, s *session.Session) (bool, error), max int) *Looper {
	return &Looper{Body: body, Until: until, Max: max}
}

// Forward implements Module.
func (l *Looper) Forward(ctx context.Context, s *session.Session) (*session.Session, error) {
	if l.Body == nil || (l.Until == nil && l.Check == nil) {
		return s, fmt.Errorf("%w: a Loop needs a Body and Until or Check", ErrConfig)
	}
	max := l.Max
	if max <= 0 {
		max = 10
	}
	for i := 1; i <= max; i++ {
		out, err := Call(ctx, fmt.Sprintf("iter-%d", i), l.Body, s)
		if err != nil {
			if out == nil {
				out = s
			}
			return out, err
		}
		s = out
		if l.Check != nil {
			out, err := Call(ctx, fmt.Sprintf("check-%d", i), l.Check, s)
			if out != nil {
				s = out
			}
			switch {
			case err == nil:
				if l.Until == nil {
					return s, nil
				}
			case errors.Is(err, ErrRejected):
				continue
			default:
				return s, err
			}
		}
		if l.Until != nil {
			ok, err := l.Until(ctx, s)
			if err != nil {
				return s, fmt.Errorf("flow: loop condition: %w", err)
			}
			if ok {
				return s, nil
			}
		}
	}
	return s, fmt.Errorf("%w: the loop ran %d times without acceptance", ErrRejected, max)
}
