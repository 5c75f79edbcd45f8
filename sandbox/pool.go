package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/openrath/rath/session"
)

// Pool opens the sandboxes sessions are placed on (session.To records the
// placement; nothing opens until a tool needs it). It opens a placement's
// sandbox on first use, exactly once however many goroutines ask at once;
// records the opened sandbox's id and workspace tree hash in the session;
// reattaches a recorded sandbox by id after a restart where the backend
// can; gives forks their own cloned workspace; and closes a sandbox when
// its last lease is released.
//
// Sandboxes of a Provider (a remote service) outlive their leases: Close
// releases every one the pool created, as the backend is configured to
// (kill, pause or keep), unless KeepRemote was called.
type Pool struct {
	mu      sync.Mutex
	slots   map[string]*slot
	created map[string]string // provider sandbox id -> backend
	keep    bool
	notify  func(ctx context.Context, backend, id string)
}

type slot struct {
	ready chan struct{} // closed once opening ended
	sb    Sandbox
	err   error
	refs  int
}

// NewPool returns an empty pool.
func NewPool() *Pool { return &Pool{slots: map[string]*slot{}, created: map[string]string{}} }

// KeepRemote makes Close leave the remote sandboxes the pool created
// running: their sessions go on elsewhere (a cluster worker's runs), and
// whoever ends the sessions ends them (see ReleaseRemote).
func (p *Pool) KeepRemote() {
	p.mu.Lock()
	p.keep = true
	p.mu.Unlock()
}

// Notify has fn called whenever the pool creates a sandbox on a Provider,
// with the context of the Acquire or Fork that did (a cluster worker
// records it on the run, to release it when the run ends).
func (p *Pool) Notify(fn func(ctx context.Context, backend, id string)) {
	p.mu.Lock()
	p.notify = fn
	p.mu.Unlock()
}

// PlacementAttacher is a backend that reattaches a placement as a whole:
// a remote backend re-creates a sandbox from the placement's snapshot
// when the sandbox itself is gone.
type PlacementAttacher interface {
	AttachPlacement(ctx context.Context, pl session.Placement) (Sandbox, error)
}

// remoteOf returns where a sandbox lives if it is remote.
func remoteOf(sb Sandbox) *session.Remote {
	if r, ok := sb.(interface{ Remote() session.Remote }); ok {
		rem := r.Remote()
		return &rem
	}
	return nil
}

// ErrNoPlacement: the session was never placed (see session.To).
var ErrNoPlacement = errors.New("sandbox: the session has no placement")

// Lease is a use of a pooled sandbox; Release it when done.
type Lease struct {
	Sandbox
	once    sync.Once
	release func()
}

// Release gives the lease back; the last one closes the sandbox.
func (l *Lease) Release() { l.once.Do(l.release) }

// key names the sandbox a placement stands for: its id once opened, else
// the session's own (not yet opened) sandbox.
func key(s *session.Session, pl session.Placement) string {
	if pl.SandboxID != "" {
		return pl.Backend + "/" + pl.SandboxID
	}
	return pl.Backend + "/session:" + string(s.ID())
}

// Acquire returns a lease on the sandbox s is placed on. If this call
// opened (or reattached) it and s does not record its id yet, the returned
// session is s with a placement chunk recording the sandbox id and the
// workspace tree hash; otherwise it is s.
func (p *Pool) Acquire(ctx context.Context, s *session.Session) (*Lease, *session.Session, error) {
	pl := s.Placement()
	if pl.Backend == "" {
		return nil, s, fmt.Errorf("%w: %s", ErrNoPlacement, s.ID())
	}
	k := key(s, pl)
	p.mu.Lock()
	sl := p.slots[k]
	opener := sl == nil
	if opener {
		sl = &slot{ready: make(chan struct{})}
		p.slots[k] = sl
	}
	sl.refs++
	p.mu.Unlock()
	if opener {
		sl.sb, sl.err = p.openPlaced(WithSession(ctx, s.ID()), pl)
		close(sl.ready)
	} else {
		select {
		case <-sl.ready:
		case <-ctx.Done():
			p.release(k, sl)
			return nil, s, ctx.Err()
		}
	}
	if sl.err != nil {
		err := sl.err
		p.release(k, sl)
		return nil, s, err
	}
	out := s
	if pl.SandboxID == "" || pl.SandboxID != sl.sb.ID() {
		rec := pl
		if pl.SandboxID != "" {
			rec.ClonedFrom = pl.SandboxID // re-created from its snapshot
		}
		rec.SandboxID = sl.sb.ID()
		rec.Remote = remoteOf(sl.sb)
		h, err := sl.sb.TreeHash(ctx)
		if err != nil {
			p.release(k, sl)
			return nil, s, err
		}
		rec.TreeHash = h
		out = s.Append(session.Of(&rec))
		// The recorded session finds the same sandbox under its id.
		p.mu.Lock()
		if _, taken := p.slots[key(out, rec)]; !taken {
			p.slots[key(out, rec)] = sl
		}
		p.mu.Unlock()
	}
	return &Lease{Sandbox: sl.sb, release: func() { p.release(k, sl) }}, out, nil
}

