package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/openrath/rath/client"
	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/session"
)

// clusterOps is what the cluster's commands (submit, status, cancel,
// approve, pending, review) do: on the cluster of the runtime's store, or
// through an Agent Server when the CLI is given --server, so that a person
// drives a remote cluster with the same commands as a local one.
type clusterOps interface {
	Submit(ctx context.Context, name string, o cluster.SubmitOptions) (session.ID, error)
	// Report is the workers, the pools and the newest runs (limit; 0: all).
	Report(ctx context.Context, limit int) (*cluster.Report, error)
	// RunStatus is one run and its routing decisions and ledger notes.
	RunStatus(ctx context.Context, id session.ID) (*cluster.Run, []session.Chunk, error)
	Cancel(ctx context.Context, id session.ID, by, reason string) error
	Approve(ctx context.Context, id session.ID, approve bool, by, reason string) error
	Pending(ctx context.Context) ([]cluster.Run, error)
	Review(ctx context.Context, id session.ID, o cluster.ReviewOptions) error
	Close() error
}

// ops opens the cluster the commands act on: the server's with --server
// (or RATH_SERVER), else the runtime's.
func (a *app) ops(ctx context.Context) (clusterOps, error) {
	url := a.serverURL
	if url == "" {
		url = os.Getenv("RATH_SERVER")
	}
	if url == "" {
		cl, err := a.cluster(ctx, cluster.Options{})
		if err != nil {
			return nil, err
		}
		return auditedOps{localOps{cl}, a}, nil
	}
	token := a.serverToken
	if token == "" {
		token = os.Getenv("RATH_SERVER_TOKEN")
	}
	c, err := client.New(url, client.WithToken(token))
	if err != nil {
		return nil, usageErr("--server: %v", err)
	}
	return remoteOps{c}, nil
}

// localOps is the cluster of the runtime's store.
type localOps struct{ *cluster.Cluster }

func (l localOps) Report(ctx context.Context, limit int) (*cluster.Report, error) {
	return l.Status(ctx, cluster.StatusOptions{Limit: limit})
}

// remoteOps is a cluster behind an Agent Server.
type remoteOps struct{ c *client.Client }

func (r remoteOps) Close() error { return nil }

func (r remoteOps) Submit(ctx context.Context, name string, o cluster.SubmitOptions) (session.ID, error) {
	run, err := r.c.SubmitRun(ctx, client.RunRequest{Workflow: name, Input: o.Input, Needs: o.Needs, Key: o.Key, Session: o.Session})
	if err != nil {
		return "", err
	}
	return run.ID, nil
}

// reportRuns bounds the runs a remote report reads when it is not given a
// limit.
const reportRuns = 1000

func (r remoteOps) Report(ctx context.Context, limit int) (*cluster.Report, error) {
	rep := &cluster.Report{}
	ws, err := r.c.Workers(ctx)
	if err != nil {
		return nil, err
	}
	qs, err := r.c.Queues(ctx)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = reportRuns
	}
	var runs []client.Run
	for run, err := range r.c.Runs(ctx, client.RunFilter{}) {
		if err != nil {
			return nil, err
		}
		if runs = append(runs, run); len(runs) == limit {
			break
		}
	}
	for _, conv := range []struct{ from, to any }{{ws, &rep.Workers}, {qs, &rep.Pools}, {runs, &rep.Runs}} {
		if err := convert(conv.from, conv.to); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

func (r remoteOps) RunStatus(ctx context.Context, id session.ID) (*cluster.Run, []session.Chunk, error) {
	got, err := r.c.Run(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	var run cluster.Run
	if err := convert(got, &run); err != nil {
		return nil, nil, err
	}
	var history []session.Chunk
	for ch, err := range r.c.Chunks(ctx, id) {
		if err != nil {
			return nil, nil, err
		}
		if ch.Decision != nil && strings.HasPrefix(ch.Decision.Selector, "cluster.") {
			history = append(history, ch)
		}
	}
	if run.Ledger != "" {
		first := true
		for ch, err := range r.c.Chunks(ctx, run.Ledger) {
			if err != nil {
				return nil, nil, err
			}
			if !first {
				history = append(history, ch)
			}
			first = false
		}
	}
	return &run, history, nil
}

func (r remoteOps) Cancel(ctx context.Context, id session.ID, by, reason string) error {
	_, err := r.c.CancelRun(ctx, id, by, reason)
	return err
}

func (r remoteOps) Approve(ctx context.Context, id session.ID, approve bool, by, reason string) error {
	_, err := r.c.Decide(ctx, id, client.Verdict{Approve: approve, By: by, Reason: reason})
	return err
}

func (r remoteOps) Pending(ctx context.Context) ([]cluster.Run, error) {
	var out []cluster.Run
	for _, state := range []string{"waiting_approval", "needs_review"} {
		var runs []client.Run
		for run, err := range r.c.Runs(ctx, client.RunFilter{State: state}) {
			if err != nil {
				return nil, err
			}
			runs = append(runs, run)
		}
		var these []cluster.Run
		if err := convert(runs, &these); err != nil {
			return nil, err
		}
		out = append(out, these...)
	}
	return out, nil
}

func (r remoteOps) Review(ctx context.Context, id session.ID, o cluster.ReviewOptions) error {
	_, err := r.c.ReviewRun(ctx, id, client.Review{Verdict: o.Verdict, Result: o.Result, Call: o.CallID, By: o.By, Reason: o.Reason, Force: o.Force})
	return err
}

// convert moves the API's view of a value into the cluster's type by its
// JSON, which the two share.
func convert(from, to any) error {
	b, err := json.Marshal(from)
	if err == nil {
		err = json.Unmarshal(b, to)
	}
	if err != nil {
		return fmt.Errorf("the server's answer does not read as the cluster's: %w", err)
	}
	return nil
}

// remote reports whether the cluster's commands go to a server.
func (a *app) remote() bool { return a.serverURL != "" || os.Getenv("RATH_SERVER") != "" }
