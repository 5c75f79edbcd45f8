package session

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// This file implements RFC 8785, the JSON Canonicalization Scheme (JCS), as
// one recursive-descent pass over the input bytes. Output goes straight into
// the destination slice; object members are written in input order and
// permuted in place once the object is complete, so no value tree is built.
// It runs on every chunk hash, hence the care about allocations: scratch
// state is pooled, and in steady state the only allocation is the output.

// ErrNotCanonicalizable is wrapped by every error from CanonicalJSON and
// AppendCanonicalJSON: the input is not valid JSON (RFC 8259) or holds what
// JCS cannot represent (invalid UTF-8, lone surrogates, duplicate keys,
// numbers beyond float64 range).
var ErrNotCanonicalizable = errors.New("session: JSON cannot be canonicalized")

// maxCanonicalDepth bounds array/object nesting, as encoding/json does, so
// hostile input cannot exhaust the stack.
const maxCanonicalDepth = 10000

// CanonicalJSON returns the RFC 8785 (JCS) canonical form of the JSON text src.
func CanonicalJSON(src []byte) ([]byte, error) {
	return AppendCanonicalJSON(nil, src)
}

// AppendCanonicalJSON appends the canonical form of src to dst. On error it
// returns dst with its original length (bytes past it may have been written).
func AppendCanonicalJSON(dst, src []byte) ([]byte, error) {
	// Canonical output is rarely longer than its input (only numbers such as
	// 1e20 grow), so reserving len(src) makes one allocation at most.
	c := jcsPool.Get().(*canonicalizer)
	c.src, c.pos, c.depth, c.out = src, 0, 0, slices.Grow(dst, len(src))
	c.members, c.keys = c.members[:0], c.keys[:0] // an error may leave entries
	err := c.document()
	out := c.out
	c.src, c.out = nil, nil
	// Do not let one huge document pin large scratch buffers forever.
	if cap(c.keys)+cap(c.sbuf)+cap(c.tmp) <= 1<<16 && cap(c.members) <= 1<<10 {
		jcsPool.Put(c)
	}
	if err != nil {
		return dst, err
	}
	return out, nil
}

var jcsPool = sync.Pool{New: func() any { return new(canonicalizer) }}

type canonicalizer struct {
	src   []byte
	pos   int // next byte of src to read
	depth int
	out   []byte

	members []jcsMember // members of all open objects, innermost last
	keys    []byte      // unescaped keys of all open objects
	sbuf    []byte      // unescaped string value
	tmp     []byte      // object body being permuted
}

// jcsMember is an object member: its unescaped key is keys[keyStart:keyEnd],
// its key began at src[keyOff] (for errors), and `"key":value` is
// out[start:end]. Offsets rather than slices keep it pointer-free, which
// makes it cheap to sort and invisible to the garbage collector.
type jcsMember struct {
	keyStart, keyEnd, keyOff, start, end int
}

func (c *canonicalizer) errorf(off int, format string, args ...any) error {
	return fmt.Errorf("%w: %s at offset %d", ErrNotCanonicalizable, fmt.Sprintf(format, args...), off)
}

