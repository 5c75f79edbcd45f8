package cluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"

	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// ErrCannotMove: a run pinned to its host cannot go on on this one (its
// workspace's journal cannot rebuild it here); the error says why.
var ErrCannotMove = errors.New("cluster: the run cannot move to this host")

// restoreWorkspaces rebuilds, on this host, every workspace the run's
// journals keep, as of the run's last committed step: the base, then each
// step entry whose calls the run's record holds. It fails with
// ErrCannotMove, saying why, when a journal cannot carry its workspace.
func (c *Cluster) restoreWorkspaces(ctx context.Context, run *Run) (int, error) {
	if run.Placed != "" && !journaled[run.Placed] {
		return 0, fmt.Errorf("%w: it is placed on a %s sandbox, which lives on its host", ErrCannotMove, run.Placed)
	}
	st := c.rt.Store
	infos, err := st.List(ctx, store.Filter{Labels: map[string]string{LabelKind: "journal", LabelJournalOf: string(run.ID)}})
	if err != nil || len(infos) == 0 {
		return 0, err
	}
	done, err := c.committedCalls(ctx, run.ID)
	if err != nil {
		return 0, err
	}
	for _, info := range infos {
		js, err := st.Load(ctx, info.ID)
		if err != nil {
			return 0, err
		}
		if err := rebuild(ctx, info.Labels[LabelSandbox], js, done); err != nil {
			return 0, err
		}
	}
	return len(infos), nil
}

// committedCalls are the ids of the tool calls whose results the run's
// sessions hold (as replay.Resume finds them: the input's descendants and
// the sessions labelled with the run).
func (c *Cluster) committedCalls(ctx context.Context, run session.ID) (map[string]bool, error) {
	st := c.rt.Store
	ids, err := st.Descendants(ctx, run)
	if err != nil {
		return nil, err
	}
	labelled, err := st.List(ctx, store.Filter{Labels: map[string]string{runctx.Label: string(run)}})
	if err != nil {
		return nil, err
	}
	for _, info := range labelled {
		if !slices.Contains(ids, info.ID) {
			ids = append(ids, info.ID)
		}
	}
	done := map[string]bool{}
	for _, id := range ids {
		s, err := st.Load(ctx, id)
		if err != nil {
			return nil, err
		}
		for _, ch := range s.All() {
			if ch.ToolResult != nil {
				done[ch.ToolResult.CallID] = true
			}
		}
	}
	return done, nil
}

// rebuild writes sandbox id's workspace from its journal js, keeping the
// step entries whose calls are all in done, and checks the result's tree
// hash against the last entry kept.
func rebuild(ctx context.Context, id string, js *session.Session, done map[string]bool) error {
	es, err := entries(js)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCannotMove, err)
	}
	base := es[0]
	for _, e := range es {
		if e.Kind == "broken" {
			return fmt.Errorf("%w: the workspace of sandbox %s is not journaled: %s", ErrCannotMove, id, e.Why)
		}
	}
	if !journaled[base.Backend] || base.Spec == nil {
		return fmt.Errorf("%w: sandbox %s is a %s sandbox, whose workspace cannot be carried", ErrCannotMove, id, base.Backend)
	}
	if !sandbox.ValidID(id) {
		return fmt.Errorf("%w: %q is not a sandbox id", ErrCannotMove, id)
	}
	if base.Spec.Dir != "" {
		// A directory of the host's own (a checkout, say) is not the
		// cluster's to recreate elsewhere.
		return fmt.Errorf("%w: the workspace of sandbox %s is the directory %s of its host", ErrCannotMove, id, base.Spec.Dir)
	}
	dir, err := sandbox.WorkspaceFor(id, *base.Spec)
	if err != nil {
		return err
	}
	// Whatever this host had of it is stale: start from nothing.
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	want := base.Tree
	if err := apply(root, base); err != nil {
		return err
	}
	for _, e := range es[1:] {
		if !allDone(e.Calls, done) {
			break // written before its step's commit, which did not happen
		}
		if err := apply(root, e); err != nil {
			return err
		}
		want = e.Tree
	}
	w, err := sandbox.OpenWorkspace(dir)
	if err != nil {
		return err
	}
	defer w.CloseWorkspace()
	got, err := w.TreeHash(ctx)
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("%w: the workspace of sandbox %s rebuilt from its journal is %s, its journal says %s", ErrCannotMove, id, got, want)
	}
	return nil
}

func allDone(calls []string, done map[string]bool) bool {
	for _, c := range calls {
		if !done[c] {
			return false
		}
	}
	return len(calls) > 0
}

// apply writes an entry's files and deletions under root (which keeps
// every path inside the workspace).
func apply(root *os.Root, e journalEntry) error {
	for _, p := range e.Deleted {
		if err := root.RemoveAll(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	for _, f := range e.Files {
		if dir := path.Dir(f.Path); dir != "." {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				return err
			}
		}
		if err := root.RemoveAll(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if f.Mode&fs.ModeSymlink != 0 {
			if err := root.Symlink(f.Link, f.Path); err != nil {
				return err
			}
			continue
		}
		if err := root.WriteFile(f.Path, f.Data, f.Mode.Perm()); err != nil {
			return err
		}
		if err := root.Chmod(f.Path, f.Mode.Perm()); err != nil {
			return err
		}
	}
	return nil
}
