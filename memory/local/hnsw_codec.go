package local

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
)

// ErrIndexCorrupt: a persisted vector index could not be read back. The
// index is rebuilt from the vectors table; the error is seen only if that
// fails too.
var ErrIndexCorrupt = errors.New("memory/local: corrupt vector index file")

// graphMagic opens a persisted graph; graphVersion is its layout.
const (
	graphMagic   = "RATHHNSW"
	graphVersion = 1
)

// Bounds a decoded header must respect.
const (
	maxModelLen = 4096 // bytes of a model name or origin id
	maxDims     = 1 << 16
	maxM        = 128
	maxEfBuild  = 4096
)

// graphMeta is what a persisted graph says about itself: the database
// (its vector_origin id), embedding model and scope its vectors are of,
// and the change-log position it reflects.
type graphMeta struct {
	origin string
	model  string
	scope  int64
	seq    int64
}

// The layout, little-endian throughout:
//
//	magic "RATHHNSW", version u32
//	origin, model: each a length u32, then bytes; scope i64; seq i64
//	dims u32, m u32, efBuild u32, nodes u32, entry i32, top u32
//	per node: row i64, level u8, dead u8
//	per node: dims float32s (its unit vector)
//	per node, per layer 0..level: link count u16, links u32 each
//	CRC-32C of all that, u32

// encodeGraph writes a linked graph and its meta to w.
func encodeGraph(w io.Writer, g *graph, meta graphMeta) error {
	crc := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<16)
	var b []byte
	b = append(b, graphMagic...)
	b = binary.LittleEndian.AppendUint32(b, graphVersion)
	for _, s := range []string{meta.origin, meta.model} {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(meta.scope))
	b = binary.LittleEndian.AppendUint64(b, uint64(meta.seq))
	for _, x := range []int{g.dims, g.m, g.efBuild, len(g.keys), int(g.entry), g.top} {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	bw.Write(b)
	for n, k := range g.keys {
		b = binary.LittleEndian.AppendUint64(b[:0], uint64(k))
		b = append(b, g.levels[n], boolByte(g.dead[n]))
		bw.Write(b)
	}
	for _, x := range g.vecs {
		b = binary.LittleEndian.AppendUint32(b[:0], math.Float32bits(x))
		bw.Write(b)
	}
	for n := range g.keys {
		for l := 0; l <= int(g.levels[n]); l++ {
			ls := g.linksAt(int32(n), l)
			b = binary.LittleEndian.AppendUint16(b[:0], uint16(len(ls)))
			for _, x := range ls {
				b = binary.LittleEndian.AppendUint32(b, uint32(x))
			}
			bw.Write(b)
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err := w.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32()))
	return err
}

func boolByte(x bool) byte {
	if x {
		return 1
	}
	return 0
}

// decoder reads a persisted graph of a known size, checksumming as it
// goes and refusing any length that the bytes left could not hold, so a
// corrupt file never makes it allocate beyond the file's own size.
type decoder struct {
	r    *bufio.Reader
	size int64
	left int64
	crc  hash.Hash32
	buf  []byte
	err  error
}

// next returns the next n bytes (valid until the next call).
func (d *decoder) next(n int) []byte {
	if d.err != nil {
		return nil
	}
	if int64(n) > d.left {
		d.fail("truncated")
		return nil
	}
	if cap(d.buf) < n {
		d.buf = make([]byte, n)
	}
	b := d.buf[:n]
	if _, err := io.ReadFull(d.r, b); err != nil {
		d.fail("truncated: %v", err)
		return nil
	}
	d.left -= int64(n)
	d.crc.Write(b)
	return b
}

