package client

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/openrath/rath/server"
)

// fakeCluster reports a cluster whose one run's state the test moves.
type fakeCluster struct{ done atomic.Bool }

func (f *fakeCluster) Status(context.Context) (any, error) {
	state := "running"
	if f.done.Load() {
		state = "done"
	}
	return map[string]any{
		"workers": []map[string]any{{"id": "w-1", "alive": true, "state": "alive", "pool": "default"}},
		"pools":   []map[string]any{{"queue": "default", "workers": []string{"w-1"}, "queued": 0, "running": 1}},
		"runs":    []map[string]any{{"id": "ses_01J00000000000000000000X01", "workflow": "coder", "state": state}},
	}, nil
}

func TestClusterStatus(t *testing.T) {
	fc := &fakeCluster{}
	_, ts := serve(t, server.Options{Cluster: fc}, nil)
	c, _ := New(ts.URL)
	ctx := testCtx(t)
	s, err := c.ClusterStatus(ctx)
	if err != nil || len(s.Workers) != 1 || s.Workers[0].ID != "w-1" || len(s.Pools) != 1 || s.Pools[0].Running != 1 || len(s.Runs) != 1 || s.Runs[0].State != "running" {
		t.Fatalf("ClusterStatus: %+v, %v", s, err)
	}

	// The stream: the status at once, then (polled) the run done.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	first := true
	for ev, err := range c.ClusterEvents(sctx).All() {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Name != "status" {
			continue
		}
		st, err := ev.Status()
		if err != nil || len(st.Runs) != 1 {
			t.Fatalf("status event: %+v, %v", st, err)
		}
		if first {
			first = false
			if st.Runs[0].State != "running" {
				t.Fatalf("first status: %+v", st.Runs[0])
			}
			fc.done.Store(true)
			continue
		}
		if st.Runs[0].State == "done" {
			break
		}
	}
	if _, err := (Event{Name: "chunk"}).Status(); err == nil {
		t.Error("a chunk event decoded as a status")
	}

	// A server without a cluster: unavailable.
	_, bare := serve(t, server.Options{}, nil)
	bc, _ := New(bare.URL)
	if _, err := bc.ClusterStatus(ctx); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("no cluster: %v", err)
	}
}
