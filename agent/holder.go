package agent

import (
	"sync"

	"github.com/openrath/rath/runctx"
)

// A call to a tool that is not idempotent starts only once the run's
// holder check (runctx.WithHolderCheck) says the process still holds the
// run: a worker paused past its takeover starts no effect when it wakes.
// A refused call stops the step: its calls' results are not recorded (the
// other calls of the step may have run; their tools are idempotent or
// their effects as unknown as any call a dead worker left), and the run
// ends with the check's error.

// heldCheck keeps the first refusal of a run's holder check.
type heldCheck struct {
	mu  sync.Mutex
	err error
}

// checkHolder asks the run's holder check, keeping a refusal.
func (r *run) checkHolder() error {
	if err := r.unheld(); err != nil {
		return err // refused already: the run is lost
	}
	err := runctx.CheckHolder(r.ctx)
	if err != nil {
		r.held.mu.Lock()
		if r.held.err == nil {
			r.held.err = err
		}
		r.held.mu.Unlock()
	}
	return err
}

// unheld is the check's first refusal in this run, if any.
func (r *run) unheld() error {
	r.held.mu.Lock()
	defer r.held.mu.Unlock()
	return r.held.err
}
