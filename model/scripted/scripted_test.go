package scripted

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
)

func req() *model.Request {
	return &model.Request{Messages: []session.Message{{Role: session.RoleUser, Content: "go"}}}
}

func TestRepliesInOrderThenErrors(t *testing.T) {
	m := New(model.Response{Text: "first"}, model.Response{Text: "second"})
	for _, want := range []string{"first", "second"} {
		r, err := model.Generate(context.Background(), m, req())
		if err != nil || r.Text != want {
			t.Fatalf("got %+v, %v; want %q", r, err, want)
		}
	}
	_, err := model.Generate(context.Background(), m, req())
	if !errors.Is(err, model.ErrExhausted) || !strings.Contains(err.Error(), "all 2 scripted responses") {
		t.Fatalf("err = %v", err)
	}
}

func TestStreamsLikeAProvider(t *testing.T) {
	want := model.Response{
		Text:      "I will read the file now",
		Reasoning: "the user wants the file",
		ToolCalls: []session.ToolCall{session.NewToolCall("c1", "read_file", `{"path":"some/long/path/to/file.go"}`)},
		Usage:     session.Usage{InputTokens: 12, OutputTokens: 7},
	}
	var text, reasoning, args strings.Builder
	var kinds []model.EventKind
	var done *model.Response
	for ev, err := range New(want).Stream(context.Background(), req()) {
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, ev.Kind)
		switch ev.Kind {
		case model.EventText:
			text.WriteString(ev.Delta)
		case model.EventReasoning:
			reasoning.WriteString(ev.Delta)
		case model.EventToolCallDelta:
			args.WriteString(ev.Delta)
		case model.EventDone:
			done = ev.Response
		}
	}
	count := func(k model.EventKind) (n int) {
		for _, x := range kinds {
			if x == k {
				n++
			}
		}
		return n
	}
	if count(model.EventText) != 6 || count(model.EventReasoning) != 5 || count(model.EventToolCallDelta) < 4 ||
		count(model.EventToolCall) != 1 || count(model.EventUsage) != 1 || kinds[len(kinds)-1] != model.EventDone {
		t.Fatalf("event kinds = %v", kinds)
	}
	if text.String() != want.Text || reasoning.String() != want.Reasoning || args.String() != string(want.ToolCalls[0].Args) {
		t.Fatalf("streamed %q / %q / %q", text.String(), reasoning.String(), args.String())
	}
	if done.Text != want.Text || done.FinishReason != "tool_calls" || done.Usage != want.Usage ||
		len(done.ToolCalls) != 1 || done.ToolCalls[0].ID != "c1" || string(done.ToolCalls[0].Args) != string(want.ToolCalls[0].Args) {
		t.Fatalf("done = %+v", done)
	}
	if done.Provider != "scripted" || done.Model != "scripted" || len(done.Attempts) != 1 {
		t.Fatalf("done = %+v", done)
	}
}

func TestFuncSeesTheRequest(t *testing.T) {
	m := Func(func(_ context.Context, r *model.Request) (model.Response, error) {
		if len(r.Messages) == 0 {
			return model.Response{}, &model.StatusError{Status: 400, Message: "no messages"}
		}
		return model.Response{Text: "echo: " + r.Messages[len(r.Messages)-1].Content}, nil
	})
	r, err := model.Generate(context.Background(), m, req())
	if err != nil || r.Text != "echo: go" {
		t.Fatalf("r = %+v, err = %v", r, err)
	}
	_, err = model.Generate(context.Background(), m, &model.Request{})
	var se *model.StatusError
	if !errors.As(err, &se) || se.Status != 400 || len(model.AttemptsOf(err)) != 1 {
		t.Fatalf("err = %v", err)
	}
}

func TestConcurrentCallsTakeEachResponseOnce(t *testing.T) {
	const n = 50
	rs := make([]model.Response, n)
	for i := range rs {
		rs[i] = model.Response{Text: strings.Repeat("x", i+1)}
	}
	m := New(rs...)
	seen := make([]bool, n+1)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			r, err := model.Generate(context.Background(), m, req())
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if seen[len(r.Text)] {
				t.Errorf("response %d given twice", len(r.Text))
			}
			seen[len(r.Text)] = true
		})
	}
	wg.Wait()
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := model.Generate(ctx, New(model.Response{Text: "never"}), req())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestWordsKeepsEveryByte(t *testing.T) {
	for _, s := range []string{"", "a", "a b", "  lead", "trail  ", "tab\tand\nnewline", "nbsp\u00a0here", "日本 語"} {
		if got := strings.Join(words(s), ""); got != s {
			t.Fatalf("words(%q) joined = %q", s, got)
		}
	}
}
