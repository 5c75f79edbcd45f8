package cluster

import (
	"math/rand/v2"
	"time"

	"github.com/riverqueue/river"
)

// A slice ends with an error only when it could not go on for now: the
// store was away, or whether the worker still held the run could not be
// told. The run waits, recorded running, until its job is tried again, so
// that wait stays short whatever came before: River's default (the count
// of the job's errors to the fourth power, in seconds) grows over a run's
// life to minutes — four transient errors over a long run put its next
// slice 256 s away, a run that looks stranded.

// maxRetryWait caps the wait before a run job is tried again.
const maxRetryWait = 5 * time.Second

// NextRetry implements river.Worker: retryWait of the job's errors.
func (rw *runWorker) NextRetry(job *river.Job[runArgs]) time.Time {
	return time.Now().Add(retryWait(len(job.Errors)))
}

// retryWait is the wait after a run job's n-th error (1, 2, ...): 250ms,
// doubling, capped at maxRetryWait, with a tenth of jitter either way
// (workers that lost the store together do not come back at once).
func retryWait(n int) time.Duration {
	d := 250 * time.Millisecond
	for i := 1; i < n && d < maxRetryWait; i++ {
		d *= 2
	}
	d = min(d, maxRetryWait)
	return d + time.Duration(rand.Int64N(int64(d)/5)) - d/10
}
