package sqlite

import (
	"errors"
	"testing"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

func TestChangeEncoding(t *testing.T) {
	s := session.FromUser("x")
	evs := []store.Event{
		{ID: s.ID(), Head: s.Head(), Len: 1},
		{ID: "ses_other", Head: "", Len: 0, Labels: true},
		{ID: s.ID(), Head: s.Head(), Len: 1 << 20, Labels: true},
	}
	b := encodeEvents(nil, evs)
	got, err := decodeEvents(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(evs) {
		t.Fatalf("decoded %d events, want %d", len(got), len(evs))
	}
	for i := range evs {
		if got[i] != evs[i] {
			t.Fatalf("event %d = %+v, want %+v", i, got[i], evs[i])
		}
	}
	// Every truncation but the cut between events fails cleanly.
	ends := map[int]bool{1: true}
	for i := range evs {
		ends[len(encodeEvents(nil, evs[:i+1]))] = true
	}
	for n := range len(b) {
		_, err := decodeEvents(b[:n])
		if ends[n] {
			if err != nil {
				t.Fatalf("cut at an event boundary %d: %v", n, err)
			}
		} else if !errors.Is(err, ErrChangeLog) {
			t.Fatalf("truncated at %d: %v, want ErrChangeLog", n, err)
		}
	}
	if _, err := decodeEvents([]byte{9, 0}); !errors.Is(err, ErrChangeLog) {
		t.Fatalf("unknown format: %v", err)
	}
}
