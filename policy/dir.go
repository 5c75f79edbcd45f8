package policy

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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
// for either when empty); with neither file, by the built-in rule alone
// (approve a call to a tool that is not idempotent and whose risk is high,
// allow the rest). A file is looked at again at most every reload interval
// (DefaultReload) when decisions are asked, and reloaded when its size or
// modification time changed or another file now applies. A file that
// fails to load — at first or on a reload — denies every action of its
// projects, with the load error as the reason, until it is fixed (the
// policy in force before is not kept: fail closed). Dir is safe for
// concurrent use.
type Dir struct {
	root     string
	interval time.Duration
	mu       sync.RWMutex
	projects map[[2]string]*entry
}

// DirOption adjusts OpenDir.
type DirOption func(*Dir)

// ReloadEvery sets how often, at most, a file is looked at again (d <= 0:
// on every decision).
func ReloadEvery(d time.Duration) DirOption { return func(x *Dir) { x.interval = d } }

// OpenDir returns the Dir of policy files under root, a directory.
func OpenDir(root string, opts ...DirOption) (*Dir, error) {
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("policy: %s is not a directory", root)
	}
	d := &Dir{root: root, interval: DefaultReload, projects: map[[2]string]*entry{}}
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
	pol  *Policy // nil: the built-in rule alone
	err  error   // the file failed to load: deny
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
	if l.err != nil {
		return Denied(RuleLoad, l.err.Error()), nil
	}
	return l.pol.Decide(ctx, a)
}

// Policy returns the policy in force for a tenant and project (nil: the
// built-in rule alone), or the error its file fails to load with.
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
// is not prev's.
func (d *Dir) look(tenant, project string, prev *loaded) *loaded {
	now := time.Now()
	for _, name := range []string{project, "default"} {
		path := filepath.Join(d.root, tenant, name+".json")
		fi, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return &loaded{at: now, file: path, err: fmt.Errorf("policy %s: %w", path, err)}
		}
		if !fi.Mode().IsRegular() {
			return &loaded{at: now, file: path, err: fmt.Errorf("policy %s: not a regular file", path)}
		}
		if prev != nil && prev.file == path && prev.size == fi.Size() && prev.mod.Equal(fi.ModTime()) &&
			(prev.err == nil || errors.Is(prev.err, ErrInvalid)) {
			again := *prev
			again.at = now
			return &again
		}
		pol, err := Load(path)
		return &loaded{at: now, file: path, size: fi.Size(), mod: fi.ModTime(), pol: pol, err: err}
	}
	return &loaded{at: now}
}
