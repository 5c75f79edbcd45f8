package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Workspace journals. A run placed on a host-local sandbox (local, bwrap)
// keeps its workspace on the host that runs it. So that the run can go on
// elsewhere when that host's workers are gone, each such workspace has a
// journal in the store, a session beside the run: a base entry with every
// file as the workspace was when the run's agent opened it, then an entry
// for each step that changed it — the changed files' contents and the
// deleted paths — appended before that step's results are committed (and
// under the run's fence). A worker on another host rebuilds the workspace
// from the base and the entries whose calls the run's record holds: the
// workspace as of the run's last committed step.

// Labels of a journal session.
const (
	// LabelJournalOf names the run a workspace journal belongs to.
	LabelJournalOf = "rath.cluster.journal-of"
	// LabelSandbox names the sandbox whose workspace it keeps.
	LabelSandbox = "rath.cluster.sandbox"
)

// journalLimit bounds one entry's file contents: a workspace larger than
// this is not journaled, and its run stays on its host.
const journalLimit = 32 << 20

// journaled are the backends whose workspaces a journal can carry: their
// sandboxes are found again by their workspace directory alone.
var journaled = map[string]bool{"local": true, "bwrap": true}

// journalEntry is one entry of a workspace journal.
type journalEntry struct {
	// Kind is "base", "step" or "broken" (the workspace outgrew the
	// journal; Why says how).
	Kind    string        `json:"kind"`
	Backend string        `json:"backend,omitempty"`
	Spec    *session.Spec `json:"spec,omitempty"`
	Calls   []string      `json:"calls,omitempty"`
	Files   []journalFile `json:"files,omitempty"`
	Deleted []string      `json:"deleted,omitempty"`
	// Tree is the workspace's tree hash after the entry.
	Tree string `json:"tree,omitempty"`
	Why  string `json:"why,omitempty"`
}

// journalFile is a file's content (or a symlink's target) and mode.
type journalFile struct {
	Path string      `json:"path"`
	Mode fs.FileMode `json:"mode"`
	Data []byte      `json:"data,omitempty"`
	Link string      `json:"link,omitempty"`
}

// journalPrefix starts every journal entry's note.
const journalPrefix = "workspace journal: "

// journal is a run's runctx.WorkspaceJournal.
type journal struct {
	c   *Cluster
	run session.ID

	mu       sync.Mutex
	sessions map[string]*session.Session // by sandbox id
}

var _ runctx.WorkspaceJournal = (*journal)(nil)

func (c *Cluster) newJournal(run session.ID) *journal {
	return &journal{c: c, run: run, sessions: map[string]*session.Session{}}
}

// find returns the journal of sandbox id, read from the store once; nil if
// it has none.
func (j *journal) find(ctx context.Context, id string) (*session.Session, error) {
	if s := j.sessions[id]; s != nil {
		return s, nil
	}
	infos, err := j.c.rt.Store.List(ctx, store.Filter{Labels: map[string]string{LabelKind: "journal", LabelJournalOf: string(j.run), LabelSandbox: id}, Limit: 1})
	if err != nil || len(infos) == 0 {
		return nil, err
	}
	s, err := j.c.rt.Store.Load(ctx, infos[0].ID)
	if err != nil {
		return nil, err
	}
	j.sessions[id] = s
	return s, nil
}