func (d *decoder) u16() uint16 {
	if b := d.next(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (d *decoder) u32() uint32 {
	if b := d.next(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (d *decoder) u64() uint64 {
	if b := d.next(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// str reads a length-prefixed string of at most maxModelLen bytes.
func (d *decoder) str() string {
	n := d.u32()
	if n > maxModelLen {
		d.fail("a string of %d bytes", n)
		return ""
	}
	return string(d.next(int(n)))
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrIndexCorrupt, fmt.Sprintf(format, args...))
	}
}

// decodeGraph reads what encodeGraph wrote: size bytes from r. Any defect
// — a bad checksum, a length or link out of range, a node on a layer above
// its level, a row outside the scope, a vector not of unit length, two
// live nodes for one row — is an error wrapping ErrIndexCorrupt, and a
// graph it returns is safe to search and to insert into.
func decodeGraph(r io.Reader, size int64) (*graph, graphMeta, error) {
	d := &decoder{r: bufio.NewReaderSize(r, 1<<16), size: size, left: size, crc: crc32.New(crc32.MakeTable(crc32.Castagnoli))}
	var meta graphMeta
	if string(d.next(len(graphMagic))) != graphMagic {
		d.fail("not a graph file")
	} else if v := d.u32(); d.err == nil && v != graphVersion {
		d.fail("layout version %d, this build reads %d", v, graphVersion)
	}
	meta.origin, meta.model = d.str(), d.str()
	meta.scope, meta.seq = int64(d.u64()), int64(d.u64())
	dims, m, efBuild, nodes := int(d.u32()), int(d.u32()), int(d.u32()), int64(d.u32())
	entry, top := int32(d.u32()), int(d.u32())
	switch {
	case d.err != nil:
	case dims < 1 || dims > maxDims || m < 2 || m > maxM || efBuild < 1 || efBuild > maxEfBuild:
		d.fail("shape dims=%d m=%d efBuild=%d", dims, m, efBuild)
	case nodes*(10+4*int64(dims)+2)+4 > d.left:
		d.fail("%d nodes of %d dimensions in %d bytes", nodes, dims, d.left)
	case top > maxLevel || (nodes == 0) != (entry == -1) || int64(entry) >= nodes || entry < -1:
		d.fail("entry node %d at level %d of %d nodes", entry, top, nodes)
	}
	if d.err != nil {
		return nil, meta, d.err
	}
	g := newGraph(dims, m, efBuild)
	g.entry, g.top, g.linked = entry, top, true
	if err := d.nodes(g, int(nodes), meta.scope); err != nil {
		return nil, meta, err
	}
	if err := d.vectors(g); err != nil {
		return nil, meta, err
	}
	if err := d.links(g); err != nil {
		return nil, meta, err
	}
	sum := d.crc.Sum32()
	if got := d.u32(); d.err == nil && got != sum {
		d.fail("checksum %08x, content sums to %08x", got, sum)
	}
	if d.err == nil && d.left != 0 {
		d.fail("%d bytes after the checksum", d.left)
	}
	if d.err != nil {
		return nil, meta, d.err
	}
	return g, meta, nil
}

// maxSlotsPerByte bounds the link slots (int32s, allocated at each layer's
// capacity) a file may ask for, per byte of file (beyond a first 64 Ki): a
// real graph's nodes hold their vectors and most of their links, so they
// need well under one, while a corrupt file's levels and m could ask for
// hundreds of times its size.
const maxSlotsPerByte = 2

// nodes reads the node table: rows, levels and dead marks.
func (d *decoder) nodes(g *graph, n int, scope int64) error {
	lo, hi := scopeRange(scope)
	g.keys, g.levels, g.dead = make([]int64, n), make([]uint8, n), make([]bool, n)
	slots := int64(n) * int64(1+2*g.m)
	for i := range n {
		b := d.next(10)
		if b == nil {
			return d.err
		}
		key, lvl, dead := int64(binary.LittleEndian.Uint64(b)), b[8], b[9]
		switch {
		case key < lo || key > hi:
			d.fail("node %d: row %d outside scope %d", i, key, scope)
		case lvl > maxLevel || dead > 1:
			d.fail("node %d: level %d, dead %d", i, lvl, dead)
		}
		if _, dup := g.byKey[key]; dup && dead == 0 {
			d.fail("node %d: row %d has two live nodes", i, key)
		}
		if d.err != nil {
			return d.err
		}
		g.keys[i], g.levels[i], g.dead[i] = key, lvl, dead == 1
		if dead == 1 {
			g.ndead++
		} else {
			g.byKey[key] = int32(i)
		}
		slots += int64(lvl) * int64(1+g.m)
	}
	switch {
	case g.entry >= 0 && int(g.levels[g.entry]) != g.top:
		d.fail("entry node %d has level %d, not %d", g.entry, g.levels[g.entry], g.top)
	case slots > maxSlotsPerByte*d.size+1<<16:
		d.fail("%d link slots for a file of %d bytes", slots, d.size)
	}
	if d.err != nil {
		return d.err
	}
	g.upper = make([][]int32, n)
	for i, lvl := range g.levels {
		if lvl > 0 {
			g.upper[i] = make([]int32, int(lvl)*(1+g.m))
		}
	}
	return nil
}

// vectors reads the unit vectors.
func (d *decoder) vectors(g *graph) error {
	g.vecs = make([]float32, len(g.keys)*g.dims)
	for n := range g.keys {
		b := d.next(4 * g.dims)
		if b == nil {
			return d.err
		}
		v := g.vecs[n*g.dims : (n+1)*g.dims]
		var norm float64
		for j := range v {
			v[j] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*j:]))
			norm += float64(v[j]) * float64(v[j])
		}
		if !(math.Abs(norm-1) < 1e-3) { // also false for NaN
			d.fail("node %d: vector of squared length %g", n, norm)
			return d.err
		}
	}
	return nil
}

// links reads every node's links on each of its layers.
func (d *decoder) links(g *graph) error {
	g.links0 = make([]int32, len(g.keys)*(1+2*g.m))
	for n := range g.keys {
		for l := 0; l <= int(g.levels[n]); l++ {
			c := int(d.u16())
			if c > g.capAt(l) {
				d.fail("node %d: %d links on layer %d", n, c, l)
			}
			b := d.next(4 * c)
			if d.err != nil {
				return d.err
			}
			s := g.slots(int32(n), l)
			s[0] = int32(c)
			for i := range c {
				x := binary.LittleEndian.Uint32(b[4*i:])
				if x >= uint32(len(g.keys)) || x == uint32(n) || int(g.levels[x]) < l {
					d.fail("node %d: link to %d on layer %d", n, x, l)
					return d.err
				}
				s[1+i] = int32(x)
			}
		}
	}
	return nil
}
