package local

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
)

// graphFile is where scope id's graph for the index's model persists:
// <database>.ann/<scope id>-<hash of the model>.hnsw. Handles of different
// models sharing a database keep different files.
func (a *annIndex) graphFile(id int64) string {
	h := fnv.New64a()
	h.Write([]byte(a.model))
	return filepath.Join(a.dir, fmt.Sprintf("%d-%016x.hnsw", id, h.Sum64()))
}

// load reads scope s's graph from its file, if there is a good one: it
// must be of this database (by its origin id), model and scope, and no
// newer than the log. The caller holds s.mu; on any failure s is left
// unloaded and the reason returned (no file is no failure).
func (a *annIndex) load(ctx context.Context, s *scopeIndex) error {
	path := a.graphFile(s.id)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	g, meta, err := decodeGraph(f, st.Size())
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	origin, err := a.dbOrigin(ctx)
	if err != nil {
		return err
	}
	h, err := head(ctx, a.db)
	switch {
	case err != nil:
		return err
	case meta.origin != origin:
		return fmt.Errorf("%s: %w: the index of another database", path, ErrIndexCorrupt)
	case meta.model != a.model || meta.scope != s.id:
		return fmt.Errorf("%s: %w: holds model %q scope %d", path, ErrIndexCorrupt, meta.model, meta.scope)
	case meta.seq > h:
		return fmt.Errorf("%s: %w: at log position %d, past the log's %d", path, ErrIndexCorrupt, meta.seq, h)
	}
	s.g, s.seq = g, meta.seq
	s.unsaved.Store(0)
	a.stats.loaded.Add(1)
	return nil
}

// saveLater writes scope s's graph in the background, unless a write of it
// is under way.
func (a *annIndex) saveLater(s *scopeIndex) {
	if !s.saving.CompareAndSwap(false, true) {
		return
	}
	a.saves.Go(func() {
		defer s.saving.Store(false)
		if err := a.save(context.Background(), s); err != nil {
			a.stats.saveErr.Store(&err)
		}
	})
}

// save writes scope s's graph to its file (atomically: a temporary file,
// synced, renamed over it), then prunes the change log to logKeep rows
// behind the position saved.
func (a *annIndex) save(ctx context.Context, s *scopeIndex) error {
	s.mu.RLock()
	if s.g == nil || !s.g.linked || (s.g.entry < 0 && len(s.g.keys) > 0) {
		s.mu.RUnlock()
		return nil
	}
	seq := s.seq
	s.unsaved.Store(0)
	err := a.write(s)
	s.mu.RUnlock()
	if err != nil {
		s.unsaved.Add(1) // still unsaved
		return err
	}
	a.stats.saved.Add(1)
	if cut := seq - a.cfg.logKeep; cut > 0 {
		if _, err := a.db.ExecContext(ctx, `DELETE FROM vector_log WHERE seq <= ?`, cut); err != nil {
			return fmt.Errorf("pruning the vector log: %w", err)
		}
	}
	return nil
}

// write encodes scope s's graph (read-locked by the caller) to its file.
func (a *annIndex) write(s *scopeIndex) error {
	if err := os.MkdirAll(a.dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(a.dir, ".saving-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op once renamed
	a.mu.Lock()
	origin := a.origin // read by the load or build that made s.g
	a.mu.Unlock()
	err = encodeGraph(f, s.g, graphMeta{origin: origin, model: a.model, scope: s.id, seq: s.seq})
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, a.graphFile(s.id))
	}
	if err == nil {
		err = syncDir(a.dir)
	}
	return err
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// close waits for background saves, then saves each graph whose file is
// due (see saveDue); a few changes are left to the log. An index that
// cannot be saved costs the next open a catch-up or a rebuild, not an
// entry, so close reports nothing.
func (a *annIndex) close() {
	a.closing.Store(true)
	a.rebuilds.Wait()
	a.saves.Wait()
	a.mu.Lock()
	scopes := make([]*scopeIndex, 0, len(a.scopes))
	for _, s := range a.scopes {
		scopes = append(scopes, s)
	}
	a.mu.Unlock()
	for _, s := range scopes {
		s.mu.RLock()
		due := s.saveDue()
		s.mu.RUnlock()
		if due {
			if err := a.save(context.Background(), s); err != nil {
				a.stats.saveErr.Store(&err)
			}
		}
	}
}