func (p *Pool) openPlaced(ctx context.Context, pl session.Placement) (Sandbox, error) {
	b, err := Lookup(pl.Backend)
	if err != nil {
		return nil, err
	}
	if pl.SandboxID != "" {
		var sb Sandbox
		if pa, ok := b.(PlacementAttacher); ok {
			sb, err = pa.AttachPlacement(ctx, pl)
		} else {
			sb, err = b.Attach(ctx, pl.SandboxID, pl.Spec)
		}
		if err != nil {
			return nil, fmt.Errorf("reattach %s sandbox %s: %w", pl.Backend, pl.SandboxID, err)
		}
		if sb.ID() != pl.SandboxID {
			p.track(ctx, b, pl.Backend, sb)
		}
		return sb, nil
	}
	sb, err := b.Open(ctx, pl.Spec)
	if err != nil {
		return nil, err
	}
	p.track(ctx, b, pl.Backend, sb)
	return sb, nil
}

// track notes a sandbox the pool created on a Provider.
func (p *Pool) track(ctx context.Context, b Backend, name string, sb Sandbox) {
	if _, ok := b.(Provider); !ok {
		return
	}
	p.mu.Lock()
	p.created[sb.ID()] = name
	notify := p.notify
	p.mu.Unlock()
	if notify != nil {
		notify(ctx, name, sb.ID())
	}
}

// release drops one reference; the last closes the sandbox and forgets it
// under every key.
func (p *Pool) release(k string, sl *slot) {
	p.mu.Lock()
	sl.refs--
	last := sl.refs == 0
	if last {
		for kk, v := range p.slots {
			if v == sl {
				delete(p.slots, kk)
			}
		}
	}
	p.mu.Unlock()
	if last && sl.sb != nil {
		_ = sl.sb.Close()
	}
}

// Fork places child, a fork of parent, on its own sandbox: a clone of the
// parent's workspace as it is now (the parent's sandbox is opened if it was
// not). The returned session is child with a placement chunk recording the
// clone's id, the source's tree hash and the sandbox it was cloned from.
// With share, the child is placed on the parent's sandbox itself instead.
func (p *Pool) Fork(ctx context.Context, parent, child *session.Session, share bool) (*session.Session, error) {
	lease, parent, err := p.Acquire(ctx, parent)
	if err != nil {
		return nil, err
	}
	defer lease.Release()
	pl := parent.Placement()
	if share {
		return child.Append(session.Of(&pl)), nil
	}
	src, err := lease.TreeHash(ctx)
	if err != nil {
		return nil, err
	}
	ctx = WithSession(ctx, child.ID())
	cl, err := lease.Clone(ctx)
	if err != nil {
		return nil, err
	}
	if b, err := Lookup(pl.Backend); err == nil {
		p.track(ctx, b, pl.Backend, cl)
	}
	rec := session.Placement{Backend: pl.Backend, Spec: pl.Spec, SandboxID: cl.ID(), TreeHash: src, ClonedFrom: pl.SandboxID, Remote: remoteOf(cl)}
	if rec.Remote == nil {
		rec.Spec.Dir = cl.WorkspaceDir() // a remote clone's workspace is where its source's is
	}
	// The clone waits in the pool for the child's first Acquire.
	out := child.Append(session.Of(&rec))
	p.mu.Lock()
	p.slots[key(out, rec)] = &slot{ready: closedChan(), sb: cl}
	p.mu.Unlock()
	return out, nil
}

func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// Close closes every sandbox the pool holds, then releases the remote
// sandboxes it created (unless KeepRemote).
func (p *Pool) Close() error {
	err := p.closeAll()
	p.mu.Lock()
	created, keep := p.created, p.keep
	p.created = map[string]string{}
	p.mu.Unlock()
	if keep {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	errs := []error{err}
	for id, name := range created {
		errs = append(errs, ReleaseRemote(ctx, name, id))
	}
	return errors.Join(errs...)
}

// ReleaseRemote releases a remote sandbox by backend and id, as the
// backend is configured to; a backend that is not a Provider has nothing
// to release.
func ReleaseRemote(ctx context.Context, backend, id string) error {
	pr, err := ProviderOf(backend)
	if err != nil || pr == nil {
		return err
	}
	if err := pr.Release(ctx, id); err != nil {
		return fmt.Errorf("releasing %s sandbox %s: %w", backend, id, err)
	}
	return nil
}

// PauseRemote pauses a remote sandbox by backend and id; a backend that
// is not a Provider has nothing to pause.
func PauseRemote(ctx context.Context, backend, id string) error {
	pr, err := ProviderOf(backend)
	if err != nil || pr == nil {
		return err
	}
	if err := pr.Pause(ctx, id); err != nil {
		return fmt.Errorf("pausing %s sandbox %s: %w", backend, id, err)
	}
	return nil
}

func (p *Pool) closeAll() error {
	p.mu.Lock()
	seen := map[*slot]bool{}
	var all []*slot
	for _, sl := range p.slots {
		if !seen[sl] {
			seen[sl] = true
			all = append(all, sl)
		}
	}
	p.slots = map[string]*slot{}
	p.mu.Unlock()
	var errs []error
	for _, sl := range all {
		<-sl.ready
		if sl.sb != nil {
			errs = append(errs, sl.sb.Close())
		}
	}
	return errors.Join(errs...)
}
