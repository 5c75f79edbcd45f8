package storetest

import (
	"bytes"
	"testing"

	"github.com/openrath/rath/store/internal/backend"
)

// TamperSegment changes chunk k of an encoded segment the way a bad disk or
// a hand edit would — one letter of a string value changes case — keeping
// the JSON valid so that only the hash can tell. It returns the new bytes;
// backends' Harness.Tamper functions write them back with plain SQL.
func TamperSegment(t *testing.T, data []byte, k int) []byte {
	t.Helper()
	data = bytes.Clone(data)
	fs, err := backend.DecodeSegment(data)
	if err != nil {
		t.Fatal(err)
	}
	body := fs[k].Canonical // aliases data
	at := bytes.Index(body, []byte(`":"`))
	for at >= 0 && !(body[at+3] >= 'a' && body[at+3] <= 'z') {
		next := bytes.Index(body[at+3:], []byte(`":"`))
		if next < 0 {
			t.Fatal("no string value to tamper with")
		}
		at += 3 + next
	}
	if at < 0 {
		t.Fatal("no string value to tamper with")
	}
	body[at+3] -= 'a' - 'A'
	return data
}
