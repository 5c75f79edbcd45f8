package secret

import (
	"fmt"
	"log/slog"
)

// Redacted is how a Value prints.
const Redacted = "[secret]"

// Value is a resolved secret. Every printed form of it is "[secret]":
// String, GoString, all of fmt's verbs, JSON, text and slog. Reveal gives
// the value itself, to hand to what needs it (an HTTP header, a client's
// key, a process's environment), never to what records (a chunk, an
// event, a span, a log line, an export, an error message).
//
// The value is held in a closure, which no reflection reaches: fmt
// printing a struct that holds a Value in an unexported field (where it
// cannot call the methods) shows a function's address, not the value.
// The zero Value is empty.
type Value struct {
	reveal func() string
	ref    Ref
}

// NewValue makes a Value of s resolved from ref (a resolver's result; ref
// may be zero for a value given literally).
func NewValue(s string, ref Ref) Value { return Value{reveal: func() string { return s }, ref: ref} }

// Reveal returns the value. Keep it out of anything recorded.
func (v Value) Reveal() string {
	if v.reveal == nil {
		return ""
	}
	return v.reveal()
}

// Ref is the reference the value was resolved from (zero for a literal).
func (v Value) Ref() Ref { return v.ref }

// IsZero reports whether the value is empty.
func (v Value) IsZero() bool { return v.Reveal() == "" }

// String implements fmt.Stringer: "[secret]".
func (v Value) String() string { return Redacted }

// GoString implements fmt.GoStringer (%#v): secret.Value("[secret]").
func (v Value) GoString() string { return `secret.Value("` + Redacted + `")` }

// Format implements fmt.Formatter: every verb prints "[secret]" (%#v
// prints GoString).
func (v Value) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = f.Write([]byte(v.GoString()))
		return
	}
	_, _ = f.Write([]byte(Redacted))
}

// MarshalJSON implements json.Marshaler: the string "[secret]".
func (v Value) MarshalJSON() ([]byte, error) { return []byte(`"` + Redacted + `"`), nil }

// MarshalText implements encoding.TextMarshaler: "[secret]".
func (v Value) MarshalText() ([]byte, error) { return []byte(Redacted), nil }

// LogValue implements slog.LogValuer: "[secret]".
func (v Value) LogValue() slog.Value { return slog.StringValue(Redacted) }
