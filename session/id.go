package session

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strings"
	"time"
)

// ID names a session. It is "ses_" followed by a ULID: 26 Crockford base32
// characters whose first ten encode the creation time in milliseconds, so ids
// sort by creation time, and whose last sixteen are random.
type ID string

// ChunkID names a chunk by content: "sha256:" followed by 64 lowercase hex
// digits of the SHA-256 of the chunk's canonical encoding, which includes the
// id of its parent chunk.
type ChunkID string

const (
	idPrefix      = "ses_"
	chunkIDPrefix = "sha256:"
	crockford     = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
)

// NewID returns a fresh session id stamped with the current time.
func NewID() ID { return newIDAt(time.Now()) }

func newIDAt(t time.Time) ID {
	var raw [16]byte
	binary.BigEndian.PutUint64(raw[:8], uint64(t.UnixMilli())<<16)
	// Ten random bytes fill the low 80 bits. crypto/rand never fails on
	// supported platforms (it panics irrecoverably instead).
	_, _ = rand.Read(raw[6:])
	return IDOfBytes(raw)
}

// encodeULID writes the 128-bit value raw as 26 Crockford base32 digits,
// most significant first (the first digit carries only 3 bits).
func encodeULID(dst []byte, raw [16]byte) {
	hi := binary.BigEndian.Uint64(raw[:8])
	lo := binary.BigEndian.Uint64(raw[8:])
	for i := 25; i >= 0; i-- {
		dst[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
}

// Time returns the creation time encoded in a well-formed id, or the zero
// time for an id that is not one of ours.
func (id ID) Time() time.Time {
	if id.Validate() != nil {
		return time.Time{}
	}
	var ms uint64
	for _, c := range []byte(id[len(idPrefix) : len(idPrefix)+10]) {
		ms = ms<<5 | uint64(strings.IndexByte(crockford, c))
	}
	return time.UnixMilli(int64(ms)).UTC()
}

// Validate reports whether id has the form "ses_" + 26 Crockford digits.
func (id ID) Validate() error {
	s := string(id)
	if len(s) != len(idPrefix)+26 || !strings.HasPrefix(s, idPrefix) {
		return fmt.Errorf("%w: session id %q is not \"ses_\" + 26 base32 digits", ErrInvalid, s)
	}
	if s[len(idPrefix)] > '7' {
		return fmt.Errorf("%w: session id %q overflows 128 bits", ErrInvalid, s)
	}
	for i := len(idPrefix); i < len(s); i++ {
		if strings.IndexByte(crockford, s[i]) < 0 {
			return fmt.Errorf("%w: session id %q has %q, not a Crockford base32 digit", ErrInvalid, s, s[i])
		}
	}
	return nil
}

// Validate reports whether id has the form "sha256:" + 64 lowercase hex digits.
func (id ChunkID) Validate() error {
	s := string(id)
	if len(s) != len(chunkIDPrefix)+64 || !strings.HasPrefix(s, chunkIDPrefix) {
		return fmt.Errorf("%w: chunk id %q is not \"sha256:\" + 64 hex digits", ErrInvalid, s)
	}
	// One table lookup per digit: stores validate every id they load.
	var bad byte
	for _, c := range []byte(s[len(chunkIDPrefix):]) {
		bad |= notLowerHex[c]
	}
	if bad != 0 {
		return fmt.Errorf("%w: chunk id %q has a character that is not a lowercase hex digit", ErrInvalid, s)
	}
	return nil
}

var notLowerHex = func() (t [256]byte) {
	for i := range t {
		if c := byte(i); (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			t[i] = 1
		}
	}
	return t
}()

// Short returns the first 12 hex digits of the id, for display.
func (id ChunkID) Short() string {
	s := strings.TrimPrefix(string(id), chunkIDPrefix)
	if len(s) > 12 {
		s = s[:12]
	}
	return s
}

// IDOfBytes returns the session id whose ULID is the 128-bit value raw
// (big-endian), for ids that carry another system's 128-bit names.
func IDOfBytes(raw [16]byte) ID {
	var out [len(idPrefix) + 26]byte
	copy(out[:], idPrefix)
	encodeULID(out[len(idPrefix):], raw)
	return ID(out[:])
}

// Bytes returns the 128-bit value of a well-formed id's ULID (big-endian).
func (id ID) Bytes() ([16]byte, error) {
	var raw [16]byte
	if err := id.Validate(); err != nil {
		return raw, err
	}
	var hi, lo uint64
	for _, c := range []byte(id[len(idPrefix):]) {
		d := uint64(strings.IndexByte(crockford, c))
		hi = hi<<5 | lo>>59
		lo = lo<<5 | d
	}
	binary.BigEndian.PutUint64(raw[:8], hi)
	binary.BigEndian.PutUint64(raw[8:], lo)
	return raw, nil
}
