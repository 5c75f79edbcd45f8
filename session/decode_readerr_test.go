package session

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// A reader's own error reaches Decode's caller as itself (inside a
// DecodeError naming the line), so that a server can tell a body past its
// limit (413) from a corrupt file (400).
func TestDecodeKeepsTheReadersError(t *testing.T) {
	var file bytes.Buffer
	if err := Encode(&file, FromUser("hello").Append(Note("n"))); err != nil {
		t.Fatal(err)
	}
	errCut := errors.New("cut")
	r := io.MultiReader(bytes.NewReader(file.Bytes()[:file.Len()/2]), errReader{errCut})
	_, err := Decode(r)
	var de *DecodeError
	if !errors.Is(err, errCut) || !errors.As(err, &de) {
		t.Fatalf("Decode = %v, want a DecodeError wrapping the reader's error", err)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
