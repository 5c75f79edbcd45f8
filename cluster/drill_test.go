package cluster_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/session"
)

// Fault drill: the store (PostgreSQL) stops mid-run and comes back. The
// worker stays up and says so, readiness turns 503 while it is away,
// nothing is reported done that was not committed, and every run finishes
// after the restart with its effects once.
func TestDrillStoreStopsMidRun(t *testing.T) {
	pg := ownPostgres(t)
	home := t.TempDir()
	e := newEnv(t, home, pg.url())
	w := e.worker("w1")
	healthLine := regexp.MustCompile(`health on (http://\S+)/health/ready`)
	// The worker is alive (registered) a moment before it prints where
	// its health is.
	e.waitFor("worker w1's health address", 20*time.Second, func() bool { return healthLine.MatchString(w.out.String()) })
	health := healthLine.FindStringSubmatch(w.out.String())[1] + "/health/ready"
	var ids []session.ID
	for range 4 {
		text := `{"steps":30,"latency_ms":60,"idempotent":true}`
		id, err := e.cl.Submit(context.Background(), "cluster", cluster.SubmitOptions{Input: &text})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	e.waitFor("effects", 30*time.Second, func() bool { return len(e.effectCounts()) >= 8 })
	pg.stop()
	e.waitFor("readiness 503", 20*time.Second, func() bool { return status(health) == http.StatusServiceUnavailable })
	if got := status(health[:len(health)-len("ready")] + "live"); got != http.StatusOK {
		t.Fatalf("live while the store is away: %d", got)
	}
	time.Sleep(2 * time.Second)
	pg.start()
	e.waitFor("readiness 200", 30*time.Second, func() bool { return status(health) == http.StatusOK })
	for _, id := range ids {
		r := e.waitState(id, cluster.StateDone, 90*time.Second)
		out, err := e.rt.Store.Load(context.Background(), r.Output)
		if err != nil {
			t.Fatalf("run %s reported done, but its output is not stored: %v", id, err)
		}
		if n := results(out); n != 30 {
			t.Fatalf("run %s done with %d tool results", id, n)
		}
		e.exactlyOnce(id, 30)
		e.verify(id)
	}
	if !regexp.MustCompile(`store unreachable; retrying`).MatchString(w.out.String()) {
		t.Fatalf("the worker did not say the store was away:\n%s", w.out.String())
	}
}

func results(s *session.Session) int {
	n := 0
	for _, c := range s.All() {
		if c.ToolResult != nil {
			n++
		}
	}
	return n
}

func status(url string) int {
	c := http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A worker started while its store is unreachable retries with backoff,
// says so, and works once the store is there.
func TestDrillStoreUnreachableAtStart(t *testing.T) {
	pg := ownPostgres(t)
	pg.stop()
	home := t.TempDir()
	e := &env{t: t, home: home, store: pg.url(), effects: home + "/effects.log", workers: map[string]*proc{}}
	p := e.start(rathBin, "early", append([]string{"worker", "--id", "early"}, fast...)...)
	t.Cleanup(p.kill)
	deadline := time.Now().Add(20 * time.Second)
	for !regexp.MustCompile(`store unreachable .*retrying in`).MatchString(p.out.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("no retry message:\n%s", p.out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	pg.start()
	deadline = time.Now().Add(30 * time.Second)
	for !regexp.MustCompile(`worker early: pool`).MatchString(p.out.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("the worker did not start after the store came:\n%s", p.out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	full := newEnv(t, home, pg.url())
	full.workers["early"] = p
	e.mu.Lock()
	delete(e.workers, "early")
	e.mu.Unlock()
	id := full.submit(`{"steps":2,"latency_ms":1,"idempotent":true}`)
	full.waitState(id, cluster.StateDone, 30*time.Second)
}

// River's tables missing from the store's database are created at start
// (under a lock), so the first command of any process just works.
func TestRiverTablesCreatedAtStart(t *testing.T) {
	url := freshDB(t)
	home := t.TempDir()
	e := &env{t: t, home: home, store: url, workers: map[string]*proc{}}
	// The store exists (rath ls creates its schema) but River's tables do not.
	if _, errOut, code := e.rath("ls"); code != 0 {
		t.Fatalf("ls: %d %s", code, errOut)
	}
	if riverTables(t, url) != 0 {
		t.Fatal("River's tables exist before any cluster command")
	}
	out, errOut, code := e.rath("status")
	if code != 0 || !strings.Contains(out, "WORKERS") {
		t.Fatalf("status on a database without River's tables: %d %s %s", code, out, errOut)
	}
	if riverTables(t, url) == 0 {
		t.Fatal("status did not create River's tables")
	}
}

func riverTables(t *testing.T, url string) int {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_name LIKE 'river_%'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
