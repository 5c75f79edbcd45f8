package rath

import (
	"context"

	"github.com/openrath/rath/session"
)

// liveness is what can be told of a run's owner.
type liveness int

const (
	// unknown: nothing can be told from here (so the owner is not taken
	// for gone).
	unknown liveness = iota
	alive
	dead
)

// runLock is the lock of a run this process owns.
type runLock interface {
	// record is the lock's part of the owner record.
	record() Owner
	// lost is closed if another process took the lock over (nil: never).
	lost() <-chan struct{}
	// release drops the lock.
	release() error
}

// lockRun takes run's lock without waiting (ErrRunLive if it is held, by
// any process, this one included); prev is the run's last owner record, if any. A PostgreSQL
// store's runs are locked on the server; any other's by lock file.
func (r *Runtime) lockRun(ctx context.Context, run session.ID, prev *Owner) (runLock, error) {
	if p, ok := r.Store.(pooled); ok {
		l, err := r.pgOwner(p.Pool()).lock(ctx, run)
		if err != nil {
			return nil, err
		}
		return l, nil
	}
	path, err := lockPath(r.Home, run, prev)
	if err != nil {
		return nil, err
	}
	l, err := lockFileAt(path)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// prober tells whether owners are alive; it reads a PostgreSQL server's
// locks once, for all the owners it is asked about.
type prober struct {
	r  *Runtime
	pg *pgLocks
}

func (p *prober) probe(ctx context.Context, o Owner) (liveness, error) {
	switch o.Lock {
	case LockFile:
		return probeFile(o)
	case LockPostgres:
		pool, ok := p.r.Store.(pooled)
		if !ok {
			return unknown, nil
		}
		if p.pg == nil {
			pg, err := readPGLocks(ctx, pool.Pool())
			if err != nil {
				return unknown, err
			}
			p.pg = pg
		}
		return p.pg.probe(o), nil
	}
	return unknown, nil
}
