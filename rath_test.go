package rath_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/replay"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

var variant = "You answer."

func init() {
	rath.RegisterWorkflow(rath.Workflow{Name: "echo", Description: "answers once", Build: func(_ context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
		a, err := agent.New(agent.Config{Name: "echo", Instructions: variant, Model: scripted.New(model.Response{Text: "hi"}), Store: rt.Store})
		return flow.Sequential(a), session.FromUser("hello"), err
	}})
}

func TestRuntimeRunsAndReplays(t *testing.T) {
	ctx := context.Background()
	rt, err := rath.Open(ctx, rath.Config{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	out, err := rt.Run(ctx, "echo")
	if err != nil {
		t.Fatal(err)
	}
	info, err := rt.Store.Info(ctx, out.ID())
	if err != nil || info.Labels[rath.WorkflowLabel] != "echo" || info.Status != store.StatusClosed || info.Head != out.Head() {
		t.Fatalf("stored output: %+v, %v", info, err)
	}
	again, err := rt.Replay(ctx, out.ID())
	if err != nil || again.Head() != out.Head() {
		t.Fatalf("replay: %v", err)
	}
	variant = "You shout."
	defer func() { variant = "You answer." }()
	if _, err := rt.Replay(ctx, out.ID()); !errors.Is(err, replay.ErrDiverged) {
		t.Fatalf("replay of changed code: %v", err)
	}
	if _, err := rt.Run(ctx, "nosuch"); !errors.Is(err, rath.ErrUnknownWorkflow) {
		t.Fatalf("unknown workflow: %v", err)
	}
	m, err := rt.Memory(ctx)
	if err != nil || m == nil {
		t.Fatalf("memory: %v", err)
	}
}

func TestRuntimeTracesLive(t *testing.T) {
	ctx := context.Background()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	rt, err := rath.Open(ctx, rath.Config{Home: t.TempDir(), Tracing: tp})
	if err != nil {
		t.Fatal(err)
	}
	out, err := rt.Run(ctx, "echo")
	if err != nil {
		t.Fatal(err)
	}
	// The chat span is emitted as its chunk commits: wait for it.
	deadline := time.Now().Add(20 * time.Second)
	for !hasSpan(exp, "chat") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if !hasSpan(exp, "chat") || !hasSpan(exp, "invoke_agent") {
		t.Fatalf("spans: %v", names(exp))
	}
	for _, s := range exp.GetSpans() {
		for _, kv := range s.Attributes {
			if kv.Key == "gen_ai.conversation.id" && kv.Value.AsString() == "" {
				t.Fatalf("span %s has no conversation id", s.Name)
			}
		}
	}
	_ = out
}

func hasSpan(exp *tracetest.InMemoryExporter, prefix string) bool {
	for _, n := range names(exp) {
		if strings.HasPrefix(n, prefix) {
			return true
		}
	}
	return false
}

func names(exp *tracetest.InMemoryExporter) []string {
	var out []string
	for _, s := range exp.GetSpans() {
		out = append(out, s.Name)
	}
	return out
}
