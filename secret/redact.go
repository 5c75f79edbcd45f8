package secret

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"sync"
)

// Replacement is what a Redactor puts in place of a value.
const Replacement = "[redacted]"

// MinRedactLen is the shortest value a Redactor replaces: shorter ones
// would blot out ordinary text.
const MinRedactLen = 4

// Redactor replaces known values with "[redacted]" in text that might
// echo them: an error from a provider that quotes the key it was sent,
// the output of a server that prints its token. The zero Redactor (and a
// nil one) knows no value; Add teaches it. It is safe for concurrent use.
type Redactor struct {
	mu   sync.RWMutex
	vals []string // longest first
}

// Add teaches r the values of vs (empty ones and ones shorter than
// MinRedactLen are skipped).
func (r *Redactor) Add(vs ...Value) {
	for _, v := range vs {
		r.AddString(v.Reveal())
	}
}

// AddString teaches r values given as strings.
func (r *Redactor) AddString(ss ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range ss {
		if len(s) < MinRedactLen || slices.Contains(r.vals, s) {
			continue
		}
		r.vals = append(r.vals, s)
	}
	// Longest first, so that a value holding another is replaced whole.
	slices.SortStableFunc(r.vals, func(a, b string) int { return len(b) - len(a) })
}

// Values returns the values r knows (to hand to another redacting
// mechanism, such as model.Options.Secrets). Keep them out of anything
// recorded.
func (r *Redactor) Values() []string {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.vals)
}

// String returns s with every known value replaced.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, v := range r.vals {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Replacement)
		}
	}
	return s
}

// Bytes returns b with every known value replaced (b itself when none
// is in it).
func (r *Redactor) Bytes(b []byte) []byte {
	if r == nil {
		return b
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, v := range r.vals {
		if bytes.Contains(b, []byte(v)) {
			b = bytes.ReplaceAll(b, []byte(v), []byte(Replacement))
		}
	}
	return b
}

// Error returns err with every known value replaced in its message. An
// error whose message holds none is returned as it is; one that does is
// wrapped so that errors.Is and errors.As still reach what it wraps, but
// without an Unwrap method, so nothing walking the chain prints the
// unredacted message.
func (r *Redactor) Error(err error) error {
	if err == nil || r == nil {
		return err
	}
	msg := err.Error()
	clean := r.String(msg)
	if clean == msg {
		return err
	}
	return &redacted{msg: clean, err: err}
}

type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }

func (e *redacted) Is(target error) bool { return errors.Is(e.err, target) }

func (e *redacted) As(target any) bool { return errors.As(e.err, target) }
