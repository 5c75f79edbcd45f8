package session

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"strconv"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonReader is a small pull parser over one JSON text held in memory, used by
// DecodeChunkJSON. It follows the grammar of encoding/json's scanner exactly
// and, for the few Go types chunks are made of, encoding/json's decoding rules
// (noted at each method), so that both accept the same inputs and produce the
// same values.
//
// Errors are sticky: the first one is kept in err and every later call does
// nothing, so readers can be written as straight-line code and check once.
type jsonReader struct {
	data  []byte
	pos   int
	depth int // open objects and arrays
	err   error

	key    []byte // the unescaped key of the member whose value comes next
	keyPos int    // where that key starts
	keyBuf []byte // holds key when the key had escapes
	strBuf []byte // holds unescaped strings until they are copied out
}

// Readers are pooled. A reader cannot live on the stack, since it is passed
// through the func values of readPtr and readList, so without the pool each
// chunk would allocate one, and grow its buffers anew for escaped strings.
var jsonReaders = sync.Pool{New: func() any { return new(jsonReader) }}

func newJSONReader(data []byte) *jsonReader {
	r := jsonReaders.Get().(*jsonReader)
	r.data = data
	return r
}

// release returns r to the pool, keeping its buffers unless they grew large.
func (r *jsonReader) release() {
	keyBuf, strBuf := r.keyBuf[:0], r.strBuf[:0]
	if cap(strBuf) > 64<<10 {
		strBuf = nil
	}
	if cap(keyBuf) > 64<<10 {
		keyBuf = nil
	}
	*r = jsonReader{keyBuf: keyBuf, strBuf: strBuf}
	jsonReaders.Put(r)
}

// maxJSONDepth is encoding/json's nesting limit, which we share so that
// neither accepts a text the other rejects.
const maxJSONDepth = 10000

// plainASCII marks the bytes a string can hold as they are: printable ASCII
// other than the quote and the backslash.
var plainASCII = func() (t [utf8.RuneSelf]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// failAt records an error at byte offset off unless one was recorded already.
func (r *jsonReader) failAt(off int, format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: chunk JSON, byte %d: %s", ErrCorrupt, off, fmt.Sprintf(format, args...))
	}
}

// typeError reports that the value at the current position is not of the
// type the field needs.
func (r *jsonReader) typeError(want string) {
	r.failAt(r.pos, "want %s for %q, found %s", want, r.key, r.found())
}

// unknown reports the current member as one no field is named after, as
// encoding/json does under DisallowUnknownFields.
func (r *jsonReader) unknown() {
	r.failAt(r.keyPos, "unknown field %q", r.key)
}

// found describes the token at the current position, for error messages.
func (r *jsonReader) found() string {
	if r.pos >= len(r.data) {
		return "end of input"
	}
	switch c := r.data[r.pos]; {
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == '"':
		return "string"
	case c == '-' || '0' <= c && c <= '9':
		return "number"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	default:
		return fmt.Sprintf("%q", c)
	}
}

func (r *jsonReader) skipSpace() {
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
		default:
			return
		}
	}
}

// next skips white space and returns the byte that starts the next token, or
// 0 at the end of input or after an error (0 never starts a valid token).
func (r *jsonReader) next() byte {
	// Compact JSON has no white space: check for that first, inline.
	if r.pos < len(r.data) && r.data[r.pos] > ' ' && r.err == nil {
		return r.data[r.pos]
	}
	return r.nextAfterSpace()
}

func (r *jsonReader) nextAfterSpace() byte {
	if r.err != nil {
		return 0
	}
	r.skipSpace()
	if r.pos < len(r.data) {
		return r.data[r.pos]
	}
	return 0
}

// literal consumes the literal lit (true, false or null), which the caller
// has seen the first byte of. What follows it is checked by the caller, which
// expects a comma, a closing bracket or the end.
func (r *jsonReader) literal(lit string) {
	if len(r.data)-r.pos < len(lit) || string(r.data[r.pos:r.pos+len(lit)]) != lit {
		r.failAt(r.pos, "invalid literal, want %s", lit)
		return
	}
	r.pos += len(lit)
}

// null consumes a null if one comes next and reports whether it did.
func (r *jsonReader) null() bool {
	if r.next() != 'n' {
		return false
	}
	r.literal("null")
	return true
}

