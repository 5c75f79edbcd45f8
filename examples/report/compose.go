package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/openrath/rath/session"
)

// compose writes the report of run src from the read tools' results (by
// tool name), as the offline reporter does. Every section states the call
// it came from, and says nothing its result does not.
func compose(src string, got map[string]session.Message) (string, error) {
	for _, t := range readTools {
		if m, ok := got[t]; !ok || strings.HasPrefix(m.Content, `{"error"`) {
			return "", fmt.Errorf("%s gave no result", t)
		}
	}
	o, err := decode[Overview](got["run_overview"].Content)
	if err != nil {
		return "", fmt.Errorf("run_overview: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Technical report: run %s\n\n", src)
	fmt.Fprintf(&b, "This report preserves run %s of the `%s` workflow. It was written from the stored run only: each section names the read tool call its facts come from, and that call's result is recorded next to this report in the reporter's session.\n", src, o.Workflow)
	steps := []struct {
		title, tool string
		write       func(*strings.Builder, string) error
	}{
		{"Overview", "run_overview", writeOverview},
		{"Session graph", "session_graph", writeGraph},
		{"Tool log", "tool_log", writeToolLog},
		{"Sandboxes", "sandbox_metadata", writeSandboxes},
		{"Validation", "validation_results", writeValidation},
		{"Failure analysis", "failure_analysis", writeFailures},
	}
	for _, st := range steps {
		m := got[st.tool]
		fmt.Fprintf(&b, "\n## %s\n\nSource: tool `%s`, call `%s`.\n\n", st.title, st.tool, m.ToolCallID)
		if err := st.write(&b, m.Content); err != nil {
			return "", fmt.Errorf("%s: %w", st.tool, err)
		}
	}
	return b.String(), nil
}

func writeOverview(b *strings.Builder, content string) error {
	o, err := decode[Overview](content)
	if err != nil {
		return err
	}
	kinds := make([]string, 0, len(o.ByKind))
	for k, n := range o.ByKind {
		kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(kinds)
	fmt.Fprintf(b, "- Task: %q\n", o.Task)
	fmt.Fprintf(b, "- Workflow `%s`: input session %s, output session %s, status **%s**.\n", o.Workflow, o.Input, o.RunID, o.Status)
	fmt.Fprintf(b, "- %d chunks: %s.\n", o.Chunks, strings.Join(kinds, ", "))
	fmt.Fprintf(b, "- %d model calls: %d input and %d output tokens.\n", o.ModelCalls, o.Usage.InputTokens, o.Usage.OutputTokens)
	fmt.Fprintf(b, "- Hash chain re-read and verified by the store: %s.\n", o.Verified)
	return nil
}

func writeGraph(b *strings.Builder, content string) error {
	g, err := decode[Graph](content)
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "The lineage graph around the output %s holds %s and %s", g.Root, plural(len(g.Nodes), "session"), plural(len(g.Edges), "edge"))
	if len(g.Edges) > 0 {
		var es []string
		for _, e := range g.Edges {
			es = append(es, fmt.Sprintf("%s -> %s (%s)", e.From, e.To, e.Op))
		}
		fmt.Fprintf(b, ": %s", strings.Join(es, "; "))
	}
	fmt.Fprintf(b, ".\n\nThe run committed %s, its steps and its output:\n\n", plural(len(g.RunSessions), "session"))
	b.WriteString("| session | op | status | chunks |\n|---|---|---|---|\n")
	for _, n := range g.RunSessions {
		fmt.Fprintf(b, "| %s | %s | %s | %d |\n", n.ID, cell(n.Op), n.Status, n.Len)
	}
	if len(g.Unstored) > 0 {
		fmt.Fprintf(b, "\n%s of these sessions %s not in the store (%s): the stored lineage graph does not connect the steps through them.\n",
			plural(len(g.Unstored), "parent"), isAre(len(g.Unstored)), strings.Join(ids(g.Unstored), ", "))
	}
	return nil
}

func writeToolLog(b *strings.Builder, content string) error {
	l, err := decode[ToolLog](content)
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "%d tool calls, in order:\n\n", len(l.Calls))
	b.WriteString("| chunk | call | tool | arguments | outcome | ms | effects |\n|---|---|---|---|---|---|---|\n")
	for _, c := range l.Calls {
		outcome := c.Outcome
		if c.Message != "" {
			outcome += ": " + c.Message
		}
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %.1f | %s |\n", c.Index, c.CallID, c.Tool, cell(c.Args), cell(outcome), c.Duration, cell(strings.Join(c.Effects, ", ")))
	}
	return nil
}

func writeSandboxes(b *strings.Builder, content string) error {
	s, err := decode[Sandboxes](content)
	if err != nil {
		return err
	}
	for _, p := range s.Placements {
		net := "no network"
		if p.Network {
			net = "network"
		}
		if p.SandboxID == "" {
			fmt.Fprintf(b, "- chunk %d: placed on `%s` (%s); opened lazily.\n", p.Index, p.Backend, net)
			continue
		}
		fmt.Fprintf(b, "- chunk %d: `%s` sandbox %s opened, workspace tree %s", p.Index, p.Backend, p.SandboxID, p.TreeHash)
		if p.ClonedFrom != "" {
			fmt.Fprintf(b, ", cloned from %s", p.ClonedFrom)
		}
		b.WriteString(".\n")
	}
	ids := make([]string, 0, len(s.CallsIn))
	for id := range s.CallsIn {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		fmt.Fprintf(b, "- %d tool calls ran in sandbox %s.\n", s.CallsIn[id], id)
	}
	return nil
}

func writeValidation(b *strings.Builder, content string) error {
	v, err := decode[Validation](content)
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "Final verdict: **%s**.\n\n", v.Final)
	for _, a := range v.Approvals {
		fmt.Fprintf(b, "- chunk %d, %s: **%s** — %s\n", a.Index, a.By, a.Verdict, a.Reason)
	}
	if len(v.Decisions) > 0 {
		b.WriteString("\nRouting decisions:\n\n")
	}
	for _, d := range v.Decisions {
		fmt.Fprintf(b, "- chunk %d, selector %s chose **%s** (not taken: %s) — %s\n", d.Index, d.Selector, d.Choice, strings.Join(d.NotTaken, ", "), d.Reason)
	}
	return nil
}

func writeFailures(b *strings.Builder, content string) error {
	f, err := decode[Failures](content)
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "Summary: %s.\n\n", f.Summary)
	for _, e := range f.Errors {
		fmt.Fprintf(b, "- Error chunk %d at %s: `%s` — %s\n", e.Index, e.Node, e.Code, e.Message)
	}
	for _, c := range f.FailedCalls {
		fmt.Fprintf(b, "- Failed call %s (`%s`, chunk %d): **%s** — %s\n", c.CallID, c.Tool, c.Index, c.Kind, c.Message)
	}
	for _, r := range f.Rejections {
		fmt.Fprintf(b, "- Rejected at chunk %d by %s — %s\n", r.Index, r.By, r.Reason)
	}
	n := len(f.Errors) + len(f.FailedCalls) + len(f.Rejections)
	switch {
	case n == 0:
		b.WriteString("Nothing failed.\n")
	case f.Status == "failed":
		b.WriteString("\nThe run ended failed: the last failure above is where it stopped.\n")
	default:
		fmt.Fprintf(b, "\nThe run went on after %s and ended %s: the run recovered from each.\n", plural(n, "failure"), f.Status)
	}
	return nil
}

// cell makes text safe for a Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// plural is "1 edge", "2 edges".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func ids(xs []session.ID) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}
