// Package replay re-executes recorded workflow runs: Run serves every
// model call, tool result and selector decision from the record, by node
// path and order, and reports the first place where the code no longer
// does what the record says (a *Divergence); Resume continues a run cut
// short from its last durable step; Fork branches a recorded run at a
// chunk to continue it live with something changed.
package replay

import (
	"errors"
	"fmt"
	"strings"
)

// ErrDiverged is wrapped by every *Divergence.
var ErrDiverged = errors.New("replay: diverged from the record")

// Divergence is the first point where a replay differed from its record.
type Divergence struct {
	// Node is the node path where it happened.
	Node string
	// Index is the recorded chunk's position in the recorded session (-1
	// when the replay did something the record has nothing for).
	Index int
	// Expected and Actual are digests of the recorded and replayed
	// chunk or request.
	Expected, Actual string
	// What says what differed; Diff shows it line by line.
	What string
	Diff string
}

func (d *Divergence) Error() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "replay: diverged at %s (recorded chunk %d): %s; expected %s, got %s", d.Node, d.Index, d.What, d.Expected, d.Actual)
	if d.Diff != "" {
		sb.WriteString("\n")
		sb.WriteString(d.Diff)
	}
	return sb.String()
}

// Unwrap makes errors.Is(err, ErrDiverged) hold.
func (d *Divergence) Unwrap() error { return ErrDiverged }

// lineDiff shows the lines of a and b that differ, "-" recorded, "+"
// replayed, with up to two lines of context around each difference.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	// Common prefix and suffix; the middle is what changed.
	p := 0
	for p < len(al) && p < len(bl) && al[p] == bl[p] {
		p++
	}
	s := 0
	for s < len(al)-p && s < len(bl)-p && al[len(al)-1-s] == bl[len(bl)-1-s] {
		s++
	}
	var sb strings.Builder
	for _, l := range al[max(0, p-2):p] {
		sb.WriteString("  " + l + "\n")
	}
	for _, l := range al[p : len(al)-s] {
		sb.WriteString("- " + l + "\n")
	}
	for _, l := range bl[p : len(bl)-s] {
		sb.WriteString("+ " + l + "\n")
	}
	for _, l := range al[len(al)-s : min(len(al), len(al)-s+2)] {
		sb.WriteString("  " + l + "\n")
	}
	return strings.TrimRight(sb.String(), "\n")
}