func (c *canonicalizer) skipSpace() {
	for c.pos < len(c.src) {
		switch c.src[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

func (c *canonicalizer) document() error {
	c.skipSpace()
	if err := c.value(); err != nil {
		return err
	}
	if c.skipSpace(); c.pos != len(c.src) {
		return c.errorf(c.pos, "trailing data after JSON value")
	}
	return nil
}

func (c *canonicalizer) value() error {
	if c.pos >= len(c.src) {
		return c.errorf(c.pos, "unexpected end of input")
	}
	switch b := c.src[c.pos]; {
	case b == '{':
		return c.object()
	case b == '[':
		return c.array()
	case b == '"':
		s, escaped, err := c.str(c.sbuf[:0])
		switch {
		case err != nil:
			return err
		case escaped:
			c.sbuf = s
			c.out = jcsAppendString(c.out, s)
		default:
			// Unescaped content was validated: no '"', '\\' or control
			// characters, valid UTF-8. That is already canonical.
			c.out = append(append(append(c.out, '"'), s...), '"')
		}
		return nil
	case b == '-' || b >= '0' && b <= '9':
		return c.number()
	case b == 't':
		return c.literal("true")
	case b == 'f':
		return c.literal("false")
	case b == 'n':
		return c.literal("null")
	}
	return c.errorf(c.pos, "unexpected character %q", c.src[c.pos])
}

func (c *canonicalizer) literal(lit string) error {
	if len(c.src)-c.pos < len(lit) || string(c.src[c.pos:c.pos+len(lit)]) != lit {
		return c.errorf(c.pos, "invalid literal, want %s", lit)
	}
	c.out = append(c.out, lit...)
	c.pos += len(lit)
	return nil
}

// open consumes the '[' or '{' at c.pos, enforcing the depth limit, and
// reports whether the container is empty (its closer is then consumed too).
func (c *canonicalizer) open(closer byte) (empty bool, err error) {
	if c.depth++; c.depth > maxCanonicalDepth {
		return false, c.errorf(c.pos, "nesting deeper than %d levels", maxCanonicalDepth)
	}
	c.out = append(c.out, c.src[c.pos])
	c.pos++
	c.skipSpace()
	if c.pos < len(c.src) && c.src[c.pos] == closer {
		c.pos++
		c.depth--
		c.out = append(c.out, closer)
		return true, nil
	}
	return false, nil
}

// next consumes what follows an element: a ',' (leaving c.pos at the next
// element) or the closer, in which case it reports done.
func (c *canonicalizer) next(closer byte) (done bool, err error) {
	c.skipSpace()
	if c.pos >= len(c.src) {
		return false, c.errorf(c.pos, "unexpected end of input, expected ',' or %q", closer)
	}
	switch c.src[c.pos] {
	case ',':
		c.pos++
		c.skipSpace()
		return false, nil
	case closer:
		c.pos++
		c.depth--
		return true, nil
	}
	return false, c.errorf(c.pos, "expected ',' or %q, found %q", closer, c.src[c.pos])
}

func (c *canonicalizer) array() error {
	if empty, err := c.open(']'); empty || err != nil {
		return err
	}
	for {
		if err := c.value(); err != nil {
			return err
		}
		if done, err := c.next(']'); done || err != nil {
			c.out = append(c.out, ']')
			return err
		}
		c.out = append(c.out, ',')
	}
}

func (c *canonicalizer) object() error {
	if empty, err := c.open('}'); empty || err != nil {
		return err
	}
	base, keysBase, bodyStart := len(c.members), len(c.keys), len(c.out)
	for {
		if c.pos >= len(c.src) || c.src[c.pos] != '"' {
			return c.errorf(c.pos, "expected string key in object")
		}
		m := jcsMember{keyStart: len(c.keys), keyOff: c.pos, start: len(c.out)}
		s, escaped, err := c.str(c.keys)
		switch {
		case err != nil:
			return err
		case escaped:
			c.keys = s
			c.out = jcsAppendString(c.out, s[m.keyStart:])
		default:
			c.keys = append(c.keys, s...)
			c.out = append(append(append(c.out, '"'), s...), '"')
		}
		m.keyEnd = len(c.keys)
		if c.skipSpace(); c.pos >= len(c.src) || c.src[c.pos] != ':' {
			return c.errorf(c.pos, "expected ':' after object key")
		}
		c.pos++
		c.skipSpace()
		c.out = append(c.out, ':')
		if err := c.value(); err != nil {
			return err
		}
		m.end = len(c.out)
		c.members = append(c.members, m)
		if done, err := c.next('}'); err != nil {
			return err
		} else if done {
			break
		}
		c.out = append(c.out, ',')
	}
	err := c.sortMembers(bodyStart, c.members[base:])
	c.members, c.keys = c.members[:base], c.keys[:keysBase]
	c.out = append(c.out, '}')
	return err
}

// sortMembers puts the object body c.out[bodyStart:] into JCS key order and
// rejects duplicate keys.
func (c *canonicalizer) sortMembers(bodyStart int, ms []jcsMember) error {
	keys := c.keys
	key := func(m *jcsMember) []byte { return keys[m.keyStart:m.keyEnd] }
	if len(ms) <= 16 {
		// Insertion sort with the comparison inlined: objects are small,
		// and it is linear on already sorted (canonical) input. A member
		// stops next to the largest key not above its own, so if it has
		// a duplicate, that is the key it stops at.
		for i := 1; i < len(ms); i++ {
			m, j := ms[i], i
			for ; j > 0; j-- {
				d := jcsCompareKeys(key(&ms[j-1]), key(&m))
				if d == 0 {
					return c.errorf(m.keyOff, "duplicate key %q", key(&m))
				} else if d < 0 {
					break
				}
				ms[j] = ms[j-1]
			}
			ms[j] = m
		}
	} else {
		// Large objects: O(n log n), after which duplicates are adjacent.
		slices.SortFunc(ms, func(a, b jcsMember) int { return jcsCompareKeys(key(&a), key(&b)) })
		for i := 1; i < len(ms); i++ {
			if string(key(&ms[i-1])) == string(key(&ms[i])) {
				return c.errorf(max(ms[i-1].keyOff, ms[i].keyOff), "duplicate key %q", key(&ms[i]))
			}
		}
	}
	if slices.IsSortedFunc(ms, func(a, b jcsMember) int { return a.start - b.start }) {
		return nil // already in order: nothing to move
	}
	// Copy the body aside and write the members back in order. The body
	// keeps its length, so c.out never reallocates here.
	c.tmp = append(c.tmp[:0], c.out[bodyStart:]...)
	c.out = c.out[:bodyStart]
	for i, m := range ms {
		if i > 0 {
			c.out = append(c.out, ',')
		}
		c.out = append(c.out, c.tmp[m.start-bodyStart:m.end-bodyStart]...)
	}
	return nil
}

// jcsCompareKeys orders valid UTF-8 strings by their UTF-16 code units, as
// RFC 8785 requires. UTF-8 byte order is code point order, which differs
// from UTF-16 order only between U+E000..U+FFFF (lead byte 0xEE or 0xEF) and
// supplementary characters (lead byte 0xF0..0xF4), which UTF-16 encodes as
// surrogates 0xD800..0xDFFF and so sorts first. The first differing byte
// decides; if it is a continuation byte, both runes share their lead byte
// and byte order is right.
func jcsCompareKeys(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		return len(a) - len(b)
	}
	x, y := int(a[i]), int(b[i])
	if x >= 0xEE && y >= 0xEE && (x >= 0xF0) != (y >= 0xF0) {
		return y - x // one is U+E000..U+FFFF, the other supplementary
	}
	return x - y
}

// str consumes the string at c.pos, validating it. Without escapes it
// returns the raw content between the quotes. With escapes it returns dst
// with the unescaped content appended, and escaped is true.
func (c *canonicalizer) str(dst []byte) (s []byte, escaped bool, err error) {
	src, start := c.src, c.pos+1
	i, lit := start, start // lit: start of literal bytes not yet in dst
	for {
		// Skip plain bytes, eight at a time while no byte of the word is
		// below 0x20, '"', '\\' or non-ASCII (SWAR: such a byte sets its
		// high bit in one of the terms; false alarms only end the fast loop).
		for ; i+8 <= len(src); i += 8 {
			const ones, highs = 0x0101010101010101, 0x8080808080808080
			w := binary.LittleEndian.Uint64(src[i:])
			ctl, quote, bslash := w-ones*0x20, (w^(ones*'"'))-ones, (w^(ones*'\\'))-ones
			if (ctl|quote|bslash|w)&highs != 0 {
				break
			}
		}
		for i < len(src) && jcsPlain[src[i]] {
			i++
		}
		if i >= len(src) {
			return nil, false, c.errorf(len(src), "unterminated string starting at offset %d", c.pos)
		}
		switch b := src[i]; {
		case b == '"':
			c.pos = i + 1
			if !escaped {
				return src[start:i], false, nil
			}
			return append(dst, src[lit:i]...), true, nil
		case b < 0x20:
			return nil, false, c.errorf(i, "control character %q in string", b)
		case b >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError && size == 1 {
				return nil, false, c.errorf(i, "invalid UTF-8 in string")
			}
			i += size
		default: // backslash
			r, n, err := c.escape(i)
			if err != nil {
				return nil, false, err
			}
			dst = utf8.AppendRune(append(dst, src[lit:i]...), r)
			i += n
			lit, escaped = i, true
		}
	}
}

// jcsPlain marks bytes a string may hold that need no checks: printable
// ASCII other than '"' and '\\'.
var jcsPlain = func() (t [256]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// escape decodes the escape sequence starting with the backslash at src[i],
// returning the rune and the sequence's length. A \u escape of a high
// surrogate must be followed by one of a low surrogate; UTF-8 cannot carry
// unpaired surrogates.
func (c *canonicalizer) escape(i int) (rune, int, error) {
	src := c.src
	if i+1 >= len(src) {
		return 0, 0, c.errorf(i, "unterminated escape")
	}
	if k := strings.IndexByte(`"\/bfnrt`, src[i+1]); k >= 0 {
		return rune("\"\\/\b\f\n\r\t"[k]), 2, nil
	}
	if src[i+1] != 'u' {
		return 0, 0, c.errorf(i, "invalid escape %q", src[i:i+2])
	}
	r, ok := jcsHex4(src[i+2:])
	switch {
	case !ok:
		return 0, 0, c.errorf(i, "invalid \\u escape")
	case r >= 0xDC00 && r <= 0xDFFF:
		return 0, 0, c.errorf(i, "lone low surrogate \\u%04x", r)
	case r >= 0xD800 && r <= 0xDBFF:
		var lo rune
		if len(src) > i+7 && src[i+6] == '\\' && src[i+7] == 'u' {
			lo, _ = jcsHex4(src[i+8:])
		}
		if lo < 0xDC00 || lo > 0xDFFF {
			return 0, 0, c.errorf(i, "lone high surrogate \\u%04x", r)
		}
		return 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00), 12, nil
	}
	return r, 6, nil
}

// jcsHex4 decodes the four hex digits at the start of b.
func jcsHex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, h := range b[:4] {
		switch {
		case h >= '0' && h <= '9':
			h -= '0'
		case h >= 'a' && h <= 'f':
			h -= 'a' - 10
		case h >= 'A' && h <= 'F':
			h -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(h)
	}
	return r, true
}

// jcsAppendString appends s (valid UTF-8) as a JSON string escaped per RFC
// 8785: only '"', '\\' and control characters are escaped, using the short
// forms where JSON has them and \u00xx (lowercase hex) otherwise.
func jcsAppendString(dst, s []byte) []byte {
	// Kept separate from appendCanonString: this one trusts its input to be
	// valid UTF-8 (the parser checked) and so skips rune decoding.
	dst = append(dst, '"')
	start := 0
	for i, b := range s {
		if b >= 0x20 && b != '"' && b != '\\' {
			continue
		}
		dst = appendEscaped(append(dst, s[start:i]...), b)
		start = i + 1
	}
	return append(append(dst, s[start:]...), '"')
}

// number validates a number against the JSON grammar and appends its
// ECMAScript Number.prototype.toString form (RFC 8785 section 3.2.2.3).
func (c *canonicalizer) number() error {
	src, start := c.src, c.pos
	intStart := start
	if src[start] == '-' {
		intStart++
	}
	intEnd := jcsDigits(src, intStart)
	if intEnd == intStart {
		return c.errorf(intStart, "invalid number: expected digit")
	}
	if src[intStart] == '0' && intEnd > intStart+1 {
		return c.errorf(intStart, "invalid number: leading zero")
	}
	i, frac := intEnd, src[intEnd:intEnd]
	if i < len(src) && src[i] == '.' {
		if i = jcsDigits(src, intEnd+1); i == intEnd+1 {
			return c.errorf(i, "invalid number: expected digit after '.'")
		}
		frac = src[intEnd+1 : i]
	}
	hasExp := i < len(src) && (src[i] == 'e' || src[i] == 'E')
	if hasExp {
		if i++; i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		if expStart := i; jcsDigits(src, i) == expStart {
			return c.errorf(i, "invalid number: expected exponent digit")
		}
		i = jcsDigits(src, i)
	}
	c.pos = i
	if !hasExp {
		// Fast path: a decimal with at most 15 significant digits and
		// 1e-6 <= |x| < 1e21 is its own shortest round trip (float64 holds
		// 15 decimal digits exactly), so ECMAScript prints it as written,
		// less trailing fraction zeros and the sign of zero.
		for len(frac) > 0 && frac[len(frac)-1] == '0' {
			frac = frac[:len(frac)-1]
		}
		sig, zeros := len(frac)+intEnd-intStart, 0
		if src[intStart] == '0' {
			for zeros < len(frac) && frac[zeros] == '0' {
				zeros++
			}
			sig -= 1 + zeros
		}
		if sig <= 15 && zeros <= 5 {
			if sig == 0 {
				c.out = append(c.out, '0')
			} else if c.out = append(c.out, src[start:intEnd]...); len(frac) > 0 {
				c.out = append(append(c.out, '.'), frac...)
			}
			return nil
		}
	}
	f, err := strconv.ParseFloat(string(src[start:i]), 64)
	if err != nil { // the syntax is valid, so the value is out of range
		return c.errorf(start, "number %s out of float64 range", src[start:i])
	}
	c.out = jcsAppendNumber(c.out, f)
	return nil
}

func jcsDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// jcsAppendNumber formats finite f like ECMAScript's Number.prototype.toString:
// shortest round-trip digits, plain notation for 1e-6 <= |f| < 1e21 and
// exponent notation (1e+21, 1.5e-7) otherwise. Both formats produce the same
// shortest digits, so the boundaries can be tested on f itself.
func jcsAppendNumber(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0') // also -0
	}
	if abs := math.Abs(f); abs >= 1e-6 && abs < 1e21 {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	dst = strconv.AppendFloat(dst, f, 'e', -1, 64)
	// Go writes at least two exponent digits ("1e-07"); ECMAScript does not.
	if n := len(dst); dst[n-2] == '0' && (dst[n-3] == '+' || dst[n-3] == '-') {
		dst[n-2] = dst[n-1]
		dst = dst[:n-1]
	}
	return dst
}
