package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestScriptNext(t *testing.T) {
	s := script{calls: 2}
	for _, c := range []struct {
		answered, id string
		ok           bool
	}{{"", "c0", true}, {"c0", "c1", true}, {"c1", "", false}, {"x", "c0", true}} {
		if id, ok := s.next(c.answered); id != c.id || ok != c.ok {
			t.Errorf("next(%q) = %q, %v; want %q, %v", c.answered, id, ok, c.id, c.ok)
		}
	}
	if _, ok := (script{}).next(""); ok {
		t.Error("a script of no calls asks for a tool")
	}
}

// TestRun runs every workload once at a tiny size and checks the table
// has a row for each, with figures on the sides that ran.
func TestRun(t *testing.T) {
	z := sizes{shortRuns: 2, shortCalls: 2, longCalls: 20, durableRuns: 2, fanouts: []int{10}, durableFanout: 10, fanoutCalls: 2, latency: time.Millisecond}
	var results []result
	var progress bytes.Buffer
	for _, w := range workloads(z) {
		r, err := measure(t.Context(), w, 2, t.TempDir(), &progress)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.ours) != 2 {
			t.Errorf("%s: %d samples of ours, want 2", w.name, len(r.ours))
		}
		if wantEino := w.key != "fanout-durable"; (len(r.eino) == 2) != wantEino {
			t.Errorf("%s: %d samples of eino", w.name, len(r.eino))
		}
		for _, s := range append(r.ours, r.eino...) {
			if s.value <= 0 || w.rss && s.rssMiB <= 0 {
				t.Errorf("%s: sample %+v", w.name, s)
			}
		}
		results = append(results, r)
	}
	var out bytes.Buffer
	if err := table(&out, results); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1+2*len(results)+2 { // header, wall and CPU of each, peak RSS of the two fan-outs
		t.Errorf("table has %d lines:\n%s", len(lines), out.String())
	}
	for i, l := range lines[1:] {
		oursOnly := i+1 >= len(lines)-3 // the durable fan-out's three rows
		if strings.HasSuffix(l, "—") != oursOnly {
			t.Errorf("row %q: only the durable fan-out's rows are ours alone", l)
		}
	}
	if durable := lines[len(lines)-3]; !strings.Contains(durable, "SQLite sync") {
		t.Errorf("the durable fan-out is not last: %q", durable)
	}
}
