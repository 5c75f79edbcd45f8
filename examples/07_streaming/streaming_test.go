package streaming_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/openrath/rath"
	streaming "github.com/openrath/rath/examples/07_streaming"
	"github.com/openrath/rath/session"
)

// writes keeps every Write separately: one per event printed.
type writes struct {
	mu sync.Mutex
	ws []string
}

func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ws = append(w.ws, string(p))
	return len(p), nil
}

var tag = regexp.MustCompile(`^\n?\[(\w+)`)

func TestStreaming(t *testing.T) {
	t.Setenv("RATH_OFFLINE", "1")
	home := t.TempDir()
	t.Setenv("RATH_HOME", home)
	w := &writes{}
	streaming.Out = w
	ctx := context.Background()
	rt, err := rath.Open(ctx, rath.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })

	out, err := rt.Run(ctx, "streaming")
	if err != nil {
		t.Fatal(err)
	}

	// The event sequence, with each run of text deltas as one "text"; the
	// deltas of step 2 make up the answer.
	var seq []string
	var answer strings.Builder
	deltas, step := 0, 0
	for _, s := range w.ws {
		name := "text"
		if m := tag.FindStringSubmatch(s); m != nil {
			name = m[1]
		} else {
			deltas++
			if step == 2 {
				answer.WriteString(s)
			}
		}
		if name == "step" {
			step++
		}
		if name != "text" || len(seq) == 0 || seq[len(seq)-1] != "text" {
			seq = append(seq, name)
		}
	}
	want := []string{
		"committed", // the instructions, before the first step
		"step", "text", "usage", "call", "call", "result", "result", "committed",
		"step", "text", "usage", "committed",
		"done",
	}
	if !slices.Equal(seq, want) {
		t.Fatalf("events %v\nwant   %v\n%q", seq, want, w.ws)
	}
	last := out.Chunk(out.Len() - 2) // the answer, before the summary note
	if last.Assistant == nil || answer.String() != last.Assistant.Text || deltas < 10 {
		t.Errorf("%d deltas streamed %q; the answer is %+v", deltas, answer.String(), last.Assistant)
	}

	// Per call usage and cost, priced by the model; the session sums them.
	wantUsage := []session.Usage{streaming.FirstUsage, streaming.SecondUsage}
	var total float64
	for i := range wantUsage {
		wantUsage[i].CostUSD = streaming.Price.Cost(wantUsage[i])
		total += wantUsage[i].CostUSD
	}
	var got []session.Usage
	for _, c := range out.All() {
		if c.ModelCall != nil {
			got = append(got, c.ModelCall.Usage)
		}
	}
	if !slices.Equal(got, wantUsage) || wantUsage[0].CostUSD == 0 {
		t.Errorf("model call usage %v, want %v", got, wantUsage)
	}
	if u := out.Usage(); u.InputTokens != 187+276 || u.OutputTokens != 58+41 || u.CostUSD != total {
		t.Errorf("session usage %v, want cost %v", u, total)
	}

	// The distances, and the summary note.
	var results []string
	for _, c := range out.All() {
		if c.ToolResult != nil {
			results = append(results, c.ToolResult.Content)
		}
	}
	if !slices.Equal(results, []string{"Lisbon to Madrid: 502 km", "Paris to Berlin: 877 km"}) {
		t.Errorf("distances %q", results)
	}
	note, _ := out.Last()
	wantNote := fmt.Sprintf("Streamed 2 model calls.\n"+
		"step 1: 187 input + 58 output tokens, $%.6f; called distance_km, distance_km\n"+
		"step 2: 276 input + 41 output tokens, $%.6f; answered\n"+
		"total: 463 input + 99 output tokens, $%.6f", wantUsage[0].CostUSD, wantUsage[1].CostUSD, total)
	if note.Note == nil || note.Note.Text != wantNote || note.Node != "streaming:summary#1" {
		t.Errorf("summary %+v\nwant %q", note, wantNote)
	}

	// A replay serves the model calls whole: no deltas, the same session.
	w.ws = nil
	again, err := rt.Replay(ctx, out.ID())
	if err != nil {
		t.Fatal(err)
	}
	if again.Head() != out.Head() {
		t.Errorf("replay head %s, want %s", again.Head(), out.Head())
	}
	for _, s := range w.ws {
		if !tag.MatchString(s) {
			t.Errorf("the replay streamed text %q", s)
		}
	}
}
