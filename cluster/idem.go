package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/sqlite"
)

// Idempotent submission. A run submitted with an idempotency key carries,
// on its input session and in the same label write as its record, the
// hash of its tenant and key (LabelIdem) and the hash of its request
// (LabelIdemBody). Submitting again with the same tenant and key finds it:
// the same request gives back the same run, another request is refused
// (ErrKeyReused). The look-up and the submission run under a lock on the
// key, so that of concurrent submissions with one key exactly one creates
// the run: on PostgreSQL a session-level advisory lock, on SQLite a file
// lock beside the database, and in either case a mutex per key in this
// process first.

// Labels of a run submitted with an idempotency key.
const (
	// LabelIdem holds the hex SHA-256 of the run's tenant and idempotency
	// key, tenant + "\x00" + key (so that the store can find the run by
	// them).
	LabelIdem = "rath.cluster.idem"
	// LabelIdemBody holds the hex SHA-256 of the request the key was first
	// used for: the JSON object {"input":…,"needs":{…},"workflow":…}, with
	// keys sorted as json.Marshal writes a map's (input null when none is
	// given, needs {} when none are; "session" only when the run is on
	// one).
	LabelIdemBody = "rath.cluster.idem.body"
)

// DefaultTenant is the tenant of a submission that names none.
const DefaultTenant = "default"

// MaxKeyLen is the longest idempotency key, in bytes.
const MaxKeyLen = 255

var (
	// ErrBadKey: an idempotency key is empty, longer than MaxKeyLen, or
	// not printable ASCII.
	ErrBadKey = errors.New("cluster: bad idempotency key")
	// ErrKeyReused: an idempotency key was used before for another
	// request (another workflow, input or needs) of the same tenant.
	ErrKeyReused = errors.New("cluster: the idempotency key was used for another request")
)

// CheckKey reports whether key is a valid idempotency key: 1 to MaxKeyLen
// bytes of printable ASCII (space to tilde). Its error wraps ErrBadKey.
func CheckKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: it is empty", ErrBadKey)
	}
	if len(key) > MaxKeyLen {
		return fmt.Errorf("%w: it is %d bytes long (at most %d)", ErrBadKey, len(key), MaxKeyLen)
	}
	for i := 0; i < len(key); i++ {
		if b := key[i]; b < 0x20 || b > 0x7e {
			return fmt.Errorf("%w: byte %d (%#02x) is not printable ASCII", ErrBadKey, i, b)
		}
	}
	return nil
}

// SubmitKeyed submits a run as Submit does, once per tenant and
// idempotency key (o.Tenant, o.Key): if a run was submitted with them
// before, it returns that run's id and replayed true, without submitting
// another; if that run's request (workflow name, o.Input, o.Needs) was
// another, it fails with an error wrapping ErrKeyReused. Of concurrent
// calls with one tenant and key, in this process or any other on the same
// store, exactly one submits the run. An invalid key is an error wrapping
// ErrBadKey.
func (c *Cluster) SubmitKeyed(ctx context.Context, name string, o SubmitOptions) (id session.ID, replayed bool, err error) {
	return c.submitKeyedWith(ctx, name, o)
}

// submitKeyedWith is SubmitKeyed whose run carries labels also (key,
// value, ...) in the same write as its record.
func (c *Cluster) submitKeyedWith(ctx context.Context, name string, o SubmitOptions, also ...string) (session.ID, bool, error) {
	k, err := idemOf(name, o)
	if err != nil {
		return "", false, err
	}
	// A retry of a submitted run is answered without building it again.
	if id, found, err := c.replay(ctx, k); found || err != nil {
		return id, found, err
	}
	p, err := c.prepare(ctx, name, o, append([]string{LabelIdem, k.key, LabelIdemBody, k.body}, also...)...)
	if err != nil {
		return "", false, err
	}
	unlock, err := c.lockIdem(ctx, k)
	if err != nil {
		return "", false, fmt.Errorf("cluster: submit %s: the idempotency key's %w", name, err)
	}
	defer unlock()
	if id, found, err := c.replay(ctx, k); found || err != nil {
		return id, found, err
	}
	id, err := c.submitPrepared(ctx, p)
	return id, false, err
}

