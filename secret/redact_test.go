package secret

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

func TestRedactor(t *testing.T) {
	var r Redactor
	r.Add(NewValue(canary, Ref{}), NewValue("abc", Ref{}), Value{})
	r.AddString(canary+"-longer", canary)
	if got := r.Values(); len(got) != 2 || got[0] != canary+"-longer" {
		t.Fatalf("values %q", got)
	}
	in := "key " + canary + " and " + canary + "-longer; abc stays"
	want := "key [redacted] and [redacted]; abc stays"
	if got := r.String(in); got != want {
		t.Errorf("String: %q", got)
	}
	if got := string(r.Bytes([]byte(in))); got != want {
		t.Errorf("Bytes: %q", got)
	}
	plain := []byte("nothing here")
	if got := r.Bytes(plain); &got[0] != &plain[0] {
		t.Error("Bytes copied clean input")
	}

	base := &fs.PathError{Op: "open", Path: canary, Err: fs.ErrNotExist}
	err := r.Error(fmt.Errorf("wrapped: %w", base))
	if err.Error() != "wrapped: open [redacted]: file does not exist" {
		t.Errorf("Error: %v", err)
	}
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || errors.Unwrap(err) != nil {
		t.Errorf("Is/As/Unwrap: %v", err)
	}
	clean := errors.New("clean")
	if r.Error(clean) != clean || r.Error(nil) != nil {
		t.Error("a clean error was wrapped")
	}

	var nilR *Redactor
	if nilR.String(in) != in || string(nilR.Bytes([]byte(in))) != in || nilR.Error(clean) != clean || nilR.Values() != nil {
		t.Error("nil Redactor")
	}
}
