package policy

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultReload is how often, at most, Dir looks at a project's file
// again.
const DefaultReload = time.Second

// Dir is a directory of policy files, one per tenant and project:
//
//	<dir>/<tenant>/<project>.json   the project's policy
//	<dir>/<tenant>/default.json     the policy of the tenant's projects without one
//
// An action is decided by the file of its Tenant and Project ("default"
// for either when empty); with neither file — or no directory at all —
// by the built-in rule alone (approve a call to a tool that is not
// idempotent and whose risk is high; allow the rest, rule RuleNone). The
// directory need not exist when it is opened: it is followed whether or
// not it exists, so a file written into it later, or into a directory
// made later, takes effect without reopening. A file is looked at again
// at most every reload interval (DefaultReload) when decisions are asked,
// and reloaded when its size or modification time changed or another file
// now applies.
//
// A file that fails to load is reported (Policy, Check, and the logger of
// WithLogger) with an error naming the file and the rule at fault; the
// reason of a decision, which the run's tenant sees, names the file
// relative to the directory instead, never by the server's path. If the
// same file loaded before, its last good rules stay in force, with the
// built-in rule, until it is fixed: an edit that breaks a file does not
// open or close everything at once. A file that is broken when first seen
// (no good rules of it to keep) denies every action of its projects, with
// the load error as the reason, until it is fixed: fail closed. Dir is
// safe for concurrent use.
type Dir struct {
	root     string
	interval time.Duration
	log      *slog.Logger // nil: say nothing
	mu       sync.RWMutex
	projects map[[2]string]*entry
}

// DirOption adjusts OpenDir.
type DirOption func(*Dir)

// ReloadEvery sets how often, at most, a file is looked at again (d <= 0:
// on every decision).
func ReloadEvery(d time.Duration) DirOption { return func(x *Dir) { x.interval = d } }

// WithLogger has the Dir say on log when a file takes effect and when one
// fails to load (once per change of the file, not per decision).
func WithLogger(log *slog.Logger) DirOption { return func(x *Dir) { x.log = log } }

// OpenDir returns the Dir of policy files under root: a directory, or a
// path where none exists yet (the built-in rule decides until it does).
// A root that exists and is not a directory is an error.
func OpenDir(root string, opts ...DirOption) (*Dir, error) {
	fi, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("policy: %w", err)
	case !fi.IsDir():
		return nil, fmt.Errorf("policy: %s is not a directory", root)
	}
	d := &Dir{root: filepath.Clean(root), interval: DefaultReload, projects: map[[2]string]*entry{}}
	for _, o := range opts {
		o(d)
	}
	return d, nil
}

// Root is the directory's path.
func (d *Dir) Root() string { return d.root }

// entry is the policy in force for one tenant and project.
type entry struct {
	mu sync.Mutex // held while the files are looked at
	st atomic.Pointer[loaded]
}

// loaded is what a look at the files found.
type loaded struct {
	at   time.Time // when
	file string    // the file in force ("" for none)
	size int64
	mod  time.Time
	pol  *Policy // nil: the built-in rule alone (or, with err, deny)
	// err: the file failed to load. With pol, its last good rules are
	// kept; without, every action is denied.
	err error
	// public is err as a decision shows it to the run's tenant: the file
	// named relative to the directory, no server path.
	public string
}

// Decide decides a by the policy of its tenant and project.
func (d *Dir) Decide(ctx context.Context, a Action) (Decision, error) {
	tenant, project := orDefault(a.Tenant), orDefault(a.Project)
	if err := checkName(tenant); err != nil {
		return Denied(RuleLoad, "tenant: "+err.Error()), nil
	}
	if err := checkName(project); err != nil {
		return Denied(RuleLoad, "project: "+err.Error()), nil
	}
	l := d.current(tenant, project)
	if l.err != nil && l.pol == nil {
		return Denied(RuleLoad, l.public), nil
	}
	return l.pol.Decide(ctx, a)
}

// Policy returns the policy in force for a tenant and project (nil: the
// built-in rule alone) and the error its file fails to load with, if it
// does: then the policy is the file's last good rules, kept, or nil when
// it never loaded (every action is denied).
func (d *Dir) Policy(tenant, project string) (*Policy, error) {
	tenant, project = orDefault(tenant), orDefault(project)
	if err := errors.Join(checkName(tenant), checkName(project)); err != nil {
		return nil, err
	}
	l := d.current(tenant, project)
	return l.pol, l.err
}

