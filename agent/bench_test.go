package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/sqlite"
	"github.com/openrath/rath/tool"
)

// stepAgent answers every request with one call of a no-op tool, for steps
// steps, then a final answer. The tool is marked idempotent if asked (it
// is: it does nothing).
func stepAgent(b *testing.B, steps int, cfg Config, idempotent ...bool) *Agent {
	b.Helper()
	n := 0
	cfg.Model = scripted.Func(func(context.Context, *model.Request) (model.Response, error) {
		n++
		if n%(steps+1) == 0 {
			return model.Response{Text: "done"}, nil
		}
		return model.Response{ToolCalls: []session.ToolCall{session.NewToolCall("c", "noop", `{}`)}}, nil
	})
	var opts []tool.Option[struct{}]
	if len(idempotent) > 0 && idempotent[0] {
		opts = append(opts, tool.Idempotent[struct{}]())
	}
	noop, err := tool.FuncWith("noop", "Does nothing.", func(context.Context, tool.Env, struct{}) (string, error) { return "ok", nil }, opts...)
	if err != nil {
		b.Fatal(err)
	}
	cfg.Tools = []tool.Tool{noop}
	cfg.Name, cfg.MaxSteps = "bench", steps+1
	a, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return a
}

// benchSteps runs 10-step runs and reports the median time per step.
func benchSteps(b *testing.B, a *Agent) []time.Duration {
	const steps = 10
	var per []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := a.Forward(context.Background(), session.FromUser("go")); err != nil {
			b.Fatal(err)
		}
		per = append(per, time.Since(t0)/(steps+1))
	}
	slices.Sort(per)
	b.ReportMetric(float64(per[len(per)/2].Nanoseconds())/1e3, "us/step")
	return per
}

// BenchmarkStepOverheadMemory: the loop on an unbound session that already
// holds len chunks (an earlier conversation of the same agent). Each run
// makes 20 steps; the figure is the median time from one step's start to the
// next's, so what a run does once (its instructions, recall) is not in it.
func BenchmarkStepOverheadMemory(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("len=%d", n), func(b *testing.B) {
			in := prefilled(b, n)
			a := stepAgent(b, 20, Config{})
			var per []time.Duration
			for b.Loop() {
				per = append(per, stepTimes(b, a, in)...)
			}
			slices.Sort(per)
			b.ReportMetric(float64(per[len(per)/2].Nanoseconds())/1e3, "us/step")
			b.ReportMetric(float64(in.Len()), "chunks")
		})
	}
}

// BenchmarkLongRun: one run of 1,000 steps from a one-message session,
// the session growing by three chunks a step; the figure is the whole
// run's time per step.
func BenchmarkLongRun(b *testing.B) {
	const steps = 1000
	a := stepAgent(b, steps, Config{})
	for b.Loop() {
		t0 := time.Now()
		out, err := a.Forward(context.Background(), session.FromUser("go"))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(time.Since(t0).Nanoseconds())/1e3/(steps+1), "us/step")
		b.ReportMetric(float64(out.Len()), "chunks")
	}
}

// prefilled returns the output of a run of the step agent long enough to
// hold about n chunks (three a step, plus the user message, the
// instructions and the final answer).
func prefilled(b *testing.B, n int) *session.Session {
	b.Helper()
	steps := max((n-4)/3, 1)
	a := stepAgent(b, steps, Config{Instructions: "Call noop until told otherwise."})
	out, err := a.Forward(context.Background(), session.FromUser("go"))
	if err != nil {
		b.Fatal(err)
	}
	return out.Append(session.User("again"))
}

// stepTimes runs a on in and returns the time from each step's start to the
// next one's.
func stepTimes(b *testing.B, a *Agent, in *session.Session) []time.Duration {
	var starts []time.Time
	for ev, err := range a.Run(context.Background(), in) {
		if err != nil {
			b.Fatal(err)
		}
		if ev.Kind == StepStart {
			starts = append(starts, time.Now())
		}
	}
	out := make([]time.Duration, 0, len(starts))
	for i := 1; i < len(starts); i++ {
		out = append(out, starts[i].Sub(starts[i-1]))
	}
	return out
}

