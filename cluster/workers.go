package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// LabelWorker holds a worker session's WorkerInfo as JSON.
const LabelWorker = "rath.cluster.worker"

// WorkerInfo is what a worker says of itself, every heartbeat, on its own
// session in the store.
type WorkerInfo struct {
	ID          string            `json:"id"`
	Session     session.ID        `json:"session"`
	Host        string            `json:"host"`
	PID         int               `json:"pid"`
	Pool        string            `json:"pool"`
	Offers      map[string]string `json:"offers,omitempty"`
	Serves      []string          `json:"serves"`
	Concurrency int               `json:"concurrency"`
	Started     time.Time         `json:"started"`
	Beat        time.Time         `json:"beat"`
	// Runs are runs it works (the first maxListedRuns, by id); Holding
	// counts them all.
	Runs    []session.ID `json:"runs,omitempty"`
	Holding int          `json:"holding"`
	// Lock is the key of the advisory lock it holds while it lives
	// (PostgreSQL; 0 on SQLite).
	Lock int64 `json:"lock,omitempty"`
	// Client is its River client's id, the name River gives its jobs'
	// attempts: the worker's id and when it started, so that a worker
	// started again under the same id does not answer for the jobs of the
	// process before it (empty: the id).
	Client string `json:"client,omitempty"`
	// State is what the worker last said: alive, draining or stopped; the
	// cluster marks it dead when it stops answering.
	State string `json:"state"`
	// Alive is computed when read: the worker is working.
	Alive bool `json:"alive"`
	// Why says why a worker is taken for dead.
	Why string `json:"why,omitempty"`
}

// The states a worker reports.
const (
	workerAlive    = "alive"
	workerDraining = "draining"
	workerStopped  = "stopped"
	workerDead     = "dead"
)

// workers lists the workers that have not ended (their sessions are
// active: a stopped worker's is closed, a dead one's failed once it is
// handed on), each with Alive computed. Ended workers are kept in the store
// but not read here, so a cluster's ticks do not grow with its restarts.
func (c *Cluster) workers(ctx context.Context) ([]WorkerInfo, error) {
	return c.listWorkers(ctx, store.Filter{Labels: map[string]string{LabelKind: "worker"}, Status: []store.Status{store.StatusOpen, store.StatusActive}})
}

// endedShown is how many ended workers Status shows, the latest first.
const endedShown = 16

// recentlyEnded lists the workers that ended last (stopped, or dead and
// handed on).
func (c *Cluster) recentlyEnded(ctx context.Context) ([]WorkerInfo, error) {
	return c.listWorkers(ctx, store.Filter{Labels: map[string]string{LabelKind: "worker"}, Status: []store.Status{store.StatusClosed, store.StatusFailed}, Limit: endedShown})
}

func (c *Cluster) listWorkers(ctx context.Context, f store.Filter) ([]WorkerInfo, error) {
	infos, err := c.rt.Store.List(ctx, f)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	out := make([]WorkerInfo, 0, len(infos))
	for _, info := range infos {
		var w WorkerInfo
		if json.Unmarshal([]byte(info.Labels[LabelWorker]), &w) != nil {
			continue
		}
		w.Alive, w.Why = c.alive(w, now)
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b WorkerInfo) int { return a.Started.Compare(b.Started) })
	return out, nil
}

// alive decides whether w works. On this host the kernel says whether its
// process is gone (dead at once) or runs (a busy worker whose heartbeat
// lags is not taken for dead). A stopped process (SIGSTOP, a debugger) is
// paused, not dead: like a worker on another host, it is dead once its
// heartbeat is silent for DeadAfter — and the reason says it may resume.
func (c *Cluster) alive(w WorkerInfo, now time.Time) (bool, string) {
	switch w.State {
	case workerStopped:
		return false, "stopped"
	case workerDead:
		return false, w.Why
	}
	paused := ""
	if w.Host == c.host && w.PID > 0 {
		switch procState(w.PID) {
		case procGone:
			return false, "its process is gone"
		case procStopped:
			paused = fmt.Sprintf("its process %d is stopped (paused: it may resume) and ", w.PID)
		case procRunning:
			return true, ""
		}
	}
	if silent := now.Sub(w.Beat); silent > c.opts.DeadAfter {
		return false, paused + "silent for " + silent.Round(time.Millisecond).String()
	}
	return true, ""
}

// What the kernel says of a process.
const (
	procUnknown = iota // no procfs: go by the heartbeat
	procRunning
	procStopped
	procGone
)

// procState reads process pid's state: gone (or a zombie, dead but not
// yet waited for by its parent), stopped (SIGSTOP, a debugger), running.
func procState(pid int) int {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return procGone
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procUnknown
	}
	// "pid (comm) state ...": the state follows the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return procUnknown
	}
	switch stat[i+2] {
	case 'Z', 'X', 'x':
		return procGone
	case 'T', 't':
		return procStopped
	}
	return procRunning
}

// liveCache keeps the live workers for a moment, so that submitting many
// runs does not list workers once each.
type liveCache struct {
	mu   sync.Mutex
	at   time.Time
	list []WorkerInfo
}

func (c *Cluster) live(ctx context.Context, cache *liveCache) ([]WorkerInfo, error) {
	cache.mu.Lock()
	defer cache.mu.Unlock()
	if time.Since(cache.at) < c.opts.Heartbeat/2 && cache.list != nil {
		return cache.list, nil
	}
	ws, err := c.workers(ctx)
	if err != nil {
		return nil, err
	}
	live := ws[:0]
	for _, w := range ws {
		if w.Alive && w.State == workerAlive {
			live = append(live, w)
		}
	}
	cache.list, cache.at = live, time.Now()
	return live, nil
}

// client is the River client id that w's jobs' attempts name.
func (w WorkerInfo) client() string {
	if w.Client != "" {
		return w.Client
	}
	return w.ID
}
