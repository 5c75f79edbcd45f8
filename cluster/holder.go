package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/openrath/rath/session"
)

// A worker taken for dead may be only paused (SIGSTOP, a frozen VM, a long
// GC pause): once it wakes up it may finish the call it was in, even though
// its run was handed on. So a run remembers the holders that were taken
// for dead while they held it (Run.Displaced), and a review that would run
// such a call again (not happened) waits until none of them may still
// exist: its process gone from its host, its database session ended.

// ErrHolderMayExist: a review would run a call again while a worker that
// was running it may still exist (its process paused, say) and could
// finish it. Wait until it is gone and check the effect again, end it, or
// settle with ReviewOptions.Force.
var ErrHolderMayExist = errors.New("cluster: the run's previous holder may still exist")

// Holder is the worker process that holds a run (or held it).
type Holder struct {
	Worker  string     `json:"worker"`
	Host    string     `json:"host"`
	PID     int        `json:"pid"`
	Session session.ID `json:"session"`
	// Lock is its advisory lock (PostgreSQL; 0 on SQLite).
	Lock int64 `json:"lock,omitempty"`
}

func (h Holder) String() string {
	return fmt.Sprintf("worker %s (host %s, pid %d)", h.Worker, h.Host, h.PID)
}

// HolderState is what can be told of a displaced holder now.
type HolderState struct {
	Holder
	// MayExist: its process may still run (or wake up) and finish a call
	// it was in.
	MayExist bool `json:"may_exist"`
	// Why says how that was told.
	Why string `json:"why"`
}

func (s HolderState) String() string {
	if s.MayExist {
		return fmt.Sprintf("%s may still exist: %s", s.Holder, s.Why)
	}
	return fmt.Sprintf("%s is gone: %s", s.Holder, s.Why)
}

// holderOf is the holder record of a worker.
func holderOf(w WorkerInfo) Holder {
	return Holder{Worker: w.ID, Host: w.Host, PID: w.PID, Session: w.Session, Lock: w.Lock}
}

// holders tells, for each holder, whether it may still exist: on this
// host by its process (gone, stopped, running); elsewhere by its database
// session (the advisory lock it holds while it lives); else by what it
// last said (stopped). What cannot be told is taken as may exist: an
// effect whose outcome is unknown is never guessed.
func (c *Cluster) holders(ctx context.Context, hs []Holder) ([]HolderState, error) {
	if len(hs) == 0 {
		return nil, nil
	}
	held, err := c.heldLocks(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]HolderState, len(hs))
	for i, h := range hs {
		out[i] = HolderState{Holder: h}
		out[i].MayExist, out[i].Why = c.holderExists(ctx, h, held)
	}
	return out, nil
}

func (c *Cluster) holderExists(ctx context.Context, h Holder, held map[int64]bool) (bool, string) {
	if h.Host == c.host && h.PID > 0 {
		switch procState(h.PID) {
		case procGone:
			return false, "its process is gone"
		case procStopped:
			return true, fmt.Sprintf("its process %d is stopped (SIGSTOP, a debugger): it may resume and finish its call", h.PID)
		case procRunning:
			return true, fmt.Sprintf("its process %d still runs on this host", h.PID)
		}
	}
	if held != nil && h.Lock != 0 {
		if held[h.Lock] {
			return true, "its database session still holds its lock: its process lives, or is paused"
		}
		return false, "its database session ended (the lock it holds while it lives is gone)"
	}
	if w, ok := c.workerRecord(ctx, h.Session); ok && w.State == workerStopped {
		return false, "it stopped"
	}
	return true, fmt.Sprintf("it ran on host %s, where nothing from here can tell whether its process still exists", h.Host)
}

// workerRecord reads what a worker last said of itself.
func (c *Cluster) workerRecord(ctx context.Context, s session.ID) (WorkerInfo, bool) {
	if s == "" {
		return WorkerInfo{}, false
	}
	info, err := c.rt.Store.Info(ctx, s)
	if err != nil {
		return WorkerInfo{}, false
	}
	var w WorkerInfo
	if json.Unmarshal([]byte(info.Labels[LabelWorker]), &w) != nil {
		return WorkerInfo{}, false
	}
	return w, true
}

// mayExist says which of ss may still exist, and why, for messages ("" if
// none), and how each would be ended.
func mayExist(ss []HolderState) (string, string) {
	var names, ends []string
	for _, s := range ss {
		if s.MayExist {
			names = append(names, fmt.Sprintf("%s: %s", s.Holder, s.Why))
			ends = append(ends, fmt.Sprintf("kill -KILL %d on host %s", s.PID, s.Host))
		}
	}
	return strings.Join(names, "; "), strings.Join(ends, ", ")
}

// displacedHolder is a holder a run is taken over from, and what the
// cluster said of it.
type displacedHolder struct {
	Holder
	why string
}

// displaced is the holder this worker takes the run from as it was taken
// for dead while it held it (the run was running there), if any: the job
// replaces that worker's (from), or the worker's record says it is dead or
// cannot be read. A holder that is neither (its slice ended with an error
// River retries elsewhere) is not displaced.
func (w *Worker) displaced(ctx context.Context, run *Run, from session.ID) *displacedHolder {
	h := run.Holder
	if run.State != StateRunning || h == nil || h.Session == w.info.Session {
		return nil
	}
	rec, ok := w.c.workerRecord(ctx, h.Session)
	switch {
	case !ok:
		return &displacedHolder{Holder: *h, why: "it stopped answering; its record cannot be read"}
	case rec.State == workerDead:
		return &displacedHolder{Holder: *h, why: "taken for dead: " + rec.Why}
	case from == h.Session:
		return &displacedHolder{Holder: *h, why: "taken for dead"}
	}
	return nil
}

// displace adds h to the run's displaced holders (once).
func (r *Run) displace(h Holder) {
	for _, d := range r.Displaced {
		if d.Session == h.Session {
			return
		}
	}
	r.Displaced = append(r.Displaced, h)
}

// holdersGone returns nil if none of the run's displaced holders may still
// exist; else ErrHolderMayExist naming them and how to go on, unless force
// (then what was forced over, for the record).
func (c *Cluster) holdersGone(ctx context.Context, run *Run, force bool) (string, error) {
	ss, err := c.holders(ctx, run.Displaced)
	if err != nil {
		return "", err
	}
	may, end := mayExist(ss)
	if may == "" {
		return "", nil
	}
	if force {
		var over []string
		for _, s := range ss {
			if s.MayExist {
				over = append(over, s.String())
			}
		}
		c.log.Warn("review forced: a call settled as not happened while a worker that ran it may still exist", "run", run.ID, "holders", may)
		return strings.Join(over, "; "), nil
	}
	return "", fmt.Errorf("%w: %s. It may still make the call's effect: wait until it is gone or end it (%s), look at the effect again, then settle; or settle with --force, knowing that the effect may then happen twice", ErrHolderMayExist, may, end)
}
