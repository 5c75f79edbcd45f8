package providers

import (
	"context"
	"fmt"
	"strings"

	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
)

// Branch is what one branch of the race did, read from its chunks.
type Branch struct {
	Name      string // the branch's node-path segment
	Model     string // provider:model of its calls
	Calls     int    // model calls
	ToolCalls int
	Usage     session.Usage
	Answer    string // its final answer
}

// Branches reads each branch's model calls, tool results and final answer
// from the merged session, by the node path under "race/".
func Branches(s *session.Session) []Branch {
	var out []Branch
	at := map[string]int{}
	for _, c := range s.All() {
		rest, ok := strings.CutPrefix(c.Node, "race/")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(rest, "/")
		i, seen := at[name]
		if !seen {
			i = len(out)
			at[name] = i
			out = append(out, Branch{Name: name})
		}
		b := &out[i]
		switch {
		case c.ModelCall != nil:
			b.Calls++
			b.Model = c.ModelCall.Provider + ":" + c.ModelCall.Model
			b.Usage = b.Usage.Add(c.ModelCall.Usage)
		case c.ToolResult != nil:
			b.ToolCalls++
		case c.Assistant != nil && len(c.Assistant.ToolCalls) == 0:
			b.Answer = c.Assistant.Text
		}
	}
	return out
}

// compare records the branches side by side as a note.
func compare(ctx context.Context, s *session.Session) (*session.Session, error) {
	bs := Branches(s)
	if len(bs) != 2 {
		return s, fmt.Errorf("providers: compare: %d branches, want 2", len(bs))
	}
	var sb strings.Builder
	sb.WriteString("The same agent (planner) on two models, on the same input:")
	for _, b := range bs {
		fmt.Fprintf(&sb, "\n- %s (%s): %s, %s, %d tokens in, %d out, %s. Answer: %s",
			b.Name, b.Model, count(b.Calls, "model call"), count(b.ToolCalls, "tool call"), b.Usage.InputTokens, b.Usage.OutputTokens, cost(b.Usage), b.Answer)
	}
	a, b := bs[0], bs[1]
	if a.Usage.Total() > 0 {
		fmt.Fprintf(&sb, "\n%s used %.1fx the tokens of %s", b.Name, float64(b.Usage.Total())/float64(a.Usage.Total()), a.Name)
		if a.Usage.CostUSD > 0 && b.Usage.CostUSD > 0 {
			fmt.Fprintf(&sb, " and cost %.1fx as much", b.Usage.CostUSD/a.Usage.CostUSD)
		}
		sb.WriteString(".")
	}
	fmt.Fprintf(&sb, " Together: %d tokens, %s (the merged session's usage).", s.Usage().Total(), cost(s.Usage()))
	return runctx.Record(ctx, s, runctx.Invoke(ctx, "compare"), session.Note(sb.String()))
}

func cost(u session.Usage) string {
	if u.CostUSD == 0 {
		return "cost unknown (no price configured)"
	}
	return fmt.Sprintf("$%.6f", u.CostUSD)
}

// count says n things in words: "1 tool call", "2 tool calls".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