// enter and leave count nesting like encoding/json's scanner, which allows
// maxJSONDepth levels counting the outermost.
func (r *jsonReader) enter() {
	r.pos++
	r.depth++
	if r.depth > maxJSONDepth {
		r.failAt(r.pos-1, "nesting deeper than %d", maxJSONDepth)
	}
}

func (r *jsonReader) leave() {
	r.pos++
	r.depth--
}

// beginObject starts reading an object into a struct or map and reads its
// first key (see nextMember). It returns false for {} and for null, which
// encoding/json ignores when decoding into a struct: the target keeps its
// value. Callers whose target can be nil (pointers, maps) check null first.
//
//	for ok := r.beginObject(); ok; ok = r.nextMember() { switch string(r.key) ... }
func (r *jsonReader) beginObject() bool {
	switch r.next() {
	case '{':
		r.enter()
		if r.next() == '}' {
			r.leave()
			return false
		}
		return r.memberKey()
	case 'n':
		r.literal("null")
		return false
	}
	r.typeError("an object")
	return false
}

// nextMember moves past the value just read to the next member's key,
// returning false at the end of the object.
func (r *jsonReader) nextMember() bool {
	switch r.next() {
	case ',':
		r.pos++
		r.next()
		return r.memberKey()
	case '}':
		r.leave()
		return false
	case 0:
		if r.err != nil {
			return false
		}
	}
	r.failAt(r.pos, "want , or } after object member, found %s", r.found())
	return false
}

// memberKey reads a key and its colon, leaving r.key set.
func (r *jsonReader) memberKey() bool {
	if r.pos >= len(r.data) || r.data[r.pos] != '"' {
		r.failAt(r.pos, "want a string key, found %s", r.found())
		return false
	}
	r.keyPos = r.pos
	r.key = r.stringBytes(&r.keyBuf)
	if r.next() != ':' {
		r.failAt(r.pos, "want : after object key, found %s", r.found())
		return false
	}
	r.pos++
	return r.err == nil
}

// beginArray starts reading an array and returns false if it is empty;
// nextElem moves to the next element. Null is the caller's to handle.
func (r *jsonReader) beginArray() bool {
	if r.next() != '[' {
		r.typeError("an array")
		return false
	}
	r.enter()
	if r.next() == ']' {
		r.leave()
		return false
	}
	return r.err == nil
}

func (r *jsonReader) nextElem() bool {
	switch r.next() {
	case ',':
		r.pos++
		return true
	case ']':
		r.leave()
		return false
	case 0:
		if r.err != nil {
			return false
		}
	}
	r.failAt(r.pos, "want , or ] after array element, found %s", r.found())
	return false
}

// stringBytes consumes the string token at the current position and returns
// its contents unescaped. Strings without escapes that are valid UTF-8, nearly
// all of them, are returned as a sub-slice of the input; others are decoded
// into *buf, which later calls reuse.
func (r *jsonReader) stringBytes(buf *[]byte) []byte {
	d := r.data
	start := r.pos + 1
	i := start
	for i < len(d) {
		// Look at eight bytes at a time, stopping at the first that needs a
		// closer look.
		if len(d)-i >= 8 {
			m := specialBytes(binary.LittleEndian.Uint64(d[i:]))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) / 8
		}
		c := d[i]
		if c < utf8.RuneSelf {
			if plainASCII[c] { // only in the last few bytes of the input
				i++
				continue
			}
			if c == '"' {
				r.pos = i + 1
				return d[start:i]
			}
			break // an escape or a control character
		}
		if rn, size := utf8.DecodeRune(d[i:]); rn != utf8.RuneError || size != 1 {
			i += size
			continue
		}
		break // invalid UTF-8
	}
	return r.unescape(start, i, buf)
}

// specialBytes returns a mask with the high bit set of each of the eight
// bytes of w (little-endian) that is a quote, a backslash, a control character
// or not ASCII, using the "has a byte less than n" test of Bit Twiddling
// Hacks: subtracting n from an ASCII byte sets its high bit if the byte is
// below n. A byte below n also borrows from the byte above it, so bits above
// the lowest may be wrong, but the lowest set bit marks the first special byte.
func specialBytes(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote := w ^ ones*'"'   // zero bytes where w has '"'
	bslash := w ^ ones*'\\' // zero bytes where w has '\\'
	return ((w - ones*' ') | (quote - ones) | (bslash - ones) | w) & highs
}

