package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/openrath/rath/session"
)

// Status is where a session is in its lifecycle:
//
//	open -> active <-> paused -> closed -> archived
//	           \__________________^
//	open, active, paused -> failed -> archived
//	                        failed -> active
//
// A new session is open; running it makes it active; an approval gate
// pauses it; finishing closes it; retention archives it. A failed session
// becomes active again when its run is resumed (a cluster run taken back
// to work from its committed steps).
type Status string

// The statuses.
const (
	StatusOpen     Status = "open"
	StatusActive   Status = "active"
	StatusPaused   Status = "paused"
	StatusClosed   Status = "closed"
	StatusArchived Status = "archived"
	StatusFailed   Status = "failed"
)

var transitions = map[Status][]Status{
	StatusOpen:     {StatusActive, StatusFailed},
	StatusActive:   {StatusPaused, StatusClosed, StatusFailed},
	StatusPaused:   {StatusActive, StatusClosed, StatusFailed},
	StatusClosed:   {StatusArchived},
	StatusFailed:   {StatusActive, StatusArchived},
	StatusArchived: nil,
}

// Valid reports whether s is a known status.
func (s Status) Valid() bool { _, ok := transitions[s]; return ok }

// CanTransition reports whether the lifecycle allows from -> to. Setting a
// status to itself is always allowed (and changes nothing).
func CanTransition(from, to Status) bool {
	return from == to && from.Valid() || slices.Contains(transitions[from], to)
}

// MoveSources returns the statuses MoveTo moves a session to `to` from
// by a change of status: Sources(to) without `to` itself, and open when
// the move passes through active.
func MoveSources(to Status) []Status {
	var out []Status
	for _, from := range Sources(to) {
		if from != to {
			out = append(out, from)
		}
	}
	if to != StatusActive && slices.Contains(out, StatusActive) {
		out = append(out, StatusOpen)
	}
	return out
}

// Sources returns the statuses from which the lifecycle allows a move to
// `to`, `to` itself included; none if `to` is unknown.
func Sources(to Status) []Status {
	if !to.Valid() {
		return nil
	}
	out := []Status{to}
	for _, from := range []Status{StatusOpen, StatusActive, StatusPaused, StatusClosed, StatusArchived, StatusFailed} {
		if from != to && slices.Contains(transitions[from], to) {
			out = append(out, from)
		}
	}
	return out
}

// CheckTransition returns an ErrTransition error naming the change if the
// lifecycle does not allow it.
func CheckTransition(from, to Status) error {
	if !to.Valid() {
		return fmt.Errorf("%w: unknown status %q", ErrTransition, to)
	}
	if !CanTransition(from, to) {
		return fmt.Errorf("%w: %s -> %s (allowed from %s: %v)", ErrTransition, from, to, from, transitions[from])
	}
	return nil
}

// MoveTo sets session id's status to `to`, passing through active when the
// session is still open (open sessions may only become active); a session
// already at `to` is left alone.
//
// A store that implements Mover moves it its own way (in one step).
func MoveTo(ctx context.Context, st Store, id session.ID, to Status) error {
	if m, ok := st.(Mover); ok {
		return m.MoveTo(ctx, id, to)
	}
	return MoveSteps(ctx, st, id, to)
}

// Mover is a store that does what MoveTo does in one step.
type Mover interface {
	MoveTo(ctx context.Context, id session.ID, to Status) error
}

// MoveSteps is MoveTo one call at a time: Info, then SetStatus once or
// twice. A Mover that cannot take its shortcut falls back to it.
func MoveSteps(ctx context.Context, st Store, id session.ID, to Status) error {
	info, err := st.Info(ctx, id)
	if err != nil {
		return err
	}
	if info.Status == to {
		return nil
	}
	if info.Status == StatusOpen && to != StatusActive {
		if err := st.SetStatus(ctx, id, StatusActive); err != nil {
			return err
		}
	}
	return st.SetStatus(ctx, id, to)
}
