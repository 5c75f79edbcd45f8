package memory

import (
	"fmt"
	"strings"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/session"
)

// The notes the output ends with, one per step.

func learned(run1 *session.Session, uri string) string {
	for _, c := range run1.All() {
		if m := c.Memory; m != nil && m.Op == session.MemoryRemember && m.URI == uri {
			byID := map[session.ChunkID]session.Chunk{}
			for _, e := range run1.All() {
				byID[e.ID] = e
			}
			var ev []string
			for _, id := range m.Evidence {
				ev = append(ev, describe(byID[id]))
			}
			return fmt.Sprintf("Run 1 (agent builder) remembered %s (content %s) in its own session, with %s evidence: %s.",
				uri, short(m.ContentHash), m.EvidenceKind, strings.Join(ev, "; "))
		}
	}
	return "Run 1 remembered nothing."
}

func recalled(n int, what string, run *session.Session) string {
	var sb strings.Builder
	for _, c := range run.All() {
		if m := c.Memory; m != nil && m.Op == session.MemoryRecall {
			fmt.Fprintf(&sb, "Run %d (agent helper, %s) recalled %s from %s for %q", n, what, entries(len(m.Hits)), strings.Join(m.Scopes, ", "), m.Query)
			for _, h := range m.Hits {
				fmt.Fprintf(&sb, ": %s, score %.3g, written by %s", h.URI, h.Score, h.Writer)
			}
		}
	}
	for i := run.Len() - 1; i >= 0; i-- {
		if a := run.Chunk(i).Assistant; a != nil {
			fmt.Fprintf(&sb, ". It answered: %s", a.Text)
			break
		}
	}
	return sb.String()
}

func explained(x *memory.Explanation) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "memory.Explain(run 2, %s): ", x.URI)
	for _, r := range x.Recalls {
		fmt.Fprintf(&sb, "present because the recall at chunk %d (query %q) returned it with score %.3g and content %s. ", r.Index, r.Query, r.Score, short(r.Hash))
	}
	for _, w := range x.Writes {
		fmt.Fprintf(&sb, "Written by session %s at chunk %s (%s), justified by %s evidence loaded from the store: ", w.Writer, w.Chunk.Short(), w.Op, w.Kind)
		var ev []string
		for _, c := range w.Evidence {
			ev = append(ev, describe(c))
		}
		if len(w.Missing) > 0 {
			ev = append(ev, fmt.Sprintf("%d chunks not found", len(w.Missing)))
		}
		sb.WriteString(strings.Join(ev, "; "))
		sb.WriteString(".")
	}
	return sb.String()
}

func rolledBack(run1 *session.Session, after *memory.Explanation) string {
	forgotten := false
	for _, w := range after.Writes {
		forgotten = forgotten || w.Forgotten
	}
	last, _ := run1.Last()
	m := last.Memory
	if m == nil || m.Op != session.MemoryForget {
		return "Run 1's writes were not rolled back."
	}
	writer, _ := strings.CutPrefix(m.Selector, "derived_from=")
	return fmt.Sprintf("Forget(memory.DerivedFrom(%s)) removed the %s run 1 wrote: %s. The forget is recorded in run 1's session, "+
		"so Explain now reports the write as rolled back (forgotten: %v).", writer, entries(m.Count), strings.Join(m.Forgotten, ", "), forgotten)
}

// describe names a chunk for a note: its kind and the start of its text.
func describe(c session.Chunk) string {
	text := c.Text()
	if c.ToolResult != nil {
		text = c.ToolResult.Tool + ": " + c.ToolResult.Content
	}
	text = strings.ReplaceAll(text, "\n", " ")
	if len(text) > 90 {
		text = text[:87] + "..."
	}
	return fmt.Sprintf("the %s chunk %s %q", c.Kind, c.ID.Short(), text)
}

// short cuts a sha256: hash for display.
func short(h string) string {
	if len(h) > 19 {
		return h[:19] + "…"
	}
	return h
}

// entries counts entries in words.
func entries(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return fmt.Sprintf("%d entries", n)
}
