package local

// rebuildLater starts rebuilding scope s's linked graph from its live
// nodes beside it, unless a rebuild is under way: the new graph is linked
// without the scope's lock while searches, and catch-ups, keep using the
// old one, and it replaces the old one (see swap) once linked. The caller
// holds s.mu; the copy it takes of the live nodes' rows (their vectors are
// shared: a node's vector never changes) costs a pass over the nodes.
func (a *annIndex) rebuildLater(s *scopeIndex) {
	if a.closing.Load() || !s.rebuilding.CompareAndSwap(false, true) {
		return
	}
	old := s.g
	nodes := int32(len(old.keys))
	live := make([]int32, 0, old.live())
	for n := range nodes {
		if !old.dead[n] {
			live = append(live, n)
		}
	}
	keys := make([]int64, len(live))
	vecs := make([][]float32, len(live))
	for i, n := range live {
		keys[i], vecs[i] = old.keys[n], old.vec(n)
	}
	a.rebuilds.Go(func() {
		defer s.rebuilding.Store(false)
		ng := newGraph(old.dims, old.m, old.efBuild)
		ng.keys = make([]int64, 0, len(keys))
		ng.vecs = make([]float32, 0, len(keys)*old.dims)
		for i, key := range keys {
			ng.add(key, vecs[i])
		}
		if !ng.linkAllUnless(a.closing.Load) {
			return
		}
		if a.beforeSwap != nil {
			a.beforeSwap()
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if a.swap(s, old, ng, nodes) && !a.closing.Load() && s.saveDue() {
			a.saveLater(s)
		}
	})
}

// swap makes ng, rebuilt from old's live nodes below node nodes, scope s's
// graph, after applying what changed in old since: a row whose live node
// is newer is put again, a row old no longer holds is removed. If s no
// longer uses old (it was replaced meanwhile), ng is dropped. The caller
// holds s.mu.
func (a *annIndex) swap(s *scopeIndex, old, ng *graph, nodes int32) bool {
	if s.g != old {
		return false
	}
	for key, n := range old.byKey {
		if n >= nodes {
			ng.upsert(key, old.vec(n))
		}
	}
	for key := range ng.byKey {
		if _, ok := old.byKey[key]; !ok {
			ng.remove(key)
		}
	}
	s.g = ng
	s.unsaved.Add(int64(ng.live()) + 1)
	a.stats.rebuilt.Add(1)
	return true
}
