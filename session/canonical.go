package session

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
)

// This file implements RFC 8785, the JSON Canonicalization Scheme (JCS), as a
// single recursive-descent pass over the input bytes. Output is written
// straight into the destination slice; object members are emitted in input
// order and then permuted in place once the object is complete, so no value
// tree is ever built. Chunk hashing calls this on every chunk, hence the
// attention to allocations: scratch state lives in a sync.Pool and the only
// allocation in steady state is growing the caller's output buffer.

// ErrNotCanonicalizable is wrapped by every error returned from CanonicalJSON
// and AppendCanonicalJSON: the input was not valid JSON (RFC 8259) or holds
// something JCS cannot represent (invalid UTF-8, lone surrogates, duplicate
// keys, numbers beyond float64 range).
var ErrNotCanonicalizable = errors.New("session: JSON cannot be canonicalized")

// maxCanonicalDepth bounds array/object nesting. It matches encoding/json's
// limit, and keeps hostile input from exhausting the goroutine stack.
const maxCanonicalDepth = 10000

// CanonicalJSON returns the RFC 8785 (JCS) canonical form of the JSON text src.
func CanonicalJSON(src []byte) ([]byte, error) {
	// Canonical output is never longer than the input except for numbers
	// such as 1e20 (which expand to 21 digits), so len(src) is a good guess.
	out, err := AppendCanonicalJSON(make([]byte, 0, len(src)), src)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// AppendCanonicalJSON appends the canonical form of src to dst. On error it
// returns dst with its original length (bytes past it may have been written).
func AppendCanonicalJSON(dst, src []byte) ([]byte, error) {
	c := jcsPool.Get().(*canonicalizer)
	c.src, c.pos, c.depth, c.out = src, 0, 0, dst
	c.members, c.keys = c.members[:0], c.keys[:0] // an earlier error may leave entries
	err := c.document()
	out := c.out
	c.src, c.out = nil, nil
	// Do not let one huge document pin large scratch buffers forever.
	if cap(c.tmp)+cap(c.keys)+cap(c.sbuf) <= 1<<16 && cap(c.members) <= 1<<10 {
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
	pos   int
	depth int
	out   []byte

	members []jcsMember // stack of members of all open objects
	keys    []byte      // unescaped keys that contained escapes (stack-like)
	sbuf    []byte      // unescaped string values that contained escapes
	tmp     []byte      // copy of an object body while members are reordered
}

// jcsMember records one object member: its unescaped key (aliasing src or
// c.keys; appends never overwrite bytes still referenced), where the key
// started in src (for errors), and where `"key":value` sits in c.out.
type jcsMember struct {
	key        []byte
	keyOff     int
	start, end int
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
	c.skipSpace()
	if c.pos != len(c.src) {
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
		raw, escaped, err := c.scanString()
		if err != nil {
			return err
		}
		if !escaped {
			// Validated raw content needs no escaping: it holds no '"',
			// '\\' or control characters and is valid UTF-8.
			c.out = append(append(append(c.out, '"'), raw...), '"')
			return nil
		}
		c.sbuf = jcsUnescape(c.sbuf[:0], raw)
		c.out = jcsAppendString(c.out, c.sbuf)
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
// reports whether the container is empty (its closing byte is consumed too).
func (c *canonicalizer) open(closer byte) (empty bool, err error) {
	if c.depth++; c.depth > maxCanonicalDepth {
		return false, c.errorf(c.pos, "nesting deeper than %d levels", maxCanonicalDepth)
	}
	c.out = append(c.out, c.src[c.pos])
	c.pos++
	c.skipSpace()
	if c.pos < len(c.src) && c.src[c.pos] == closer {
		c.pos++
		c.out = append(c.out, closer)
		c.depth--
		return true, nil
	}
	return false, nil
}

// next consumes the separator after an element: it reports done once the
// closer has been consumed, and leaves c.pos at the next element otherwise.
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
		done, err := c.next(']')
		if err != nil {
			return err
		}
		if done {
			c.out = append(c.out, ']')
			return nil
		}
		c.out = append(c.out, ',')
	}
}

func (c *canonicalizer) object() error {
	if empty, err := c.open('}'); empty || err != nil {
		return err
	}
	base, keysBase := len(c.members), len(c.keys)
	bodyStart := len(c.out)
	for {
		if c.pos >= len(c.src) || c.src[c.pos] != '"' {
			return c.errorf(c.pos, "expected string key in object")
		}
		m := jcsMember{keyOff: c.pos, start: len(c.out)}
		raw, escaped, err := c.scanString()
		if err != nil {
			return err
		}
		if escaped {
			n := len(c.keys)
			c.keys = jcsUnescape(c.keys, raw)
			m.key = c.keys[n:len(c.keys):len(c.keys)]
			c.out = jcsAppendString(c.out, m.key)
		} else {
			m.key = raw
			c.out = append(append(append(c.out, '"'), raw...), '"')
		}
		c.skipSpace()
		if c.pos >= len(c.src) || c.src[c.pos] != ':' {
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
		done, err := c.next('}')
		if err != nil {
			return err
		}
		if done {
			break
		}
		c.out = append(c.out, ',')
	}
	err := c.sortMembers(bodyStart, c.members[base:])
	c.members, c.keys = c.members[:base], c.keys[:keysBase]
	c.out = append(c.out, '}')
	return err
}

// sortMembers puts the object body c.out[bodyStart:] into JCS key order.
// Canonical input is already sorted, so that case is detected in one pass
// and costs no copying.
func (c *canonicalizer) sortMembers(bodyStart int, ms []jcsMember) error {
	sorted := true
	for i := 1; i < len(ms); i++ {
		if cmp := jcsCompareKeys(ms[i-1].key, ms[i].key); cmp == 0 {
			return c.errorf(ms[i].keyOff, "duplicate key %q", ms[i].key)
		} else if cmp > 0 {
			sorted = false
		}
	}
	if sorted {
		return nil
	}
	slices.SortFunc(ms, func(a, b jcsMember) int { return jcsCompareKeys(a.key, b.key) })
	for i := 1; i < len(ms); i++ {
		if jcsCompareKeys(ms[i-1].key, ms[i].key) == 0 {
			return c.errorf(max(ms[i-1].keyOff, ms[i].keyOff), "duplicate key %q", ms[i].key)
		}
	}
	// Copy the body aside and write the members back in sorted order. The
	// body has the same length afterwards, so c.out never reallocates here.
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

// jcsCompareKeys orders valid UTF-8 strings by their UTF-16 code units, as RFC
// 8785 requires. UTF-8 byte order equals code point order, which differs from
// UTF-16 order only between U+E000..U+FFFF (lead byte 0xEE or 0xEF) and
// supplementary characters (lead byte 0xF0..0xF4), which UTF-16 encodes with
// surrogates 0xD800..0xDFFF and so sorts first. The first differing byte
// decides; if it is a continuation byte, both runes share a lead byte and
// byte order is already right.
func jcsCompareKeys(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if x >= 0xEE && y >= 0xEE && (x >= 0xF0) != (y >= 0xF0) {
			// One is U+E000..U+FFFF, the other supplementary: invert.
			if x >= 0xF0 {
				return -1
			}
			return 1
		}
		if x < y {
			return -1
		}
		return 1
	}
	return len(a) - len(b)
}

// scanString validates the string at c.pos and returns its raw content
// between the quotes; escaped reports whether it contains backslashes.
func (c *canonicalizer) scanString() (raw []byte, escaped bool, err error) {
	src := c.src
	start := c.pos + 1
	i := start
	for i < len(src) {
		b := src[i]
		switch {
		case b == '"':
			c.pos = i + 1
			return src[start:i], escaped, nil
		case b < 0x20:
			return nil, false, c.errorf(i, "control character %q in string", b)
		case b < utf8.RuneSelf && b != '\\':
			i++
		case b >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError && size == 1 {
				return nil, false, c.errorf(i, "invalid UTF-8 in string")
			}
			i += size
		default: // backslash
			escaped = true
			if i+1 >= len(src) {
				return nil, false, c.errorf(i, "unterminated escape")
			}
			switch src[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
				continue
			case 'u':
			default:
				return nil, false, c.errorf(i, "invalid escape %q", src[i:i+2])
			}
			r, ok := jcsHex4(src[i+2:])
			if !ok {
				return nil, false, c.errorf(i, "invalid \\u escape")
			}
			switch {
			case r >= 0xDC00 && r <= 0xDFFF:
				return nil, false, c.errorf(i, "lone low surrogate \\u%04x", r)
			case r >= 0xD800 && r <= 0xDBFF:
				// Must be followed by an escaped low surrogate.
				var lo rune
				if len(src) > i+7 && src[i+6] == '\\' && src[i+7] == 'u' {
					lo, _ = jcsHex4(src[i+8:])
				}
				if lo < 0xDC00 || lo > 0xDFFF {
					return nil, false, c.errorf(i, "lone high surrogate \\u%04x", r)
				}
				i += 12
			default:
				i += 6
			}
		}
	}
	return nil, false, c.errorf(len(src), "unterminated string starting at offset %d", c.pos)
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

// jcsUnescape appends the decoded form of raw, which scanString has validated.
func jcsUnescape(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		b := raw[i]
		if b != '\\' {
			j := i + 1
			for j < len(raw) && raw[j] != '\\' {
				j++
			}
			dst = append(dst, raw[i:j]...)
			i = j
			continue
		}
		switch raw[i+1] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, _ := jcsHex4(raw[i+2:])
			if r >= 0xD800 && r <= 0xDBFF {
				lo, _ := jcsHex4(raw[i+8:])
				r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				i += 6
			}
			dst = utf8.AppendRune(dst, r)
			i += 6
			continue
		default: // '"', '\\', '/'
			dst = append(dst, raw[i+1])
		}
		i += 2
	}
	return dst
}

// jcsAppendString appends s (valid UTF-8) as a JSON string escaped per RFC
// 8785: only '"', '\\' and control characters are escaped, using the short
// forms where JSON has them and \u00xx (lowercase hex) otherwise.
func jcsAppendString(dst, s []byte) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i, b := range s {
		if b >= 0x20 && b != '"' && b != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		start = i + 1
		switch b {
		case '"', '\\':
			dst = append(dst, '\\', b)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\r':
			dst = append(dst, '\\', 'r')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
		}
	}
	return append(append(dst, s[start:]...), '"')
}

// number validates a number against the JSON grammar and appends its
// ECMAScript Number.prototype.toString form (RFC 8785 section 3.2.2.3).
func (c *canonicalizer) number() error {
	src, start := c.src, c.pos
	i := start
	if src[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(src) && src[i] >= '0' && src[i] <= '9' {
			i++
			n++
		}
		return n
	}
	intStart := i
	switch {
	case i < len(src) && src[i] == '0':
		i++
	case digits() == 0:
		return c.errorf(i, "invalid number: expected digit")
	}
	intDigits := i - intStart
	plain := true
	if i < len(src) && src[i] == '.' {
		i++
		plain = false
		if digits() == 0 {
			return c.errorf(i, "invalid number: expected digit after '.'")
		}
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		i++
		plain = false
		if i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		if digits() == 0 {
			return c.errorf(i, "invalid number: expected exponent digit")
		}
	}
	c.pos = i
	lit := src[start:i]
	// Fast path: integers of up to 15 digits are exact in float64 and print
	// unchanged, except that -0 prints as 0.
	if plain && intDigits <= 15 {
		if string(lit) == "-0" {
			lit = lit[1:]
		}
		c.out = append(c.out, lit...)
		return nil
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		return c.errorf(start, "number %s out of float64 range", lit)
	}
	c.out = jcsAppendNumber(c.out, f)
	return nil
}

// jcsAppendNumber formats a finite f like ECMAScript's Number.prototype.toString:
// shortest round-trip digits, plain notation for 1e-6 <= |f| < 1e21 and
// exponent notation (e.g. 1e+21, 1.5e-7) otherwise.
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
