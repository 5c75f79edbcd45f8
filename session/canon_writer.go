package session

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// canonWriter writes RFC 8785 canonical JSON directly from Go values, so
// hashing a chunk needs neither reflection nor a second parse. Callers emit
// object members in sorted key order themselves; TestCanonWriterMatchesJSON
// checks the result against CanonicalJSON(json.Marshal(chunk)) for every kind.
//
// Member helpers follow encoding/json's rules for the fields they mirror:
// the *Opt variants skip empty values (omitempty), the others always write.
type canonWriter struct {
	b     []byte
	first bool // no member written yet in the current object
	err   error
}

func (w *canonWriter) open() { w.b = append(w.b, '{'); w.first = true }

func (w *canonWriter) close() { w.b = append(w.b, '}'); w.first = false }

// key writes a member name. Names are Go constants that need no escaping.
func (w *canonWriter) key(k string) {
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.first = false
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
}

func (w *canonWriter) str(k, v string) { w.key(k); w.b = appendCanonString(w.b, v) }

func (w *canonWriter) strOpt(k, v string) {
	if v != "" {
		w.str(k, v)
	}
}

func (w *canonWriter) int(k string, v int64) { w.key(k); w.b = appendCanonInt(w.b, v) }

func (w *canonWriter) intOpt(k string, v int64) {
	if v != 0 {
		w.int(k, v)
	}
}

func (w *canonWriter) float(k string, v float64) {
	w.key(k)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		w.fail(fmt.Errorf("%w: %s is %v, which JSON cannot represent", ErrInvalid, k, v))
		v = 0
	}
	w.b = jcsAppendNumber(w.b, v)
}

func (w *canonWriter) floatOpt(k string, v float64) {
	if v != 0 {
		w.float(k, v)
	}
}

func (w *canonWriter) bool(k string, v bool) {
	w.key(k)
	if v {
		w.b = append(w.b, "true"...)
	} else {
		w.b = append(w.b, "false"...)
	}
}

func (w *canonWriter) boolOpt(k string, v bool) {
	if v {
		w.key(k)
		w.b = append(w.b, "true"...)
	}
}

func (w *canonWriter) time(k string, t time.Time) {
	w.key(k)
	if y := t.Year(); y < 0 || y > 9999 {
		w.fail(fmt.Errorf("%w: %s year %d outside [0,9999]", ErrInvalid, k, y))
	}
	w.b = append(w.b, '"')
	w.b = t.AppendFormat(w.b, time.RFC3339Nano)
	w.b = append(w.b, '"')
}

func (w *canonWriter) rawOpt(k string, r json.RawMessage) {
	if len(r) == 0 {
		return
	}
	w.key(k)
	var err error
	if w.b, err = AppendCanonicalJSON(w.b, r); err != nil {
		w.fail(fmt.Errorf("%w: %s: %v", ErrInvalid, k, err))
	}
}

func (w *canonWriter) strsOpt(k string, vs []string) {
	if len(vs) == 0 {
		return
	}
	w.key(k)
	w.b = append(w.b, '[')
	for i, v := range vs {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = appendCanonString(w.b, v)
	}
	w.b = append(w.b, ']')
}

// strMapOpt writes a string map with keys in UTF-16 order, as RFC 8785 sorts.
func (w *canonWriter) strMapOpt(k string, m map[string]string) {
	if len(m) == 0 {
		return
	}
	keys := make([]string, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	slices.SortFunc(keys, compareUTF16)
	w.key(k)
	w.b = append(w.b, '{')
	for i, key := range keys {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = appendCanonString(w.b, key)
		w.b = append(w.b, ':')
		w.b = appendCanonString(w.b, m[key])
	}
	w.b = append(w.b, '}')
}

// list writes a member holding a list of n objects, each written by item.
// nil lists are written as null unless omitEmpty, as encoding/json does.
func list[T any](w *canonWriter, k string, xs []T, omitEmpty bool, item func(*canonWriter, *T)) {
	if omitEmpty && len(xs) == 0 {
		return
	}
	w.key(k)
	if xs == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = append(w.b, '[')
	for i := range xs {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		item(w, &xs[i])
	}
	w.b = append(w.b, ']')
}

func (w *canonWriter) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// appendCanonInt writes an integer as RFC 8785 does: through float64, which
// is exact below 2^53 (all counts and durations we record are).
func appendCanonInt(dst []byte, v int64) []byte {
	if v > -1<<53 && v < 1<<53 {
		return strconv.AppendInt(dst, v, 10)
	}
	return jcsAppendNumber(dst, float64(v))
}

const hexDigits = "0123456789abcdef"

// appendEscaped writes the RFC 8785 escape of '"', '\\' or a control
// character: the short form where JSON has one, else \u00xx in lowercase hex.
func appendEscaped(dst []byte, b byte) []byte {
	switch {
	case b == '"' || b == '\\':
		return append(dst, '\\', b)
	case b >= '\b' && b <= '\r' && b != '\v':
		return append(dst, '\\', "btn_fr"[b-'\b'])
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&15])
}

// appendCanonString writes s as an RFC 8785 string: only '"', '\\' and
// control characters are escaped. Invalid UTF-8 becomes U+FFFD, exactly as
// encoding/json does, so a hash never depends on bytes JSON cannot carry.
func appendCanonString[S string | []byte](dst []byte, s S) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight bytes at a time while none needs a look.
		for i+8 <= len(s) && plain8(load8(s, i)) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = appendEscaped(append(dst, s[start:i]...), b)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i++
			start = i
			continue
		}
		i += size
	}
	return append(append(dst, s[start:]...), '"')
}

// load8 is the eight bytes of s at i as a little-endian word.
func load8[S string | []byte](s S, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

const (
	ones = 0x0101010101010101
	high = 0x8080808080808080
)

// plain8 reports whether none of the eight bytes of x needs escaping or
// UTF-8 checking: each is ASCII, at least 0x20, and neither '"' nor '\\'.
// A byte b is below n (n ≤ 0x80) when b-n borrows into its high bit while
// b's own high bit is clear; a byte equals c when b^c is below 1.
func plain8(x uint64) bool {
	below := func(v uint64, n byte) uint64 { return (v - ones*uint64(n)) &^ v & high }
	return (x&high | below(x, 0x20) | below(x^(ones*'"'), 1) | below(x^(ones*'\\'), 1)) == 0
}

// compareUTF16 orders strings by their UTF-16 code units, as RFC 8785 sorts
// object members. It differs from byte order only between characters above
// U+FFFF and those in U+E000..U+FFFF.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			a1, a2 := utf16Units(ra)
			b1, b2 := utf16Units(rb)
			if a1 != b1 {
				return int(a1) - int(b1)
			}
			return int(a2) - int(b2)
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

// utf16Units returns the UTF-16 code units of r; the second is 0 for a
// rune in the Basic Multilingual Plane.
func utf16Units(r rune) (uint16, uint16) {
	if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
		return uint16(r1), uint16(r2)
	}
	return uint16(r), 0
}
