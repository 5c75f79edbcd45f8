package cluster

import (
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// A run job is tried again soon after an error, however many it had: the
// wait doubles from 250ms and stays within maxRetryWait (and its jitter),
// where River's default would wait n⁴ seconds.
func TestRunRetryWaitStaysShort(t *testing.T) {
	prev := time.Duration(0)
	for n := 1; n <= 40; n++ {
		d := retryWait(n)
		if d < 225*time.Millisecond || d > maxRetryWait+maxRetryWait/10 {
			t.Fatalf("wait after error %d: %s", n, d)
		}
		if n <= 3 && d < prev*3/2 {
			t.Fatalf("wait after error %d: %s, not about double the last (%s)", n, d, prev)
		}
		prev = d
	}
	rw := &runWorker{}
	job := &river.Job[runArgs]{JobRow: &rivertype.JobRow{Errors: make([]rivertype.AttemptError, 12)}}
	if at := rw.NextRetry(job); time.Until(at) > maxRetryWait+maxRetryWait/10 {
		t.Fatalf("a job with 12 errors is tried again in %s", time.Until(at))
	}
}
