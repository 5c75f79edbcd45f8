package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/openrath/rath/session"
)

// runEvent is a run stream's chunk event's data.
type runEvent struct {
	Session session.ID    `json:"session"`
	Index   int           `json:"index"`
	Kind    session.Kind  `json:"kind"`
	Chunk   session.Chunk `json:"chunk"`
}

// A run's stream sends its state, its input, then what its agent's session
// adds — from where the agent forked the input, each chunk once, named by
// what it is; a client that reconnects with the last id gets what it
// missed and nothing twice; the end of the run ends the stream, and a
// finished run's stream replays and ends.
func TestV1RunEvents(t *testing.T) {
	st := openStore(t)
	in := session.FromUser("count to three")
	commit(t, st, in, "")
	runs := &v1FakeRuns{st: st, runs: []*v1FakeRun{{ID: in.ID(), Workflow: "count", State: "queued", Created: time.Now().UTC()}}}
	srv, ts := newTestServer(t, st, Options{Runs: runs})
	srv.clusterPoll = 50 * time.Millisecond
	url := ts.URL + "/v1/runs/" + string(in.ID()) + "/events"

	ch, stop := openEvents(t, url, "")
	ev := next(t, ch)
	if ev.name != "run" || ev.id == "" {
		t.Fatalf("first event %+v, want the run", ev)
	}
	var first v1FakeRun
	if json.Unmarshal([]byte(ev.data), &first) != nil || first.State != "queued" {
		t.Fatalf("run event %s", ev.data)
	}
	if ev := next(t, ch); ev.name != "user" {
		t.Fatalf("the input's chunk: %+v", ev)
	}
	if ev := next(t, ch); ev.name != "live" {
		t.Fatalf("after the history: %+v", ev)
	}

	// The run starts; its agent forks the input and works.
	runs.set(in.ID(), "running")
	agent := in.Fork().Append(
		session.Of(&session.ModelCall{Provider: "scripted", Model: "m", Response: session.ModelOutput{Text: "calling"}}),
		session.Assistant("", session.ToolCall{ID: "c1", Name: "count", Args: json.RawMessage(`{"to":3}`)}),
		session.Result(session.ToolResult{CallID: "c1", Tool: "count", Content: "1 2 3"}),
	)
	commit(t, st, agent, "")
	if err := st.SetLabel(testCtx(t), agent.ID(), "rath.run", string(in.ID())); err != nil {
		t.Fatal(err)
	}
	want := []string{"step", "tool_call", "tool_result"}
	var got []string
	var last string
	for len(got) < len(want) {
		ev := next(t, ch)
		if ev.name == "run" {
			continue // running
		}
		var c runEvent
		if err := json.Unmarshal([]byte(ev.data), &c); err != nil || c.Session != agent.ID() || c.Chunk.ID != agent.Chunk(c.Index).ID || ev.id == "" {
			t.Fatalf("event %+v: %v", ev, err)
		}
		got = append(got, ev.name)
		last = ev.id
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the agent's events %v, want %v (the input's chunk it shares is not sent again)", got, want)
	}
	stop()

	// Meanwhile the agent goes on and the run ends.
	prev := agent.Head()
	agent = agent.Append(session.Assistant("three"))
	commit(t, st, agent, prev)
	runs.set(in.ID(), "done")
	ch, stop = openEvents(t, url, last)
	defer stop()
	var after []string
	for {
		ev := next(t, ch)
		after = append(after, ev.name)
		if ev.name == "end" {
			break
		}
	}
	if fmt.Sprint(after) != "[assistant run end]" && fmt.Sprint(after) != "[run assistant end]" {
		t.Fatalf("after reconnecting: %v, want the missed turn, the run done, the end", after)
	}

	// A finished run replays and ends.
	done, stopDone := openEvents(t, url, "")
	defer stopDone()
	var replay []string
	for {
		ev := next(t, done)
		if replay = append(replay, ev.name); ev.name == "end" {
			break
		}
	}
	if fmt.Sprint(replay) != "[user step tool_call tool_result assistant run end]" {
		t.Fatalf("a finished run's stream: %v", replay)
	}

	call(t, "GET", url, "", "Last-Event-ID", "not-a-cursor").wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
	call(t, "GET", ts.URL+"/v1/runs/"+string(session.NewID())+"/events", "").wantV1Error(t, http.StatusNotFound, CodeNotFound)
}

