package cluster_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openrath/rath"
	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// idemHash is LabelIdem's value for a tenant and key, as the design says.
func idemHash(tenant, key string) string {
	sum := sha256.Sum256([]byte(tenant + "\x00" + key))
	return hex.EncodeToString(sum[:])
}

// keyedRuns are the runs submitted with a tenant and key.
func keyedRuns(t *testing.T, st store.Store, tenant, key string) []store.Info {
	t.Helper()
	infos, err := st.List(context.Background(), store.Filter{Labels: map[string]string{cluster.LabelKind: "run", cluster.LabelIdem: idemHash(tenant, key)}})
	if err != nil {
		t.Fatal(err)
	}
	return infos
}

// submitted is one SubmitKeyed call's outcome.
type submitted struct {
	id       session.ID
	replayed bool
	err      error
}

// submitKeyedAll calls SubmitKeyed once from each of n goroutines per cluster,
// all at once, and returns what they got.
func submitKeyedAll(n int, o cluster.SubmitOptions, cls ...*cluster.Cluster) []submitted {
	out := make([]submitted, n*len(cls))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range out {
		cl := cls[i%len(cls)]
		wg.Go(func() {
			<-start
			id, replayed, err := cl.SubmitKeyed(context.Background(), "cluster", o)
			out[i] = submitted{id, replayed, err}
		})
	}
	close(start)
	wg.Wait()
	return out
}

// checkOnce checks that calls all got one run, exactly one of them new,
// and that the store holds that one run for the key.
func checkOnce(t *testing.T, st store.Store, calls []submitted, tenant, key string) session.ID {
	t.Helper()
	fresh := 0
	for i, s := range calls {
		if s.err != nil {
			t.Fatalf("call %d: %v", i, s.err)
		}
		if s.id != calls[0].id {
			t.Fatalf("call %d got run %s, call 0 got %s", i, s.id, calls[0].id)
		}
		if !s.replayed {
			fresh++
		}
	}
	if fresh != 1 {
		t.Fatalf("%d of %d calls submitted a run, not 1", fresh, len(calls))
	}
	if runs := keyedRuns(t, st, tenant, key); len(runs) != 1 || runs[0].ID != calls[0].id {
		t.Fatalf("the store holds %d runs for the key, not just %s", len(runs), calls[0].id)
	}
	return calls[0].id
}

// Sixteen submissions at once with one key and request make one run,
// routed and worked once; a later retry gets it back.
func TestSubmitKeyedConcurrent(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		e.worker("w1")
		in := `{"steps":2,"latency_ms":1,"idempotent":true}`
		o := cluster.SubmitOptions{Input: &in, Key: "order-42"}
		id := checkOnce(t, e.rt.Store, submitKeyedAll(16, o, e.cl), cluster.DefaultTenant, "order-42")
		r := e.waitState(id, cluster.StateDone, 60*time.Second)
		if r.Worker != "w1" {
			t.Fatalf("worked by %q", r.Worker)
		}
		e.exactlyOnce(id, 2)
		again, replayed, err := e.cl.SubmitKeyed(context.Background(), "cluster", o)
		if err != nil || again != id || !replayed {
			t.Fatalf("a retry after the run is done: %s %v %v, want %s replayed", again, replayed, err, id)
		}
	})
}

// Two clusters opened on one store (as two processes are) submit once
// between them: the lock is the store's, not one handle's.
func TestSubmitKeyedTwoClusters(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		rt, err := rath.Open(context.Background(), rath.Config{Home: e.home, Store: e.store})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close() })
		other, err := cluster.Open(context.Background(), rt, cluster.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { other.Close() })
		in := `{"steps":1}`
		o := cluster.SubmitOptions{Input: &in, Key: "k", Tenant: "acme"}
		checkOnce(t, e.rt.Store, submitKeyedAll(8, o, e.cl, other), "acme", "k")
	})
}

