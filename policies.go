package rath

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/openrath/rath/policy"
)

// openPolicies opens the policy directory of cfg (resolved): followed
// whether or not it exists, unless it was named (Config.Policies,
// $RATH_POLICIES), when it must. Files that do not load are logged: the
// projects of each keep its last good rules, or deny, until it is fixed.
func openPolicies(cfg Config, named bool) (*policy.Dir, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	if named {
		if _, err := os.Stat(cfg.Policies); err != nil {
			return nil, fmt.Errorf("rath: policies: %w", err)
		}
	}
	d, err := policy.OpenDir(cfg.Policies, policy.WithLogger(log))
	if err != nil {
		return nil, fmt.Errorf("rath: policies: %w", err)
	}
	if err := d.Check(); err != nil {
		log.Warn("a policy file does not load: its projects' actions are denied until it is fixed", "err", err)
	}
	return d, nil
}
