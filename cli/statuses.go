package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/openrath/rath"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/store"
)

// parseStatuses reads --status: stored statuses and interrupted.
func parseStatuses(arg string) ([]store.Status, error) {
	var out []store.Status
	for _, s := range strings.Split(arg, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		st := store.Status(s)
		if !st.Valid() && st != rath.StatusInterrupted && st != rath.StatusNeedsReview {
			return nil, usageErr("unknown status %q (open, active, paused, interrupted, needs_review, closed, archived, failed)", s)
		}
		out = append(out, st)
	}
	return out, nil
}

// listJudged lists the sessions f selects whose status, as a person reads
// it (rath.Runtime.Statuses), is one of want (any if none), with that
// status in place of the stored one. Interrupted sessions are stored open,
// active or paused: asking for any of these lists those and judges them
// before the limit applies.
func listJudged(ctx context.Context, rt *rath.Runtime, f store.Filter, want []store.Status) ([]store.Info, error) {
	judged := false
	for _, s := range want {
		stored := []store.Status{s}
		if s == rath.StatusInterrupted || s == rath.StatusNeedsReview {
			stored = []store.Status{store.StatusOpen, store.StatusActive, store.StatusPaused}
		}
		for _, st := range stored {
			judged = judged || st == store.StatusOpen || st == store.StatusActive || st == store.StatusPaused
			if !slices.Contains(f.Status, st) {
				f.Status = append(f.Status, st)
			}
		}
	}
	limit := f.Limit
	if judged {
		f.Limit = 0
	}
	infos, err := rt.Store.List(ctx, f)
	if err != nil {
		return nil, err
	}
	statuses := rt.Statuses(ctx, infos)
	out := make([]store.Info, 0, len(infos))
	for i, info := range infos {
		if len(want) > 0 && !slices.Contains(want, statuses[i]) {
			continue
		}
		info.Status = statuses[i]
		out = append(out, info)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out, nil
}

// resumeHint is what show adds to an interrupted session's status.
func resumeHint(info store.Info) string {
	run := string(info.ID)
	if info.Labels[rath.OwnerLabel] == "" {
		run = info.Labels[runctx.Label]
	}
	switch info.Status {
	case rath.StatusInterrupted:
		return fmt.Sprintf("  (it stopped unfinished; rath resume %s finishes it)", run)
	case rath.StatusNeedsReview:
		return fmt.Sprintf("  (a call's effect is unknown; rath review %s --happened|--not-happened|--abort settles it)", run)
	}
	return ""
}
