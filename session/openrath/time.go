package openrath

import (
	"fmt"
	"time"
)

// parseTime reads a timestamp as Python's datetime.isoformat writes it
// ("2026-05-25T10:11:12.123456+00:00"); naive times are taken as UTC, as the
// original does. Python's times have microseconds, so finer digits are
// dropped: the time then survives isoTime and parseTime again.
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
		return t.UTC().Truncate(time.Microsecond), nil
	}
	return time.Time{}, fmt.Errorf("%q is not an ISO 8601 time", s)
}

// isoTime formats t as Python's datetime.isoformat does for an aware UTC
// time: with six digits of microseconds, or none when they are zero.
func isoTime(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 == 0 {
		return t.Format("2006-01-02T15:04:05") + "+00:00"
	}
	return t.Format("2006-01-02T15:04:05.000000") + "+00:00"
}
