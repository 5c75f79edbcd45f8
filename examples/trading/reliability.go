package trading

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/openrath/rath"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// ReliabilityLabel marks the session that records a reliability
// measurement; its value is the workflow measured.
const ReliabilityLabel = "rath.reliability"

// PassK is tau-bench's pass^k for one task: the probability that k runs
// drawn without replacement from n runs, of which passes passed, all
// passed: C(passes, k) / C(n, k).
func PassK(passes, n, k int) float64 {
	if k < 1 || k > n || passes < k {
		return 0
	}
	p := 1.0
	for i := range k {
		p *= float64(passes-i) / float64(n-i)
	}
	return p
}

// Reliability runs the trading task n times, each on a fresh account, and
// reports pass^k over the runs (a run passes when both validators approve
// its final ledger). The measurement is recorded in the store as a session
// derived from every run, labelled ReliabilityLabel, whose note lists each
// run and its verdicts. A run that fails counts as a failed trial; only a
// workflow that cannot be built is an error.
func Reliability(ctx context.Context, rt *rath.Runtime, n, k int) (float64, []*session.Session, error) {
	if n < 1 || k < 1 || k > n {
		return 0, nil, fmt.Errorf("trading: reliability needs 1 <= k <= n, not n=%d k=%d", n, k)
	}
	runs := make([]*session.Session, 0, n)
	passes := 0
	var lines []string
	for i := range n {
		out, err := rt.Run(ctx, Name)
		if out == nil {
			return 0, runs, fmt.Errorf("trading: reliability run %d: %w", i+1, err)
		}
		runs = append(runs, out)
		verdict := "fail"
		if err == nil && Passed(out) {
			passes++
			verdict = "pass"
		}
		line := fmt.Sprintf("run %d %s: %s", i+1, out.ID(), verdict)
		if err != nil {
			line += " (" + err.Error() + ")"
		}
		lines = append(lines, line)
	}
	p := PassK(passes, n, k)
	text := fmt.Sprintf("pass^%d = %.2f for the %s task: %d of %d runs passed (pass^k = C(%d,%d)/C(%d,%d)).\n%s",
		k, p, Name, passes, n, passes, k, n, k, strings.Join(lines, "\n"))
	if err := record(ctx, rt.Store, runs, n, k, p, text); err != nil {
		return p, runs, err
	}
	return p, runs, nil
}

// record stores the measurement: a closed session whose lineage names every
// run as a parent, with the result in a note.
func record(ctx context.Context, st store.Store, runs []*session.Session, n, k int, p float64, text string) error {
	extras := map[string]string{"workflow": Name, "n": strconv.Itoa(n), "k": strconv.Itoa(k), "pass_k": strconv.FormatFloat(p, 'f', 4, 64)}
	s := session.FromUser(fmt.Sprintf("Measure the reliability of the %s task: %d runs, pass^%d.", Name, n, k)).
		Derive("reliability", extras, runs...).
		Append(session.Note(text))
	if err := st.Commit(ctx, s, ""); err != nil {
		return fmt.Errorf("trading: record reliability: %w", err)
	}
	if err := st.SetLabel(ctx, s.ID(), ReliabilityLabel, Name); err != nil {
		return fmt.Errorf("trading: record reliability: %w", err)
	}
	for _, to := range []store.Status{store.StatusActive, store.StatusClosed} {
		if err := st.SetStatus(ctx, s.ID(), to); err != nil {
			return fmt.Errorf("trading: record reliability: %w", err)
		}
	}
	return nil
}
