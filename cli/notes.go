package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/openrath/rath/session"
)

// noteKinds is a tool result's note kinds, for its one-line summary:
// " [restarted, truncated]", or "" without notes.
func noteKinds(ns []session.ToolNote) string {
	if len(ns) == 0 {
		return ""
	}
	kinds := make([]string, len(ns))
	for i, n := range ns {
		kinds[i] = n.Kind
	}
	return " [" + strings.Join(kinds, ", ") + "]"
}

// writeNotes prints the evidence notes of the session's tool results in
// full, after the chunk table (whose summaries are cut): a "notes" heading,
// then one line a note — the chunk's index, the note's kind, its text.
// It prints nothing for a session without notes.
func writeNotes(w io.Writer, s *session.Session) error {
	var tw *tabwriter.Writer
	for i, c := range s.All() {
		if c.ToolResult == nil {
			continue
		}
		for _, n := range c.ToolResult.Notes {
			if tw == nil {
				fmt.Fprintln(w, "\nnotes")
				tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "#\tKIND\tNOTE")
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\n", i, n.Kind, strings.Join(strings.Fields(n.Text), " "))
		}
	}
	if tw == nil {
		return nil
	}
	return tw.Flush()
}
