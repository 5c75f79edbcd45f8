package session

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzNewToolCall: arguments become their compact JSON, blank ones {},
// anything else stays as text.
func FuzzNewToolCall(f *testing.F) {
	for _, s := range []string{"", "  ", `{"a":1}`, ` {"a" : [1, 2]} `, "{\"s\":\"a b\\tc\"}", "{not json", "[1,\n2]", `"x"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, args string) {
		tc := NewToolCall("c", "t", args)
		trimmed := bytes.TrimSpace([]byte(args))
		switch {
		case len(trimmed) == 0:
			if string(tc.Args) != "{}" || tc.ArgsText != "" {
				t.Fatalf("blank %q: %+v", args, tc)
			}
		case json.Valid(trimmed):
			var want bytes.Buffer
			if err := json.Compact(&want, trimmed); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(tc.Args, want.Bytes()) || tc.ArgsText != "" {
				t.Fatalf("%q: args %q, want %q", args, tc.Args, want.Bytes())
			}
		default:
			if tc.Args != nil || tc.ArgsText != args {
				t.Fatalf("invalid %q: %+v", args, tc)
			}
		}
	})
}
