package openrath

import (
	"fmt"
	"time"

	"github.com/openrath/rath/session"
)

// parseTime reads a timestamp as Python's datetime.isoformat writes it
// ("2026-05-25T10:11:12.123456+00:00"); naive times are taken as UTC, as the
// original does.
func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{
		"2006-01-02T15:04:05.999999999Z07:00",
		"2006-01-02T15:04:05.999999999",
		"2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05.999999999",
		"2006-01-02",
	} {
		t, err := time.Parse(layout, s)
		if err != nil {
			continue
		}
		// Chunk times are encoded as RFC 3339, which has four-digit years.
		if y := t.UTC().Year(); y < 0 || y > 9999 {
			return time.Time{}, fmt.Errorf("%q is out of range", s)
		}
		return t.UTC(), nil
	}
	return time.Time{}, fmt.Errorf("%q is not an ISO 8601 time", s)
}

// isoTime formats t as Python's datetime.isoformat does for an aware UTC
// time with microseconds.
func isoTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000") + "+00:00"
}

// sessionTimes returns the times of the first and last chunks, or now twice
// for an empty session.
func sessionTimes(s *session.Session) (first, last time.Time) {
	if s.Len() == 0 {
		now := time.Now()
		return now, now
	}
	l, _ := s.Last()
	return s.Chunk(0).Time, l.Time
}
