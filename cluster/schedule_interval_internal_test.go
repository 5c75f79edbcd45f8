package cluster

import (
	"errors"
	"testing"
	"time"
)

// A schedule added fires no more often than the cluster allows: an @every
// below a second or in fractions of one is refused rather than rounded,
// and any expression whose ticks come closer than MinScheduleInterval is
// refused, naming its interval; slower ones pass.
func TestScheduleMinimumInterval(t *testing.T) {
	now := time.Date(2030, 1, 2, 10, 0, 0, 0, time.UTC)
	check := func(cron string, min time.Duration) error {
		s := Schedule{Name: "s", Workflow: "cluster", Cron: cron}
		return s.check(now, min)
	}
	for _, bad := range []string{"@every 1ms", "@every 999ms", "@every 1500ms", "@every 0s"} {
		if err := check(bad, time.Second); !errors.Is(err, ErrBadSchedule) {
			t.Errorf("%q at a 1s minimum: %v, want ErrBadSchedule", bad, err)
		}
	}
	for _, ok := range []string{"@every 1s", "@every 2s", "* * * * * *", "@hourly"} {
		if err := check(ok, time.Second); err != nil {
			t.Errorf("%q at a 1s minimum: %v", ok, err)
		}
	}
	for _, bad := range []string{"@every 30s", "* * * * * *", "*/10 * * * * *", "* * * * *", "0,1 * * * *", "0-5 9 * * *"} {
		if err := check(bad, 5*time.Minute); !errors.Is(err, ErrBadSchedule) {
			t.Errorf("%q at a 5m minimum: %v, want ErrBadSchedule", bad, err)
		}
	}
	for _, ok := range []string{"@every 5m", "*/5 * * * *", "@hourly", "@daily", "0 9 * * 1-5", "CRON_TZ=Europe/Paris 0 9 * * *"} {
		if err := check(ok, 5*time.Minute); err != nil {
			t.Errorf("%q at a 5m minimum: %v", ok, err)
		}
	}
}