// BenchmarkStepOverhead: the same loop committing every step to SQLite in
// sync mode, beside a raw write+fsync of a step's bytes to a file on the
// same file system (x-raw: the step over the raw write). With an idempotent
// tool a step is one commit; with one that must not run twice ("twice") the
// call's turn is committed before the tool runs as well, so two.
func BenchmarkStepOverhead(b *testing.B) {
	for _, c := range []struct {
		name       string
		idempotent bool
	}{{"idempotent", true}, {"twice", false}} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			st, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(dir, "b.db")})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			per := benchSteps(b, stepAgent(b, 10, Config{Store: st}, c.idempotent))
			raw := rawFsync(b, dir, 1024)
			b.ReportMetric(float64(raw.Nanoseconds())/1e3, "raw-fsync-us")
			b.ReportMetric(float64(per[len(per)/2])/float64(raw), "x-raw")
			b.ReportMetric(cpuPerStep(b, c.idempotent), "cpu-us/step")
		})
	}
}

// rawFsync is the median time of writing size bytes to a file in dir and
// fsyncing it, over 200 writes: what a durable step cannot go below.
func rawFsync(b *testing.B, dir string, size int) time.Duration {
	f, err := os.OpenFile(filepath.Join(dir, "raw"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, size)
	var per []time.Duration
	for range 200 {
		t0 := time.Now()
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		per = append(per, time.Since(t0))
	}
	slices.Sort(per)
	return per[len(per)/2]
}

// nopStore accepts every commit and does nothing: the loop's own cost with
// the store taken out.
type nopStore struct{ store.Store }

func (nopStore) Commit(context.Context, *session.Session, session.ChunkID) error { return nil }

// cpuPerStep is the process CPU time (user + system) per step of the same
// committing loop when the store does nothing: the runtime's own CPU per
// step, excluding the store.
func cpuPerStep(b *testing.B, idempotent bool) float64 {
	a := stepAgent(b, 10, Config{Store: nopStore{}}, idempotent)
	const runs = 200
	before := cpuTime()
	for range runs {
		if _, err := a.Forward(context.Background(), session.FromUser("go")); err != nil {
			b.Fatal(err)
		}
	}
	return float64((cpuTime() - before).Microseconds()) / (runs * 11)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFanout: 10,000 concurrent runs of 5 steps each, a scripted model
// answering after 20 ms; "sqlite" commits every step to SQLite (sync), as a
// crash-safe run must, "memory" keeps the sessions in memory. Reports the
// wall time of the whole fan-out and the process's peak RSS.
func BenchmarkFanout(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		st, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(b.TempDir(), "f.db")})
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		fanout(b, st)
	})
	b.Run("memory", func(b *testing.B) { fanout(b, nil) })
}

func fanout(b *testing.B, st store.Store) {
	runs, steps := fanoutRuns(), 5
	// Reset the peak RSS (Linux): each sub-benchmark reports its own.
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	m := scripted.Func(func(ctx context.Context, r *model.Request) (model.Response, error) {
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return model.Response{}, ctx.Err()
		}
		turns := 0
		for _, msg := range r.Messages {
			if msg.Role == session.RoleAssistant {
				turns++
			}
		}
		if turns >= steps-1 {
			return model.Response{Text: "done"}, nil
		}
		return model.Response{ToolCalls: []session.ToolCall{session.NewToolCall("c", "noop", `{}`)}}, nil
	})
	noop := tool.MustFunc("noop", "Does nothing.", func(context.Context, struct{}) (string, error) { return "ok", nil })
	a, err := New(Config{Name: "fan", Model: m, Tools: []tool.Tool{noop}, Store: st, MaxSteps: steps})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		t0 := time.Now()
		var wg sync.WaitGroup
		var failed atomic.Int64
		for i := range runs {
			wg.Go(func() {
				if _, err := a.Forward(context.Background(), session.FromUser(fmt.Sprint("task ", i))); err != nil {
					failed.Add(1)
				}
			})
		}
		wg.Wait()
		if failed.Load() > 0 {
			b.Fatalf("%d runs failed", failed.Load())
		}
		b.ReportMetric(time.Since(t0).Seconds(), "wall-s")
	}
	b.ReportMetric(peakRSSMiB(), "peak-MiB")
}

// peakRSSMiB is the process's resident-set high-water mark (VmHWM).
func peakRSSMiB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// fanoutRuns is 10,000, or RATH_FANOUT_RUNS when set (for profiling).
func fanoutRuns() int {
	if n, err := strconv.Atoi(os.Getenv("RATH_FANOUT_RUNS")); err == nil && n > 0 {
		return n
	}
	return 10_000
}
