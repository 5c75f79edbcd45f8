package openrath

import (
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	want := time.Date(2026, 5, 25, 10, 11, 12, 345678000, time.UTC)
	for _, in := range []string{
		"2026-05-25T10:11:12.345678+00:00",
		"2026-05-25T10:11:12.345678Z",
		"2026-05-25T12:11:12.345678+02:00",
		"2026-05-25T10:11:12.345678",
		"2026-05-25 10:11:12.345678+00:00",
	} {
		got, err := parseTime(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if got := isoTime(want); got != "2026-05-25T10:11:12.345678+00:00" {
		t.Errorf("isoTime = %q", got)
	}
	// As Python writes a time without microseconds; finer digits dropped.
	whole := time.Date(2026, 11, 24, 12, 1, 17, 0, time.UTC)
	if got := isoTime(whole); got != "2026-11-24T12:01:17+00:00" {
		t.Errorf("isoTime(whole second) = %q", got)
	}
	if got, err := parseTime("2026-11-24T12:01:17.000000999+00:00"); err != nil || !got.Equal(whole) {
		t.Errorf("parseTime(nanoseconds) = %v, %v; want %v", got, err, whole)
	}
	if _, err := parseTime("0000-01-01T00:00:00+01:00"); err == nil {
		t.Error("a time before year 0 in UTC was accepted")
	}
}