// The same key with another request is refused, naming the run; another
// tenant's key is its own; nil and empty needs are one request; the
// request's labels hold the hashes the design names.
func TestSubmitKeyedRequests(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		in, other := `{"steps":1}`, `{"steps":2}`
		o := cluster.SubmitOptions{Input: &in, Key: "k1"}
		id, replayed, err := e.cl.SubmitKeyed(ctx, "cluster", o)
		if err != nil || replayed {
			t.Fatalf("first submission: %s %v %v", id, replayed, err)
		}
		info, err := e.rt.Store.Info(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		body := sha256.Sum256([]byte(`{"input":"{\"steps\":1}","needs":{},"workflow":"cluster"}`))
		if info.Labels[cluster.LabelIdem] != idemHash("default", "k1") || info.Labels[cluster.LabelIdemBody] != hex.EncodeToString(body[:]) {
			t.Fatalf("labels: %v", info.Labels)
		}
		if info.Labels[cluster.LabelRun] == "" || info.Labels[cluster.LabelKind] != "run" {
			t.Fatalf("the run's record is not labelled with its key: %v", info.Labels)
		}

		for what, o2 := range map[string]cluster.SubmitOptions{
			"empty needs":        {Input: &in, Key: "k1", Needs: map[string]string{}},
			"the default tenant": {Input: &in, Key: "k1", Tenant: "default"},
		} {
			again, replayed, err := e.cl.SubmitKeyed(ctx, "cluster", o2)
			if err != nil || again != id || !replayed {
				t.Fatalf("%s: %s %v %v, want %s replayed", what, again, replayed, err, id)
			}
		}
		if again, err := e.cl.Submit(ctx, "cluster", o); err != nil || again != id {
			t.Fatalf("Submit with the key: %s %v, want %s", again, err, id)
		}

		for what, o2 := range map[string]cluster.SubmitOptions{
			"other input": {Input: &other, Key: "k1"},
			"no input":    {Key: "k1"},
			"other needs": {Input: &in, Key: "k1", Needs: map[string]string{"gpu": "1"}},
		} {
			_, _, err := e.cl.SubmitKeyed(ctx, "cluster", o2)
			if !errors.Is(err, cluster.ErrKeyReused) || !strings.Contains(err.Error(), string(id)) {
				t.Fatalf("%s: %v, want ErrKeyReused naming %s", what, err, id)
			}
		}

		id2, replayed, err := e.cl.SubmitKeyed(ctx, "cluster", cluster.SubmitOptions{Input: &other, Key: "k1", Tenant: "acme"})
		if err != nil || replayed || id2 == id {
			t.Fatalf("another tenant's key: %s %v %v", id2, replayed, err)
		}
		if n := len(keyedRuns(t, e.rt.Store, "default", "k1")) + len(keyedRuns(t, e.rt.Store, "acme", "k1")); n != 2 {
			t.Fatalf("%d keyed runs, want 2", n)
		}
		if id3, err := e.cl.Submit(ctx, "cluster", cluster.SubmitOptions{Input: &in}); err != nil || id3 == id {
			t.Fatalf("a submission without a key: %s %v", id3, err)
		}
	})
}

// Keys that are empty, too long or not printable ASCII are refused before
// anything is submitted; SubmitMany takes no keys.
func TestSubmitKeyedBadKeys(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		in := `{"steps":1}`
		for _, key := range []string{"", strings.Repeat("k", 256), "a\x01b", "tab\there", "del\x7f", "ключ"} {
			if _, _, err := e.cl.SubmitKeyed(ctx, "cluster", cluster.SubmitOptions{Input: &in, Key: key}); !errors.Is(err, cluster.ErrBadKey) {
				t.Errorf("key %q: %v, want ErrBadKey", key, err)
			}
		}
		if _, replayed, err := e.cl.SubmitKeyed(ctx, "cluster", cluster.SubmitOptions{Input: &in, Key: strings.Repeat("k", 255)}); err != nil || replayed {
			t.Fatalf("a key of 255 bytes: %v %v", replayed, err)
		}
		if _, err := e.cl.SubmitMany(ctx, "cluster", []cluster.SubmitOptions{{Input: &in, Key: "k"}}); err == nil {
			t.Fatal("SubmitMany took an idempotency key")
		}
		n, err := e.rt.Store.Count(ctx, store.Filter{Labels: map[string]string{cluster.LabelKind: "run"}})
		if err != nil || n != 1 {
			t.Fatalf("%d runs (%v), want the one with a good key", n, err)
		}
	})
}

// Four rath processes submitting under one key at once make one run, and
// each prints its id; another input under the key is a usage error.
func TestSubmitKeyedProcesses(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		const input = `{"steps":1,"latency_ms":1,"idempotent":true}`
		ids := make([]string, 4)
		var wg sync.WaitGroup
		for i := range ids {
			wg.Go(func() {
				out, errOut, code := e.rath("submit", "cluster", "--input", input, "--idempotency-key", "nightly-7")
				if code != 0 {
					t.Errorf("submit %d: exit %d: %s", i, code, errOut)
				}
				ids[i] = strings.TrimSpace(out)
			})
		}
		wg.Wait()
		runs := keyedRuns(t, e.rt.Store, cluster.DefaultTenant, "nightly-7")
		if len(runs) != 1 {
			t.Fatalf("%d runs under the key, want 1", len(runs))
		}
		for _, id := range ids {
			if id != string(runs[0].ID) {
				t.Fatalf("the processes printed %q; the run is %s", ids, runs[0].ID)
			}
		}
		if _, errOut, code := e.rath("submit", "cluster", "--input", `{"steps":2}`, "--idempotency-key", "nightly-7"); code != 2 || !strings.Contains(errOut, string(runs[0].ID)) {
			t.Fatalf("another input under the key: exit %d: %s", code, errOut)
		}
	})
}