// idem is a keyed submission's hashes.
type idem struct {
	key  string // LabelIdem's value
	body string // LabelIdemBody's value
	obj  int32  // its advisory lock's second key (PostgreSQL)
}

// idemOf checks o's key and hashes it, with its tenant, and the request.
func idemOf(name string, o SubmitOptions) (idem, error) {
	if err := CheckKey(o.Key); err != nil {
		return idem{}, err
	}
	tenant := o.Tenant
	if tenant == "" {
		tenant = DefaultTenant
	}
	// The key holds no NUL, so the last one splits the scope from the
	// key. (The default project adds nothing: keys made before projects
	// keep their hashes.)
	if sc := scopeOf(o); sc.Project != store.DefaultScope {
		tenant += "\x00" + sc.Project
	}
	key := sha256.Sum256([]byte(tenant + "\x00" + o.Key))
	body, err := requestHash(name, o)
	if err != nil {
		return idem{}, err
	}
	return idem{key: hex.EncodeToString(key[:]), body: body, obj: int32(binary.BigEndian.Uint32(key[:4]))}, nil
}

// requestHash is LabelIdemBody's value for a request: nil and empty needs
// are the same request.
func requestHash(name string, o SubmitOptions) (string, error) {
	needs := o.Needs
	if needs == nil {
		needs = map[string]string{}
	}
	req := map[string]any{"workflow": name, "input": o.Input, "needs": needs}
	if o.Session != "" {
		req["session"] = o.Session // absent otherwise: older keys keep their hashes
	}
	b, err := json.Marshal(req)
	if err != nil {
		return "", fmt.Errorf("cluster: hash the request: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// replay looks for the run submitted with k's tenant and key: found, it
// returns its id, or an error wrapping ErrKeyReused if it was submitted
// for another request.
func (c *Cluster) replay(ctx context.Context, k idem) (session.ID, bool, error) {
	infos, err := c.rt.Store.List(ctx, store.Filter{Labels: map[string]string{LabelKind: "run", LabelIdem: k.key}, Limit: 1})
	if err != nil {
		return "", false, fmt.Errorf("cluster: look up the idempotency key: %w", err)
	}
	if len(infos) == 0 {
		return "", false, nil
	}
	info := infos[0]
	if info.Labels[LabelIdemBody] != k.body {
		return "", true, fmt.Errorf("%w: it submitted run %s", ErrKeyReused, info.ID)
	}
	return info.ID, true, nil
}

// lockIdem takes k's lock: this process's mutex for the key, then the
// store's lock (an advisory lock on PostgreSQL, the submit lock file on
// SQLite). The function it returns releases both.
func (c *Cluster) lockIdem(ctx context.Context, k idem) (func(), error) {
	return c.lockKey(ctx, &c.idem, k.key, storeLock{class: idemLockClass, obj: k.obj, file: ".submit-lock"})
}

// storeLock names a lock in the store: an advisory lock of two int4 keys
// on PostgreSQL, or a flock on the file beside the SQLite database whose
// name ends in file.
type storeLock struct {
	class, obj int32
	file       string
}

// lockKey takes key's mutex in l (this process's), then the store's lock
// sl. The function it returns releases both.
func (c *Cluster) lockKey(ctx context.Context, l *idemLocks, key string, sl storeLock) (func(), error) {
	release, err := l.lock(ctx, key)
	if err != nil {
		return nil, err
	}
	unlock, err := c.lockStore(ctx, l, sl)
	if err != nil {
		release()
		return nil, err
	}
	return func() { unlock(); release() }, nil
}

// lockStore takes the store's lock sl: PostgreSQL's advisory lock, or the
// flock on the SQLite database's lock file.
func (c *Cluster) lockStore(ctx context.Context, l *idemLocks, sl storeLock) (func(), error) {
	if c.pg != nil {
		return c.lockPG(ctx, l, sl)
	}
	if st, ok := c.rt.Store.(*sqlite.Store); ok {
		return lockFile(st.Path() + sl.file)
	}
	return nil, ErrUnsupportedStore
}

// idemLockClass is the first key of the advisory locks keyed submissions
// take (pg_advisory_lock(int4, int4)). pg_locks shows a lock of two int4
// keys with objsubid 2, and one of a bigint key (a worker's, River's
// migration's) with objsubid 1, so the two never meet.
const idemLockClass int32 = 0x69646d70 // "idmp"

// lockPG takes sl's advisory lock on a connection of the store's pool, and
// returns the function that releases it (and the connection). A
// connection that breaks meanwhile frees the lock with it.
func (c *Cluster) lockPG(ctx context.Context, l *idemLocks, sl storeLock) (func(), error) {
	// The holder of a lock also needs a connection for its look-up and
	// its submission: bound the connections held for l's locks, so that
	// the holders never wait for one another's.
	slots := l.slots(max(1, int(c.pg.Pool().Config().MaxConns)/4))
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	conn, err := c.pg.Pool().Acquire(ctx)
	if err != nil {
		<-slots
		return nil, fmt.Errorf("lock: %w", err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1::int4, $2::int4)`, sl.class, sl.obj); err != nil {
		// The lock may have been granted before the error reached us:
		// closing the connection drops it.
		_ = conn.Conn().Close(context.WithoutCancel(ctx))
		conn.Release()
		<-slots
		return nil, fmt.Errorf("lock: %w", err)
	}
	return func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		var ok bool
		err := conn.QueryRow(uctx, `SELECT pg_advisory_unlock($1::int4, $2::int4)`, sl.class, sl.obj).Scan(&ok)
		if err != nil || !ok {
			_ = conn.Conn().Close(uctx)
		}
		conn.Release()
		<-slots
	}, nil
}

// lockFile takes an exclusive flock on the file at path, creating it, and
// returns the function that releases it. Each call opens the file anew,
// so that calls in one process exclude one another as other processes'
// do; a process that dies frees its lock.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// idemLocks are a cluster's keyed submissions in progress: a mutex per
// key, held while the key's submission looks up and submits, and the
// slots that bound the connections held for advisory locks. The zero
// value is ready.
type idemLocks struct {
	mu   sync.Mutex
	keys map[string]*keyMutex
	sem  chan struct{}
}

// keyMutex is a key's mutex (a channel of one, so that a waiter can give
// up with its context) and how many hold or wait for it.
type keyMutex struct {
	ch   chan struct{}
	refs int
}

// lock takes key's mutex, or gives up when ctx ends; the function it
// returns releases it.
func (l *idemLocks) lock(ctx context.Context, key string) (func(), error) {
	m := l.ref(key)
	select {
	case m.ch <- struct{}{}:
	case <-ctx.Done():
		l.unref(key, m)
		return nil, ctx.Err()
	}
	return func() {
		<-m.ch
		l.unref(key, m)
	}, nil
}

// ref returns key's mutex, counting the caller in.
func (l *idemLocks) ref(key string) *keyMutex {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.keys == nil {
		l.keys = map[string]*keyMutex{}
	}
	m := l.keys[key]
	if m == nil {
		m = &keyMutex{ch: make(chan struct{}, 1)}
		l.keys[key] = m
	}
	m.refs++
	return m
}

// unref counts the caller out of key's mutex, forgetting it when no one
// holds or waits for it.
func (l *idemLocks) unref(key string, m *keyMutex) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if m.refs--; m.refs == 0 {
		delete(l.keys, key)
	}
}

// slots returns the semaphore of n slots (made on first use).
func (l *idemLocks) slots(n int) chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sem == nil {
		l.sem = make(chan struct{}, n)
	}
	return l.sem
}
