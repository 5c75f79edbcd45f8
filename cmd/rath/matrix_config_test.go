package main

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The interrupt matrix's knobs, all from the environment:
//
//	RATH_MATRIX=long           many more interruptions (default: the CI size)
//	RATH_MATRIX_SEED=N         replay a run of the matrix (its seed is printed)
//	RATH_MATRIX_SIGNALS=KILL,INT,TERM   the signals sent (default: these
//	                           three; INT2 and TERM2 send the signal twice,
//	                           the second one within 100ms of the first)
//	RATH_MATRIX_WORKFLOWS=a,b  only these workflows (to replay one case)
//	RATH_MATRIX_STORES=sqlite,postgres  only these stores
//	RATH_MATRIX_JOBS=N         workflows run at once on each store (default 2)
//	RATH_MATRIX_CALIBRATE=1    run each workflow twice uninterrupted first
//	                           (their outputs must be equal; long does it)
//
// Each workflow and store draws from a generator of its own, seeded from
// the seed and their names, so that leaving workflows out does not change
// the moments the others are interrupted at.
type matrixConfig struct {
	seed uint64
	// per is how many interruptions must land inside runs of each
	// workflow on each store; tries×per bounds the attempts.
	per, tries int
	signals    []matrixSignal
	workflows  map[string]bool // nil: all
	stores     map[string]bool // nil: both
	long       bool
	// jobs is how many workflows run at once on each store.
	jobs int
	// calibrate runs each workflow twice uninterrupted, which must give
	// equal outputs (RATH_MATRIX=long, or RATH_MATRIX_CALIBRATE=1).
	calibrate bool
}

// matrixSignal is a signal the matrix sends and what rath must do on it.
type matrixSignal struct {
	name string
	sig  syscall.Signal
	// code is the exit code of a run stopped cleanly by it (0 for
	// SIGKILL, which nothing survives to report).
	code int
	// twice: a second signal follows the first (rath exits at once).
	twice bool
}

var allSignals = []matrixSignal{
	{"KILL", syscall.SIGKILL, 0, false},
	{"INT", syscall.SIGINT, 130, false},
	{"TERM", syscall.SIGTERM, 143, false},
	{"INT2", syscall.SIGINT, 130, true},
	{"TERM2", syscall.SIGTERM, 143, true},
}

func matrixConfigFromEnv(t *testing.T) matrixConfig {
	c := matrixConfig{seed: uint64(time.Now().UnixNano()), per: 2, tries: 6, jobs: 2}
	if os.Getenv("RATH_MATRIX") == "long" {
		c.long, c.per = true, 8
	}
	if s := os.Getenv("RATH_MATRIX_JOBS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("RATH_MATRIX_JOBS=%q: not a positive number", s)
		}
		c.jobs = n
	}
	c.calibrate = c.long || os.Getenv("RATH_MATRIX_CALIBRATE") == "1"
	if s := os.Getenv("RATH_MATRIX_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("RATH_MATRIX_SEED=%q: %v", s, err)
		}
		c.seed = n
	}
	names := os.Getenv("RATH_MATRIX_SIGNALS")
	if names == "" {
		names = "KILL,INT,TERM"
	}
	for _, n := range strings.Split(names, ",") {
		n = strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(n)), "SIG")
		found := false
		for _, s := range allSignals {
			if s.name == n {
				c.signals, found = append(c.signals, s), true
			}
		}
		if !found {
			t.Fatalf("RATH_MATRIX_SIGNALS: no signal %q (KILL, INT, TERM, INT2, TERM2)", n)
		}
	}
	c.workflows = set(os.Getenv("RATH_MATRIX_WORKFLOWS"))
	c.stores = set(os.Getenv("RATH_MATRIX_STORES"))
	return c
}

// set is a comma-separated list as a set; nil if empty.
func set(list string) map[string]bool {
	if list == "" {
		return nil
	}
	out := map[string]bool{}
	for _, s := range strings.Split(list, ",") {
		out[strings.TrimSpace(s)] = true
	}
	return out
}

// rng is the generator of one workflow on one store.
func (c matrixConfig) rng(store, workflow string) *rand.Rand {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%s", store, workflow)
	return rand.New(rand.NewPCG(c.seed, h.Sum64()))
}

// signal is the signal of the k-th interruption of the workflow numbered
// w on the store numbered s: the signals take turns, shifted per workflow
// and store, so that a workflow meets every signal over the CI size's
// four interruptions (two per store) when three are sent.
func (c matrixConfig) signal(w, s, k int) matrixSignal {
	return c.signals[(w+s*c.per+k)%len(c.signals)]
}
