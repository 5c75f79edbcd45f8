package rath

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// StatusInterrupted is the status shown for the sessions of a run that
// stopped unfinished because its process died: the run's input session
// (the run's id), still open or active in the store, whose owner (Owner)
// is gone, and the unfinished sessions its agents committed. It is not a
// stored status — the store still says open or active — but a judgement
// made when asked; Resume finishes such a run.
//
// A run the runtime did not start (flow.Run called by a program of its
// own, a cluster run, whose workers take it over) has no owner record and
// is never judged so.
const StatusInterrupted store.Status = "interrupted"

// unfinished reports whether a session in status s may still be worked on.
func unfinished(s store.Status) bool {
	return s == store.StatusOpen || s == store.StatusActive || s == store.StatusPaused
}

// runState is a run the runtime started, as the store shows it, and what
// can be told of its owner.
type runState struct {
	info     store.Info // of the run's input session
	workflow string
	input    *string
	owner    Owner
	live     liveness
}

// parseRun reads the run record in an input session's labels.
func parseRun(info store.Info) (runState, error) {
	o, ok, err := ownerOf(info.Labels)
	if err != nil {
		return runState{}, fmt.Errorf("rath: run %s: %w", info.ID, err)
	}
	if !ok {
		return runState{}, notARun(info)
	}
	st := runState{info: info, workflow: info.Labels[RunWorkflowLabel], owner: o}
	if raw, ok := info.Labels[RunInputLabel]; ok {
		var in string
		if err := json.Unmarshal([]byte(raw), &in); err != nil {
			return runState{}, fmt.Errorf("rath: run %s: the %s label is malformed: %w", info.ID, RunInputLabel, err)
		}
		st.input = &in
	}
	return st, nil
}

// notARun is ErrNotARun for a session, saying what it is instead where
// that helps.
func notARun(info store.Info) error {
	for k := range info.Labels {
		if strings.HasPrefix(k, "rath.cluster.") {
			return runErr(info.ID, ErrNotARun, "session %s belongs to the cluster, whose workers take its runs over (see rath status)", info.ID)
		}
	}
	return runErr(info.ID, ErrNotARun, "session %s is not a run started by rath run, nor one of its sessions", info.ID)
}

// runIDOf is the run a session belongs to: itself when it carries an
// owner record, else the run its runctx.Label names ("" if none).
func runIDOf(id session.ID, labels map[string]string) session.ID {
	if labels[OwnerLabel] != "" {
		return id
	}
	return session.ID(labels[runctx.Label])
}

// judge reads run info's record and, if it is unfinished, tells whether
// its owner is alive. An owner found gone is confirmed on a fresh read of
// the run: one that finished (or was taken over) since info was read is
// not gone.
func (r *Runtime) judge(ctx context.Context, p *prober, info store.Info) (runState, error) {
	for tries := 0; ; tries++ {
		st, err := parseRun(info)
		if err != nil || !unfinished(info.Status) {
			return st, err
		}
		st.live, err = p.probe(ctx, st.owner)
		if st.live != dead || tries == 2 {
			return st, err
		}
		again, err := r.Store.Info(ctx, info.ID)
		if err != nil {
			return st, err
		}
		if again.Status == info.Status && again.Labels[OwnerLabel] == info.Labels[OwnerLabel] {
			return st, nil
		}
		info, p.pg = again, nil
	}
}

// runFor finds the run session id belongs to: id itself, or the run its
// runctx.Label names.
func (r *Runtime) runFor(ctx context.Context, id session.ID) (store.Info, error) {
	info, err := r.Store.Info(ctx, id)
	if err != nil {
		return store.Info{}, err
	}
	run := runIDOf(id, info.Labels)
	if run == "" {
		return store.Info{}, notARun(info)
	}
	if run == id {
		return info, nil
	}
	rinfo, err := r.Store.Info(ctx, run)
	if errors.Is(err, store.ErrNotFound) {
		return store.Info{}, notARun(info)
	}
	if err != nil {
		return store.Info{}, err
	}
	if _, ok, _ := ownerOf(rinfo.Labels); !ok {
		return store.Info{}, notARun(rinfo)
	}
	return rinfo, nil
}

// Statuses returns the status of each session as a person should read
// it: the stored one, or StatusInterrupted for an unfinished session of a
// run whose owner is gone. A session whose run's owner cannot be checked
// from here keeps its stored status; checking never fails the listing.
func (r *Runtime) Statuses(ctx context.Context, infos []store.Info) []store.Status {
	out := make([]store.Status, len(infos))
	known := make(map[session.ID]store.Info, len(infos))
	for _, i := range infos {
		known[i.ID] = i
	}
	judged := map[session.ID]bool{}
	p := &prober{r: r}
	for i, info := range infos {
		out[i] = info.Status
		if !unfinished(info.Status) {
			continue
		}
		run := runIDOf(info.ID, info.Labels)
		if run == "" {
			continue
		}
		gone, ok := judged[run]
		if !ok {
			gone = r.gone(ctx, p, run, known)
			judged[run] = gone
		}
		if gone {
			out[i] = StatusInterrupted
			if run == info.ID && info.Labels[ReviewLabel] != "" {
				out[i] = StatusNeedsReview
			}
		}
	}
	return out
}

// gone reports whether run is a run the runtime started, unfinished, whose
// owner is gone.
func (r *Runtime) gone(ctx context.Context, p *prober, run session.ID, known map[session.ID]store.Info) bool {
	info, ok := known[run]
	if !ok {
		var err error
		if info, err = r.Store.Info(ctx, run); err != nil {
			return false
		}
	}
	st, err := r.judge(ctx, p, info)
	return err == nil && st.live == dead && unfinished(st.info.Status)
}
