package remote

import (
	"context"
	"time"
)

// renewTimeout bounds one renewal.
const renewTimeout = 30 * time.Second

// renewer pushes a sandbox's end back while a handle on it is open: a
// provider ends a sandbox when its lifetime runs out, so a session that
// holds one longer than that would lose it mid-run. When the handle
// closes (or the process dies), renewals stop and the lifetime runs out
// as the provider counts it.
type renewer struct {
	stop chan struct{}
	done chan struct{}
}

// startRenewer calls renew every interval until stop; a failed renewal is
// tried again at the next tick (an operation on a sandbox that is gone
// fails with its own clear error).
func startRenewer(renew func(ctx context.Context) error, every time.Duration) *renewer {
	r := &renewer{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-r.stop:
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(context.Background(), renewTimeout)
				_ = renew(ctx)
				cancel()
			}
		}
	}()
	return r
}

// end stops the renewals and waits for one under way.
func (r *renewer) end() {
	if r == nil {
		return
	}
	close(r.stop)
	<-r.done
}