// Check loads every policy file under the directory and returns the
// errors of those that fail (nil if none does).
func (d *Dir) Check() error {
	files, err := filepath.Glob(filepath.Join(d.root, "*", "*.json"))
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range files {
		if _, err := Load(f); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func orDefault(s string) string {
	if s == "" {
		return "default"
	}
	return s
}

// checkName refuses a tenant or project name that is not one plain file
// name.
func checkName(s string) error {
	if s == "." || s == ".." || strings.ContainsAny(s, `/\`+"\x00") || len(s) > 255 {
		return fmt.Errorf("%q cannot name a policy file", s)
	}
	return nil
}

// current returns what is in force for tenant and project, looking at the
// files again if the interval has passed. While one caller looks, others
// go on with what was in force.
func (d *Dir) current(tenant, project string) *loaded {
	e := d.entry(tenant, project)
	l := e.st.Load()
	if l != nil && time.Since(l.at) < d.interval {
		return l
	}
	if l == nil {
		e.mu.Lock() // the first look: everyone waits for it
	} else if !e.mu.TryLock() {
		return l
	}
	defer e.mu.Unlock()
	if now := e.st.Load(); now != l && now != nil {
		return now // another caller looked meanwhile
	}
	next := d.look(tenant, project, l)
	e.st.Store(next)
	d.report(tenant, project, l, next)
	return next
}

func (d *Dir) entry(tenant, project string) *entry {
	k := [2]string{tenant, project}
	d.mu.RLock()
	e := d.projects[k]
	d.mu.RUnlock()
	if e != nil {
		return e
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if e = d.projects[k]; e == nil {
		e = &entry{}
		d.projects[k] = e
	}
	return e
}

// look finds the file in force for tenant and project and loads it if it
// is not prev's. A file that fails to load keeps the rules it last loaded
// with (prev's, when prev is that file's).
func (d *Dir) look(tenant, project string, prev *loaded) *loaded {
	now := time.Now()
	for _, name := range []string{project, "default"} {
		path := filepath.Join(d.root, tenant, name+".json")
		fi, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return d.failed(prev, &loaded{at: now, file: path, err: fmt.Errorf("policy %s: %w", path, err)})
		}
		if !fi.Mode().IsRegular() {
			return d.failed(prev, &loaded{at: now, file: path, err: fmt.Errorf("policy %s: not a regular file", path)})
		}
		if prev != nil && prev.file == path && prev.size == fi.Size() && prev.mod.Equal(fi.ModTime()) &&
			(prev.err == nil || errors.Is(prev.err, ErrInvalid)) {
			again := *prev
			again.at = now
			return &again
		}
		next := &loaded{at: now, file: path, size: fi.Size(), mod: fi.ModTime()}
		if next.pol, next.err = Load(path); next.err != nil {
			return d.failed(prev, next)
		}
		return next
	}
	return &loaded{at: now}
}

// failed is next, a file that failed to load, with the rules that file
// last loaded with (prev's) kept.
func (d *Dir) failed(prev, next *loaded) *loaded {
	next.public = d.public(next.err)
	next.pol = nil
	if prev != nil && prev.file == next.file {
		next.pol = prev.pol
	}
	return next
}

// report says on the Dir's logger what changed from prev to next.
func (d *Dir) report(tenant, project string, prev, next *loaded) {
	if d.log == nil {
		return
	}
	same := prev != nil && prev.file == next.file && prev.size == next.size && prev.mod.Equal(next.mod) &&
		(prev.err == nil) == (next.err == nil)
	switch {
	case same:
	case next.err != nil && next.pol != nil:
		d.log.Warn("a policy file does not load: its last good rules stay in force until it is fixed",
			"tenant", tenant, "project", project, "err", next.err)
	case next.err != nil:
		d.log.Warn("a policy file does not load: its projects' actions are denied until it is fixed",
			"tenant", tenant, "project", project, "err", next.err)
	case next.file != "":
		d.log.Info("policy in force", "tenant", tenant, "project", project, "file", next.file)
	case prev != nil && prev.file != "":
		d.log.Info("no policy file applies any longer: the built-in rule alone", "tenant", tenant, "project", project)
	}
}