// unescape decodes the string starting at start, of which the bytes before i
// need no decoding, as encoding/json does: escapes are resolved, a UTF-16
// surrogate pair in two \u escapes becomes one rune, and each byte of invalid
// UTF-8 and each unpaired surrogate becomes U+FFFD.
func (r *jsonReader) unescape(start, i int, buf *[]byte) []byte {
	d := r.data
	b := append((*buf)[:0], d[start:i]...)
	for i < len(d) {
		switch c := d[i]; {
		case c == '"':
			r.pos = i + 1
			*buf = b
			return b
		case c == '\\':
			if i+1 >= len(d) {
				r.failAt(len(d), "unterminated string")
				return nil
			}
			switch e := d[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				rn := hex4(d, i+2)
				if rn < 0 {
					r.failAt(i, "invalid \\u escape")
					return nil
				}
				i += 6
				if utf16.IsSurrogate(rn) {
					// A pair is consumed whole; anything else makes this
					// half U+FFFD and leaves what follows to be read on
					// its own.
					rn2 := rune(-1)
					if i+1 < len(d) && d[i] == '\\' && d[i+1] == 'u' {
						rn2 = hex4(d, i+2)
					}
					if rn = utf16.DecodeRune(rn, rn2); rn != utf8.RuneError {
						i += 6
					}
				}
				b = utf8.AppendRune(b, rn)
				continue
			default:
				r.failAt(i, "invalid escape \\%c in string", e)
				return nil
			}
			i += 2
		case c < ' ':
			r.failAt(i, "control character %#x in string", c)
			return nil
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			rn, size := utf8.DecodeRune(d[i:]) // RuneError, size 1 for a bad byte
			b = utf8.AppendRune(b, rn)
			i += size
		}
	}
	r.failAt(len(d), "unterminated string")
	return nil
}

// hex4 decodes the four hex digits at d[i:], or returns -1.
func hex4(d []byte, i int) rune {
	if len(d)-i < 4 {
		return -1
	}
	var rn rune
	for _, c := range d[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		rn = rn<<4 | rune(c)
	}
	return rn
}

// number consumes a number token, checking JSON's grammar (which is stricter
// than strconv's: no '+', no leading zeros, no hex, no "Inf"), and returns it.
func (r *jsonReader) number() []byte {
	d, start := r.data, r.pos
	i := start
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		i = digits(d, i+1)
	default:
		r.failAt(start, "invalid number")
		return nil
	}
	if i < len(d) && d[i] == '.' {
		j := digits(d, i+1)
		if j == i+1 {
			r.failAt(j, "invalid number: no digits after the decimal point")
			return nil
		}
		i = j
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := digits(d, i)
		if j == i {
			r.failAt(j, "invalid number: no digits in the exponent")
			return nil
		}
		i = j
	}
	r.pos = i
	return d[start:i]
}

func digits(d []byte, i int) int {
	for i < len(d) && '0' <= d[i] && d[i] <= '9' {
		i++
	}
	return i
}

// skipValue consumes one value of any type, checking its syntax.
func (r *jsonReader) skipValue() {
	switch c := r.next(); {
	case c == '{':
		for ok := r.beginObject(); ok; ok = r.nextMember() {
			r.skipValue()
		}
	case c == '[':
		for ok := r.beginArray(); ok; ok = r.nextElem() {
			r.skipValue()
		}
	case c == '"':
		r.stringBytes(&r.strBuf)
	case c == '-' || '0' <= c && c <= '9':
		r.number()
	case c == 't':
		r.literal("true")
	case c == 'f':
		r.literal("false")
	case c == 'n':
		r.literal("null")
	default:
		r.failAt(r.pos, "want a value, found %s", r.found())
	}
}

// The value readers below each read one value into *dst. As in encoding/json,
// null leaves a string, number, boolean or struct untouched, and any other
// mismatch between the JSON type and the field's type is an error.

func readString[S ~string](r *jsonReader, dst *S) {
	switch r.next() {
	case '"':
		if b := r.stringBytes(&r.strBuf); r.err == nil {
			*dst = S(b)
		}
	case 'n':
		r.literal("null")
	default:
		r.typeError("a string")
	}
}