// 200 subscribers on one run all get every event.
func TestV1RunEventsManySubscribers(t *testing.T) {
	st := openStore(t)
	in := session.FromUser("go")
	commit(t, st, in, "")
	runs := &v1FakeRuns{st: st, runs: []*v1FakeRun{{ID: in.ID(), Workflow: "w", State: "running", Created: time.Now().UTC()}}}
	const subs, turns = 200, 20
	srv, ts := newTestServer(t, st, Options{Runs: runs, MaxSubscribersPerPrincipal: subs})
	srv.clusterPoll = 500 * time.Millisecond // the fake's end is seen by polling
	url := ts.URL + "/v1/runs/" + string(in.ID()) + "/events"
	streams := make([]<-chan sseEvent, subs)
	for i := range streams {
		ch, stop := openEvents(t, url, "")
		defer stop()
		streams[i] = ch
		for next(t, ch).name != "live" {
		}
	}
	s := in
	for i := range turns {
		prev := s.Head()
		s = s.Append(session.Assistant(fmt.Sprint(i)))
		commit(t, st, s, prev)
	}
	runs.set(in.ID(), "done")
	var wg sync.WaitGroup
	counts := make([]int, subs)
	for i, ch := range streams {
		wg.Go(func() {
			for ev := range ch {
				switch ev.name {
				case "assistant":
					counts[i]++
				case "end":
					return
				}
			}
		})
	}
	wg.Wait()
	for i, n := range counts {
		if n != turns {
			t.Fatalf("subscriber %d got %d turns, want %d", i, n, turns)
		}
	}
}

// FuzzRunCursor: a run stream's Last-Event-ID decodes to what was encoded,
// and anything else to one error.
func FuzzRunCursor(f *testing.F) {
	f.Add("", "running", 3)
	f.Add("eyJjIjp7fX0", "", 0)
	f.Fuzz(func(t *testing.T, raw, state string, n int) {
		_, _ = decodeRunCursor(raw)
		if n < 0 || !utf8.ValidString(state) { // states are words
			return
		}
		c := runCursor{Sent: map[session.ID]int{session.NewID(): n}, State: state}
		back, err := decodeRunCursor(c.id())
		if err != nil || back.State != state || fmt.Sprint(back.Sent) != fmt.Sprint(c.Sent) {
			t.Fatalf("round trip of %+v: %+v %v", c, back, err)
		}
	})
}

// A run's streamed text comes as delta events, with no id: a reconnect
// goes on from the last stored event.
func TestV1RunDeltas(t *testing.T) {
	st := openStore(t)
	in := session.FromUser("go")
	commit(t, st, in, "")
	runs := &v1FakeRuns{st: st, deltas: make(chan RunDelta, 4), runs: []*v1FakeRun{{ID: in.ID(), Workflow: "w", State: "running", Created: time.Now().UTC()}}}
	_, ts := newTestServer(t, st, Options{Runs: runs})
	ch, stop := openEvents(t, ts.URL+"/v1/runs/"+string(in.ID())+"/events", "")
	defer stop()
	for next(t, ch).name != "live" {
	}
	runs.deltas <- RunDelta{Agent: "writer", Step: 2, Text: "Once upon"}
	ev := next(t, ch)
	var d RunDelta
	if ev.name != "delta" || ev.id != "" || json.Unmarshal([]byte(ev.data), &d) != nil || d != (RunDelta{Agent: "writer", Step: 2, Text: "Once upon"}) {
		t.Fatalf("delta event %+v", ev)
	}
}
