package model

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash"
	"sync"

	"github.com/openrath/rath/session"
)

// digestPrefix is the state of a request digest after the model name and
// the first n messages, kept so that the next request of a growing
// conversation hashes only the messages it adds.
type digestPrefix struct {
	model string
	first *session.Message // &Messages[0] of the request hashed
	n     int
	last  session.ChunkID // Messages[n-1].Chunk
	h     hash.Cloner
	// The recorded parameters' JSON, and the tools and parameters it was
	// made from (a run's requests share them).
	params     []byte
	fromTools  []ToolSpec
	fromParams Params
	// digest is the whole digest of the request that made this state, and
	// recorded says its evidence was recorded (Response.Record): a request
	// that Continues it lists only the messages it adds (Parts).
	digest   string
	recorded bool
}

// paramsJSON is json.Marshal(r.Record()), reused from p when r has the
// same tools slice and the same parameters.
func (p *digestPrefix) paramsJSON(r *Request) ([]byte, error) {
	if p != nil && p.params != nil && sameSlice(p.fromTools, r.Tools) && sameParams(p.fromParams, r.Params) {
		return p.params, nil
	}
	return json.Marshal(r.Record())
}

// sameSlice reports whether a and b are the same slice (not merely equal).
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// sameParams reports whether a and b are the same parameters: equal
// values, and the same pointers and slices where they refer to data.
func sameParams(a, b Params) bool {
	return a.Temperature == b.Temperature && a.TopP == b.TopP && a.MaxTokens == b.MaxTokens &&
		a.ToolChoice == b.ToolChoice && a.ParallelToolCalls == b.ParallelToolCalls && sameSlice(a.Stop, b.Stop) &&
		sameSlice(a.ResponseSchema, b.ResponseSchema) && a.ResponseSchemaName == b.ResponseSchemaName
}

// extends reports whether r's messages are p's with more after them: the
// same model, the same backing array and the same last message.
func (p *digestPrefix) extends(r *Request) bool {
	return p != nil && p.model == r.Model && p.n > 0 && p.n <= len(r.Messages) &&
		&r.Messages[0] == p.first && r.Messages[p.n-1].Chunk == p.last && p.last != ""
}

// Continues tells r that its Messages are prev's Messages with more
// appended in place (the same backing array, the first ones unchanged), as
// the requests of one agent run are: Digest then hashes only the messages
// prev did not have, and a step costs the same however long the
// conversation. If r's messages turn out not to extend prev's, Digest
// hashes them all; the digest is the same either way. Tools and parameters
// that are the very slices and pointers prev had are taken as unchanged.
// If prev's evidence has been recorded (Response.Record), r's (Parts) lists
// only the messages r adds, under the same check.
func (r *Request) Continues(prev *Request) {
	if prev != nil {
		r.prefix, r.base = prev.prefix, partsBase{}
		if p := prev.prefix; p != nil && p.recorded && p.n > 0 {
			r.base = partsBase{digest: p.digest, model: p.model, n: p.n, first: p.first, last: p.last}
		}
	}
}

// Digest is "sha256:<hex>" over the request — model, messages, tools and
// parameters — so replay can tell whether it would send the same request.
// A message projected from a chunk stands in by its chunk id (a content
// hash of the chunk and its chain) after a role: the role that kind of
// chunk was sent in before messages carried trust labels (see digestRole),
// so that digests recorded then still match. Other messages stand in by
// their JSON without the trust labels, which do not change what is sent.
// Digest keeps the hash state after the messages, for a request that
// Continues this one; it is not safe for concurrent use on one Request.
func (r *Request) Digest() string {
	old := r.prefix
	var h hash.Cloner
	from := 0
	params, err := r.prefix.paramsJSON(r)
	if err != nil {
		return ""
	}
	if p := r.prefix; p.extends(r) {
		if c, err := p.h.Clone(); err == nil {
			h, from = c, p.n
		}
	}
	// Fields go through one buffer, written to the hash once a message (a
	// write through the interface would move each length to the heap).
	bp := digestBufs.Get().(*[]byte)
	defer digestBufs.Put(bp)
	buf := (*bp)[:0]
	if h == nil {
		h = sha256.New().(hash.Cloner)
		h.Write(appendField(buf, r.Model))
	}
	for _, m := range r.Messages[from:] {
		buf = buf[:0]
		if m.Chunk != "" {
			role := digestRole(&m)
			n := len(role) + 1 + len(m.Chunk)
			buf = binary.LittleEndian.AppendUint64(buf, uint64(n))
			buf = append(append(append(buf, role...), 0), m.Chunk...)
			h.Write(buf)
			continue
		}
		m.Trust, m.Source = 0, 0
		raw, err := json.Marshal(m)
		if err != nil {
			return ""
		}
		h.Write(appendField(buf, raw))
	}
	if n := len(r.Messages); n > 0 {
		if c, err := h.Clone(); err == nil {
			r.prefix = &digestPrefix{model: r.Model, first: &r.Messages[0], n: n, last: r.Messages[n-1].Chunk, h: c,
				params: params, fromTools: r.Tools, fromParams: r.Params}
		}
	} else {
		// Nothing to continue from but the parameters' JSON: a request
		// with no messages Continued by the first of a run saves it that.
		r.prefix = &digestPrefix{params: params, fromTools: r.Tools, fromParams: r.Params}
	}
	// Tools field by field (their schemas are raw JSON already), then the
	// parameters as recorded.
	buf = appendField(buf[:0], []byte{byte(len(r.Tools)), byte(len(r.Tools) >> 8)})
	for _, t := range r.Tools {
		strict := byte(0)
		if t.Strict {
			strict = 1
		}
		buf = appendField(buf, t.Name)
		buf = appendField(buf, t.Description)
		buf = appendField(buf, t.Parameters)
		buf = appendField(buf, []byte{strict})
	}
	buf = appendField(buf, params)
	h.Write(buf)
	if cap(buf) <= 64<<10 {
		*bp = buf
	}
	var sum [sha256.Size]byte
	out := make([]byte, 0, len("sha256:")+2*sha256.Size)
	out = append(out, "sha256:"...)
	d := string(hex.AppendEncode(out, h.Sum(sum[:0])))
	// The same request digested again keeps its evidence's mark.
	r.prefix.digest, r.prefix.recorded = d, old != nil && old.recorded && old.digest == d
	return d
}

// digestRole is the role a message projected from a chunk is hashed under:
// system for a memory recall or a compression summary, which were system
// messages until they became untrusted user messages (the chunk id fixes
// everything else about the message, as it always did its text), and
// otherwise the message's role.
func digestRole(m *session.Message) session.Role {
	switch m.Source {
	case session.KindMemory, session.KindCompress:
		return session.RoleSystem
	}
	return m.Role
}

// digestBufs recycles the buffer fields are framed in.
var digestBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// appendField appends b to dst after its length (eight bytes, little
// endian): the digest's framing of each field.
func appendField[B ~string | ~[]byte](dst []byte, b B) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, uint64(len(b)))
	return append(dst, b...)
}
