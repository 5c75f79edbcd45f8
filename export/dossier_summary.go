package export

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/openrath/rath/session"
)

// summaryLen caps a timeline summary, in runes.
const summaryLen = 160

// summary describes a chunk in one line.
func summary(c session.Chunk) string {
	var s string
	switch c.Kind {
	case session.KindSystem:
		s = c.System.Text
	case session.KindUser:
		s = c.User.Text
	case session.KindNote:
		s = c.Note.Text
	case session.KindAssistant:
		s = turnSummary(c.Assistant)
	case session.KindToolResult:
		s = resultSummary(c.ToolResult)
	case session.KindModelCall:
		m := c.ModelCall
		s = fmt.Sprintf("%s/%s %s", m.Provider, m.Model, m.Usage)
		if m.Response.FinishReason != "" {
			s += " finish=" + m.Response.FinishReason
		}
	case session.KindMemory:
		s = memorySummary(c.Memory)
	case session.KindPlacement:
		p := c.Placement
		var at string
		if r := p.Remote; r != nil {
			at = "at " + r.URL
		}
		s = strings.Join(nonEmpty(p.Backend, p.Spec.Image, p.SandboxID, at, p.TreeHash), " ")
	case session.KindCompress:
		s = fmt.Sprintf("summarised %d chunks: %s", c.Compress.Count, c.Compress.Summary)
	case session.KindDecision:
		d := c.Decision
		s = fmt.Sprintf("%s chose %s", d.Selector, d.Choice)
		if d.Reason != "" {
			s += ": " + d.Reason
		}
	case session.KindApproval:
		a := c.Approval
		s = strings.Join(nonEmpty(a.Verdict, a.Subject, by(a.By), a.Reason), " ")
	case session.KindError:
		s = c.Error.Code + ": " + c.Error.Message
	}
	return clip(oneLine(head(s, 8*summaryLen)), summaryLen)
}

func turnSummary(t *session.Turn) string {
	s := t.Text
	for _, tc := range t.ToolCalls {
		s += fmt.Sprintf(" → %s(%s)", tc.Name, clip(tc.ArgsString(), 60))
	}
	return s
}

func resultSummary(r *session.ToolResult) string {
	s := r.Tool + " " + r.CallID
	if r.Error != nil {
		s += " failed (" + r.Error.Kind + "): " + r.Error.Message
	} else {
		s += ": " + r.Content
	}
	if n := len(r.Effects); n > 0 {
		s += fmt.Sprintf(" [%d file effects]", n)
	}
	for _, n := range r.Notes {
		s += " [" + n.Kind + "]"
	}
	return s
}

func memorySummary(m *session.MemoryEvent) string {
	switch m.Op {
	case session.MemoryRecall:
		return fmt.Sprintf("recall %q: %d hits", m.Query, len(m.Hits))
	case session.MemoryForget:
		return fmt.Sprintf("forget %s: %d entries", m.Selector, m.Count)
	}
	return strings.Join(nonEmpty(string(m.Op), m.URI, m.ContentHash), " ")
}

func by(who string) string {
	if who == "" {
		return ""
	}
	return "by " + who
}

// nonEmpty returns the non-empty strings of ss.
func nonEmpty(ss ...string) []string {
	out := ss[:0:0]
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// clip cuts s to at most n runes, marking a cut with "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	runes := []rune(s)
	return string(runes[:n-1]) + "…"
}

// head returns at most the first n bytes of s, cut at a rune boundary, so
// summaries of megabyte results cost little.
func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
