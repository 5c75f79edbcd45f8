package cli

import (
	"strconv"
	"time"

	"github.com/openrath/rath"
	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/store"
)

// lsRow is one session as `rath ls --json` lists it: its store.Info, and
// for a run what `rath ls` shows of it.
type lsRow struct {
	store.Info
	Run *runSummary `json:"run,omitempty"`
}

// runSummary is a run as `rath ls` shows it, read from its input
// session's Info alone: its labels (workflow, steps, a cluster run's
// record) and its times.
type runSummary struct {
	Workflow string `json:"workflow"`
	// State is a local run's status as rath.Runtime.Statuses judges it
	// (interrupted for one whose process died), or a cluster run's state.
	State string `json:"state"`
	// Steps is the model calls the run made, recorded when it ended
	// (runctx.StepsLabel); absent while it has not.
	Steps *int `json:"steps,omitempty"`
	// Duration is from the run's start to its end, or to now while it
	// runs (absent for an interrupted run).
	Duration time.Duration `json:"duration_ns,omitempty"`
	// Cluster is set on a cluster run.
	Cluster bool `json:"cluster,omitempty"`
}

// summarize returns what `rath ls` shows of the session info, judged
// status (see listJudged), if it is a run: a local run's input (it
// carries an owner record) or a cluster run's. It reads nothing more.
func summarize(info store.Info, now time.Time) *runSummary {
	var s runSummary
	end := now
	switch {
	case info.Labels[rath.OwnerLabel] != "":
		s.Workflow, s.State = info.Labels[rath.RunWorkflowLabel], string(info.Status)
		if !unfinishedStatus(info.Status) {
			end = info.Updated // its last move: its end
		}
	case info.Labels[cluster.LabelKind] == "run":
		r, err := cluster.RunOf(info)
		if err != nil {
			return nil
		}
		s.Workflow, s.State, s.Cluster = r.Workflow, string(r.State), true
		if r.State.Final() {
			end = r.Since
		}
	default:
		return nil
	}
	if n, err := strconv.Atoi(info.Labels[runctx.StepsLabel]); err == nil {
		s.Steps = &n
	}
	if info.Status != rath.StatusInterrupted && end.After(info.Created) {
		s.Duration = end.Sub(info.Created)
	}
	return &s
}

func unfinishedStatus(s store.Status) bool {
	return s == store.StatusOpen || s == store.StatusActive || s == store.StatusPaused
}

// steps is a run's steps as a cell.
func (s *runSummary) steps() string {
	if s.Steps == nil {
		return "-"
	}
	return strconv.Itoa(*s.Steps)
}

// duration is a run's duration as a cell.
func (s *runSummary) duration() string {
	switch d := s.Duration; {
	case d == 0:
		return "-"
	case d < 10*time.Second:
		return d.Round(time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}