// integer reads an integer of the given size. Like encoding/json, which uses
// strconv.ParseInt on the token, it refuses fractions and exponents even when
// the value is whole ("1.0", "1e3").
func (r *jsonReader) integer(bits int) (int64, bool) {
	switch c := r.next(); {
	case c == '-' || '0' <= c && c <= '9':
		start := r.pos
		tok := r.number()
		if r.err != nil {
			return 0, false
		}
		n, err := strconv.ParseInt(string(tok), 10, bits)
		if err != nil {
			r.failAt(start, "want a %d-bit integer for %q, found %s", bits, r.key, tok)
			return 0, false
		}
		return n, true
	case c == 'n':
		r.literal("null")
	default:
		r.typeError("an integer")
	}
	return 0, false
}

func readInt64[I ~int64](r *jsonReader, dst *I) {
	if n, ok := r.integer(64); ok {
		*dst = I(n)
	}
}

func (r *jsonReader) int(dst *int) {
	if n, ok := r.integer(strconv.IntSize); ok {
		*dst = int(n)
	}
}

func (r *jsonReader) float(dst *float64) {
	switch c := r.next(); {
	case c == '-' || '0' <= c && c <= '9':
		start := r.pos
		tok := r.number()
		if r.err != nil {
			return
		}
		f, err := strconv.ParseFloat(string(tok), 64)
		if err != nil { // out of range
			r.failAt(start, "number %s for %q does not fit a float64", tok, r.key)
			return
		}
		*dst = f
	case c == 'n':
		r.literal("null")
	default:
		r.typeError("a number")
	}
}

func (r *jsonReader) bool(dst *bool) {
	switch r.next() {
	case 't':
		if r.literal("true"); r.err == nil {
			*dst = true
		}
	case 'f':
		if r.literal("false"); r.err == nil {
			*dst = false
		}
	case 'n':
		r.literal("null")
	default:
		r.typeError("a boolean")
	}
}

// raw reads any value into a json.RawMessage as encoding/json does: a copy of
// its bytes exactly as they appear (not compacted), including a null, which
// becomes the four bytes "null" rather than a nil message.
func (r *jsonReader) raw(dst *json.RawMessage) {
	if r.next() == 0 {
		r.typeError("a value")
		return
	}
	start := r.pos
	r.skipValue()
	if r.err == nil {
		*dst = append((*dst)[:0], r.data[start:r.pos]...)
	}
}

// time reads a time as time.Time.UnmarshalJSON does, which encoding/json
// calls with the string token still quoted and escaped: it parses RFC 3339
// and does not resolve escapes. Null leaves the time as it is.
func (r *jsonReader) time(dst *time.Time) {
	switch r.next() {
	case '"':
		start := r.pos
		if r.stringBytes(&r.strBuf); r.err != nil {
			return
		}
		if err := dst.UnmarshalJSON(r.data[start:r.pos]); err != nil {
			r.failAt(start, "%q: %v", r.key, err)
		}
	case 'n':
		r.literal("null")
	default:
		r.typeError("an RFC 3339 time string")
	}
}

// kind and tier read the string forms of Kind and Tier, as encoding/json does
// through their UnmarshalText methods, which get the unescaped string. Kind's
// is not called in the common case only because it allocates.
func (r *jsonReader) kind(dst *Kind) {
	switch r.next() {
	case '"':
		start := r.pos
		b := r.stringBytes(&r.strBuf)
		if r.err != nil {
			return
		}
		for k := KindSystem; k < numKinds; k++ {
			if string(b) == kindNames[k] {
				*dst = k
				return
			}
		}
		if err := dst.UnmarshalText(b); err != nil {
			r.failAt(start, "%v", err)
		}
	case 'n':
		r.literal("null")
	default:
		r.typeError("a chunk kind string")
	}
}

func (r *jsonReader) tier(dst *Tier) {
	switch r.next() {
	case '"':
		start := r.pos
		b := r.stringBytes(&r.strBuf)
		if r.err != nil {
			return
		}
		if err := dst.UnmarshalText(b); err != nil {
			r.failAt(start, "%v", err)
		}
	case 'n':
		r.literal("null")
	default:
		r.typeError("a tier string")
	}
}
