package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/openrath/rath/session"
)

// witnessLine is one line of a witness file: a lane's length and head as
// its Log saw them at Time, hashed and chained to the line before.
type witnessLine struct {
	Time time.Time       `json:"time"`
	Lane session.ID      `json:"lane"`
	Len  int64           `json:"len"`
	Head session.ChunkID `json:"head"`
	// Sealed: the lane takes no more records; Len is its exact length.
	Sealed bool `json:"sealed,omitempty"`
	// Prev is the hash of the file's line before ("" on its first).
	Prev string `json:"prev,omitempty"`
	// Hash is the SHA-256 of the line's JSON without Hash, Prev included:
	// "sha256:" and 64 lowercase hex digits.
	Hash string `json:"hash,omitempty"`
}

// maxWitnessLine bounds a witness line, in bytes without its newline (a
// line the Log writes is about 330).
const maxWitnessLine = 1024

// sum is the hash l's Hash should hold: the SHA-256 of l's JSON without
// Hash.
func (l witnessLine) sum() (string, error) {
	l.Hash = ""
	data, err := json.Marshal(l)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(h[:]), nil
}

// encode is l, chained to prev and hashed, as a line of the file
// (newline included), and its hash.
func (l witnessLine) encode(prev string) ([]byte, string, error) {
	l.Time = l.Time.UTC().Truncate(time.Microsecond)
	l.Prev = prev
	var err error
	if l.Hash, err = l.sum(); err != nil {
		return nil, "", fmt.Errorf("audit: witness line: %w", err)
	}
	data, err := json.Marshal(l)
	if err != nil {
		return nil, "", fmt.Errorf("audit: witness line: %w", err)
	}
	return append(data, '\n'), l.Hash, nil
}

// decodeWitnessLine reads one line of a witness file (without its
// newline). Only the exact form encode writes is accepted: unknown or
// repeated fields, another spelling, a bad lane, head or hash are errors.
// Whether Hash matches the line is the caller's check (sum), so that an
// edited line can be named as such.
func decodeWitnessLine(b []byte) (witnessLine, error) {
	if len(b) > maxWitnessLine {
		return witnessLine{}, fmt.Errorf("%d bytes, more than a witness line's %d", len(b), maxWitnessLine)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var l witnessLine
	if err := dec.Decode(&l); err != nil {
		return witnessLine{}, err
	}
	if dec.More() {
		return witnessLine{}, errors.New("data after the line's JSON")
	}
	if err := l.Lane.Validate(); err != nil {
		return witnessLine{}, fmt.Errorf("its lane: %w", err)
	}
	if err := l.Head.Validate(); err != nil {
		return witnessLine{}, fmt.Errorf("its head: %w", err)
	}
	if l.Len < 0 {
		return witnessLine{}, fmt.Errorf("its length %d is negative", l.Len)
	}
	if session.ChunkID(l.Hash).Validate() != nil {
		return witnessLine{}, fmt.Errorf("its hash %q is not sha256: and 64 hex digits", l.Hash)
	}
	if l.Prev != "" && session.ChunkID(l.Prev).Validate() != nil {
		return witnessLine{}, fmt.Errorf("its prev %q is not sha256: and 64 hex digits", l.Prev)
	}
	again, err := json.Marshal(l)
	if err != nil {
		return witnessLine{}, err
	}
	if !bytes.Equal(again, b) {
		return witnessLine{}, errors.New("it is not in the canonical form a witness line is written in")
	}
	return l, nil
}
