package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/client"
	"github.com/openrath/rath/session"
)

// readRun reads run id's event stream from after to its end (or n events,
// if n > 0), and returns the events' keys (name session index) and the id
// of the last event with one.
func readRun(t *testing.T, c *client.Client, id session.ID, after string, n int) (keys []string, states []string, last string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for ev, err := range c.RunEvents(ctx, id, after).All() {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Name {
		case "live", "end":
			continue
		case "run":
			r, err := ev.Run()
			if err != nil {
				t.Fatal(err)
			}
			states = append(states, r.State)
			keys = append(keys, "run "+r.State)
		default:
			ch, err := ev.RunChunk()
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, fmt.Sprintf("%s %s %d", ev.Name, ch.Session, ch.Index))
		}
		if ev.ID != "" {
			last = ev.ID
		}
		if n > 0 && len(keys) == n {
			break
		}
	}
	return keys, states, last
}

// A run's events over the real binaries: a reader that follows the run
// live sees it start and end and each of its steps and tool results; the
// finished run's stream replays the same events; and a reader cut after
// five events that reconnects with the last id gets the rest, none twice.
func TestRunEventsOverAPI(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		base := e.serve("api")
		c, err := client.New(base)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		in := `{"steps":3,"latency_ms":20,"idempotent":true}`
		run, err := c.SubmitRun(ctx, client.RunRequest{Workflow: "cluster", Input: &in})
		if err != nil {
			t.Fatal(err)
		}
		type result struct{ keys, states []string }
		done := make(chan result)
		go func() {
			keys, states, _ := readRun(t, c, run.ID, "", 0)
			done <- result{keys, states}
		}()
		time.Sleep(200 * time.Millisecond) // the reader is in before the run starts
		e.worker("a")
		var live result
		select {
		case live = <-done:
		case <-time.After(90 * time.Second):
			t.Fatal("the live stream did not end with the run")
		}
		// Submitted with no worker alive, it waited unroutable. On SQLite
		// the server learns of other processes' writes by polling, so a
		// short state may pass unseen; PostgreSQL notifies every change.
		if live.states[0] != "unroutable" || live.states[len(live.states)-1] != "done" {
			t.Fatalf("states seen live: %v", live.states)
		}
		if strings.HasPrefix(e.store, "postgres") && !slices.Contains(live.states, "running") {
			t.Fatalf("states seen live on PostgreSQL: %v", live.states)
		}
		count := func(keys []string, name string) int {
			n := 0
			for _, k := range keys {
				if len(k) > len(name) && k[:len(name)+1] == name+" " {
					n++
				}
			}
			return n
		}
		if count(live.keys, "step") < 3 || count(live.keys, "tool_result") != 3 {
			t.Fatalf("live: %d steps, %d tool results, want ≥3 and 3:\n%v", count(live.keys, "step"), count(live.keys, "tool_result"), live.keys)
		}
		seen := map[string]bool{}
		for _, k := range live.keys {
			if seen[k] && k[:4] != "run " {
				t.Fatalf("%s sent twice", k)
			}
			seen[k] = true
		}

		replay, _, _ := readRun(t, c, run.ID, "", 0)
		chunks := func(keys []string) []string {
			var out []string
			for _, k := range keys {
				if k[:4] != "run " {
					out = append(out, k)
				}
			}
			slices.Sort(out)
			return out
		}
		if fmt.Sprint(chunks(replay)) != fmt.Sprint(chunks(live.keys)) {
			t.Fatalf("the replay's chunk events differ from the live ones:\n%v\n%v", chunks(replay), chunks(live.keys))
		}
		head, _, last := readRun(t, c, run.ID, "", 5)
		rest, _, _ := readRun(t, c, run.ID, last, 0)
		if fmt.Sprint(append(head, rest...)) != fmt.Sprint(replay) {
			t.Fatalf("cut after five and resumed:\n%v\n%v\nwant\n%v", head, rest, replay)
		}
	})
}

// A run's streamed model text reaches its event stream as delta events,
// all of it before the stream ends: from a worker in the server's process
// (SQLite), and from a worker process with --deltas through PostgreSQL's
// NOTIFY.
func TestRunDeltasOverAPI(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		var base string
		if strings.HasPrefix(e.store, "postgres") {
			base = e.serve("api")
			e.worker("a", "--deltas")
		} else {
			base = e.serve("api", "--worker")
		}
		c, err := client.New(base)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		for range 3 {
			in := `{"steps":2,"latency_ms":200,"idempotent":true}` // the answer streams well after the reader is in
			run, err := c.SubmitRun(ctx, client.RunRequest{Workflow: "cluster", Input: &in})
			if err != nil {
				t.Fatal(err)
			}
			var text strings.Builder
			for ev, err := range c.RunEvents(ctx, run.ID, "").All() {
				if err != nil {
					t.Fatal(err)
				}
				if ev.Name == "delta" {
					if ev.ID != "" {
						t.Fatalf("a delta with an id: %+v", ev)
					}
					var d struct {
						Text string `json:"text"`
					}
					if err := json.Unmarshal(ev.Data, &d); err != nil {
						t.Fatal(err)
					}
					text.WriteString(d.Text)
				}
			}
			if text.String() != "recorded 2 effects" {
				t.Fatalf("run %s streamed %q, want its answer", run.ID, text.String())
			}
		}
	})
}