// Opened implements runctx.WorkspaceJournal: a sandbox opened for the first
// time gets its journal, with the workspace as its base.
func (j *journal) Opened(ctx context.Context, s *session.Session, sb sandbox.Sandbox) error {
	if !journaled[sb.Backend()] {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if old, err := j.find(ctx, sb.ID()); err != nil || old != nil {
		return err
	}
	spec := s.Placement().Spec
	e, err := baseEntry(ctx, sb, spec)
	if err != nil {
		return err
	}
	note, err := e.note()
	if err != nil {
		return err
	}
	js := session.New().Append(session.Note(fmt.Sprintf("workspace journal of sandbox %s of cluster run %s", sb.ID(), j.run))).Append(note)
	st := j.c.rt.Store
	if err := st.Commit(store.WithCreateScope(ctx, runctx.Scope(ctx)), js, ""); err != nil { // the run's workspace: its scope's
		return fmt.Errorf("cluster: journal of %s: %w", sb.ID(), err)
	}
	if err := st.SetLabels(ctx, js.ID(), map[string]string{LabelKind: "journal", LabelJournalOf: string(j.run), LabelSandbox: sb.ID()}); err != nil {
		return fmt.Errorf("cluster: journal of %s: %w", sb.ID(), err)
	}
	j.sessions[sb.ID()] = js
	return nil
}

// Changed implements runctx.WorkspaceJournal: the step's changed files and
// deletions are appended to the sandbox's journal.
func (j *journal) Changed(ctx context.Context, s *session.Session, sb sandbox.Sandbox, calls []string, effects []session.FileEffect) error {
	if !journaled[sb.Backend()] {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	js, err := j.find(ctx, sb.ID())
	if err != nil {
		return err
	}
	if js == nil {
		return fmt.Errorf("cluster: sandbox %s has no journal", sb.ID())
	}
	if last, ok := lastEntry(js); !ok || last.Kind == "broken" {
		return nil // the run stays on its host
	}
	e := journalEntry{Kind: "step", Calls: calls}
	dir := sb.WorkspaceDir()
	seen := map[string]bool{}
	for _, f := range effects {
		p, err := sandbox.Clean(f.Path)
		if err != nil || seen[p] {
			continue
		}
		seen[p] = true
		jf, err := readFile(dir, p)
		var odd *oddFile
		switch {
		case err == nil:
			e.Files = append(e.Files, jf)
		case os.IsNotExist(err):
			e.Deleted = append(e.Deleted, p)
		case errors.As(err, &odd):
			e.Why = odd.Error()
		default:
			return fmt.Errorf("cluster: journal of %s: %w", sb.ID(), err)
		}
	}
	if e.Tree, err = sb.TreeHash(ctx); err != nil {
		return err
	}
	switch {
	case e.Why != "":
		e = journalEntry{Kind: "broken", Why: e.Why}
	case size(e.Files) > journalLimit:
		e = journalEntry{Kind: "broken", Why: fmt.Sprintf("a step wrote %d MB, more than a journal carries (%d MB)", size(e.Files)>>20, journalLimit>>20)}
	}
	note, err := e.note()
	if err != nil {
		return err
	}
	next := js.Append(note)
	if err := j.c.rt.Store.Commit(ctx, next, js.Head()); err != nil {
		return fmt.Errorf("cluster: journal of %s: %w", sb.ID(), err)
	}
	j.sessions[sb.ID()] = next
	return nil
}

// baseEntry is a journal's first entry: every file of sb's workspace, or
// why the workspace is not journaled (a directory of the host's own, one
// too large, one holding what is neither a file nor a symlink).
func baseEntry(ctx context.Context, sb sandbox.Sandbox, spec session.Spec) (journalEntry, error) {
	broken := func(why string) journalEntry {
		return journalEntry{Kind: "broken", Backend: sb.Backend(), Spec: &spec, Why: why}
	}
	if spec.Dir != "" {
		return broken(fmt.Sprintf("its workspace is the directory %s of its host", spec.Dir)), nil
	}
	files, err := readTree(sb.WorkspaceDir())
	var odd *oddFile
	if errors.As(err, &odd) {
		return broken(odd.Error()), nil
	}
	if err != nil {
		return journalEntry{}, err
	}
	if size(files) > journalLimit {
		return broken(fmt.Sprintf("its workspace holds %d MB, more than a journal carries (%d MB)", size(files)>>20, journalLimit>>20)), nil
	}
	e := journalEntry{Kind: "base", Backend: sb.Backend(), Spec: &spec, Files: files}
	if e.Tree, err = sb.TreeHash(ctx); err != nil {
		return journalEntry{}, err
	}
	return e, nil
}

// oddFile: a workspace holds what is neither a file nor a symlink.
type oddFile struct{ path string }

func (o *oddFile) Error() string {
	return fmt.Sprintf("its workspace holds %s, which is neither a file nor a symlink", o.path)
}

func (e journalEntry) note() (session.Chunk, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return session.Chunk{}, err
	}
	return session.Note(journalPrefix + string(b)), nil
}

// entryOf decodes one journal entry.
func entryOf(c session.Chunk) (journalEntry, error) {
	text := ""
	if c.Note != nil {
		text = c.Note.Text
	}
	raw, ok := strings.CutPrefix(text, journalPrefix)
	if !ok {
		return journalEntry{}, fmt.Errorf("not a journal entry")
	}
	var e journalEntry
	err := json.Unmarshal([]byte(raw), &e)
	return e, err
}

// entries decodes a journal's entries.
func entries(js *session.Session) ([]journalEntry, error) {
	var out []journalEntry
	for i, c := range js.All() {
		if i == 0 {
			continue // the title
		}
		e, err := entryOf(c)
		if err != nil {
			return nil, fmt.Errorf("cluster: journal %s: chunk %d: %w", js.ID(), i, err)
		}
		out = append(out, e)
	}
	if len(out) == 0 || out[0].Kind == "step" {
		return nil, fmt.Errorf("cluster: journal %s has no base", js.ID())
	}
	return out, nil
}

// lastEntry decodes a journal's last entry alone (a step must not decode
// the whole journal, file contents and all, again).
func lastEntry(js *session.Session) (journalEntry, bool) {
	if js.Len() < 2 {
		return journalEntry{}, false
	}
	e, err := entryOf(js.Chunk(js.Len() - 1))
	return e, err == nil
}

func size(fs []journalFile) int {
	n := 0
	for _, f := range fs {
		n += len(f.Data)
	}
	return n
}

// readTree reads every file and symlink under dir.
func readTree(dir string) ([]journalFile, error) {
	var out []journalFile
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == dir || d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		f, err := readFile(dir, filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		out = append(out, f)
		return nil
	})
	return out, err
}

// readFile reads one workspace file (a symlink as its target, not
// followed); other kinds of file are refused.
func readFile(dir, rel string) (journalFile, error) {
	path := filepath.Join(dir, filepath.FromSlash(rel))
	fi, err := os.Lstat(path)
	if err != nil {
		return journalFile{}, err
	}
	f := journalFile{Path: rel, Mode: fi.Mode()}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		f.Link, err = os.Readlink(path)
	case fi.Mode().IsRegular():
		f.Data, err = os.ReadFile(path)
	default:
		err = &oddFile{rel}
	}
	return f, err
}

// closeJournals closes the workspace journals of a run that ended (so that
// GC may collect them with the run's other closed sessions). A run that
// was never placed on a journaled sandbox has none.
func (c *Cluster) closeJournals(ctx context.Context, run *Run) {
	if !journaled[run.Placed] {
		return
	}
	infos, err := c.rt.Store.List(ctx, store.Filter{Labels: map[string]string{LabelKind: "journal", LabelJournalOf: string(run.ID)}})
	if err != nil {
		return
	}
	for _, info := range infos {
		_ = store.MoveTo(ctx, c.rt.Store, info.ID, store.StatusClosed)
	}
}
