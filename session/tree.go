package session

import "sync/atomic"

// The chunks of a session live in a 32-way trie whose slots are written at
// most once (nil -> entry) and never changed after. A session is a view
// (root, depth, n) of the first n slots, so:
//
//   - Fork and ForkAt copy the view: O(1), nothing else is allocated.
//   - Append claims slot n with a compare-and-swap. If the slot is free, the
//     new session shares the whole trie with the old one. If another session
//     already claimed it (two forks appending different chunks), Append copies
//     only the path to slot n — at most 32 pointers per level, four levels for
//     a million chunks — and never the prefix itself.
//   - Readers of slots below n need no locks: those slots were written before
//     the view that covers them was published.
//
// Chunks beyond a view's n stay reachable while any view shares the trie;
// that is the price of O(1) forks.

const (
	trieBits  = 5
	trieWidth = 1 << trieBits
	trieMask  = trieWidth - 1
)

// entry is a sealed chunk plus facts about the chain up to and including it.
// Because a chunk id covers its whole chain, these facts are determined by the
// entry itself and can be shared by every view that contains it.
type entry struct {
	Chunk
	usage     *Usage     // cumulative usage through this chunk
	placement *Placement // latest placement through this chunk, or nil
}

type node struct {
	kids [trieWidth]atomic.Pointer[node]  // branches
	ents [trieWidth]atomic.Pointer[entry] // leaves
}

type tree struct {
	root  *node
	shift uint // trieBits * (levels - 1)
	n     int
}

func (t tree) capacity() int { return 1 << (t.shift + trieBits) }

// leaf returns the leaf node holding index i < t.n.
func (t tree) leaf(i int) *node {
	nd := t.root
	for s := t.shift; s > 0; s -= trieBits {
		nd = nd.kids[(i>>s)&trieMask].Load()
	}
	return nd
}

func (t tree) get(i int) *entry { return t.leaf(i).ents[i&trieMask].Load() }

// push returns the view with e appended at index t.n.
func (t tree) push(e *entry) tree {
	if t.root == nil {
		r := &node{}
		r.ents[0].Store(e)
		return tree{root: r, n: 1}
	}
	if t.n == t.capacity() {
		// Full: a new root one level up, private to the new view.
		r := &node{}
		r.kids[0].Store(t.root)
		t = tree{root: r, shift: t.shift + trieBits, n: t.n}
	}
	if t.claim(e) {
		return tree{root: t.root, shift: t.shift, n: t.n + 1}
	}
	return t.copyPath(e)
}

// claim tries to store e in slot t.n of the shared trie. It succeeds if the
// slot was free, or already holds a chunk with the same id (an identical
// append on another branch, which is safe to share).
func (t tree) claim(e *entry) bool {
	i := t.n
	nd := t.root
	for s := t.shift; s > 0; s -= trieBits {
		slot := &nd.kids[(i>>s)&trieMask]
		next := slot.Load()
		if next == nil {
			fresh := &node{}
			if !slot.CompareAndSwap(nil, fresh) {
				fresh = slot.Load()
			}
			next = fresh
		}
		nd = next
	}
	slot := &nd.ents[i&trieMask]
	if slot.CompareAndSwap(nil, e) {
		return true
	}
	return slot.Load().ID == e.ID
}

// copyPath builds a private path to slot t.n holding e, copying from each
// node on the old path only the slots below the new index.
func (t tree) copyPath(e *entry) tree {
	i := t.n
	var build func(old *node, shift uint) *node
	build = func(old *node, shift uint) *node {
		nn := &node{}
		idx := (i >> shift) & trieMask
		if shift == 0 {
			if old != nil {
				for j := range idx {
					nn.ents[j].Store(old.ents[j].Load())
				}
			}
			nn.ents[idx].Store(e)
			return nn
		}
		var child *node
		if old != nil {
			for j := range idx {
				nn.kids[j].Store(old.kids[j].Load())
			}
			child = old.kids[idx].Load()
		}
		nn.kids[idx].Store(build(child, shift-trieBits))
		return nn
	}
	return tree{root: build(t.root, t.shift), shift: t.shift, n: i + 1}
}

// truncate returns the view of the first n entries.
func (t tree) truncate(n int) tree {
	if n == 0 {
		return tree{}
	}
	t.n = n
	// Drop levels the shorter view no longer needs, so Chunk(i) walks fewer.
	for t.shift > 0 && n <= 1<<t.shift {
		t.root = t.root.kids[0].Load()
		t.shift -= trieBits
	}
	return t
}

// each calls fn for entries from index lo up to t.n, walking leaf by leaf,
// until fn returns false.
func (t tree) each(lo int, fn func(i int, e *entry) bool) {
	for i := lo; i < t.n; {
		lf := t.leaf(i)
		for j := i & trieMask; j < trieWidth && i < t.n; j++ {
			if !fn(i, lf.ents[j].Load()) {
				return
			}
			i++
		}
	}
}
