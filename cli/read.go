package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (a *app) showCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show ID",
		Short: "Show a session: its header and a table of its chunks (--json: every chunk in full)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.load(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			info, err := a.rt.Store.Info(cmd.Context(), s.ID())
			if err != nil {
				return err
			}
			info.Status = a.rt.Statuses(cmd.Context(), []store.Info{info})[0]
			if a.jsonOut {
				return a.printJSON(struct {
					Info   store.Info      `json:"info"`
					Usage  session.Usage   `json:"usage"`
					Chunks []session.Chunk `json:"chunks"`
				}{info, s.Usage(), s.Chunks()})
			}
			l := s.Lineage()
			fmt.Fprintf(a.stdout, "session  %s\nstatus   %s%s\nlineage  %s %s parents=%s\nchunks   %d  head %s\n", s.ID(), info.Status, resumeHint(info),
				orDash(string(l.Kind)), orDash(l.Op), orDash(joinIDs(l.Parents)), s.Len(), s.Head())
			u := s.Usage()
			fmt.Fprintf(a.stdout, "usage    %d in, %d out, $%.4f\n", u.InputTokens, u.OutputTokens, u.CostUSD)
			if p := s.Placement(); p.Backend != "" {
				fmt.Fprintf(a.stdout, "sandbox  %s %s\n", p.Backend, p.SandboxID)
			}
			fmt.Fprintln(a.stdout)
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "#\tKIND\tNODE\tSUMMARY")
			for i, c := range s.All() {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", i, c.Kind, orDash(c.Node), summary(c))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if err := writeNotes(a.stdout, s); err != nil {
				return err
			}
			if err := writeEgress(a.stdout, s); err != nil {
				return err
			}
			return a.showClusterRun(cmd.Context(), info)
		},
	}
}

func joinIDs(ids []session.ID) string {
	ss := make([]string, len(ids))
	for i, id := range ids {
		ss[i] = string(id)
	}
	return strings.Join(ss, ",")
}

// summary is a chunk in one short line.
func summary(c session.Chunk) string {
	var s string
	switch {
	case c.User != nil:
		s = c.User.Text
	case c.System != nil:
		s = c.System.Text
	case c.Assistant != nil:
		s = c.Assistant.Text
		for _, tc := range c.Assistant.ToolCalls {
			s += fmt.Sprintf(" [call %s %s]", tc.Name, tc.ArgsString())
		}
	case c.ToolResult != nil:
		r := c.ToolResult
		s = fmt.Sprintf("%s%s%s → %s", r.Tool, noteKinds(r.Notes), egressCounts(r.Egress), r.Content)
		if r.Error != nil {
			s = fmt.Sprintf("%s%s%s → error %s: %s", r.Tool, noteKinds(r.Notes), egressCounts(r.Egress), r.Error.Kind, r.Error.Message)
		}
	case c.ModelCall != nil:
		m := c.ModelCall
		s = fmt.Sprintf("%s:%s %d in / %d out, %s", m.Provider, m.Model, m.Usage.InputTokens, m.Usage.OutputTokens, m.Latency.Round(time.Millisecond))
	case c.Memory != nil:
		m := c.Memory
		s = fmt.Sprintf("%s %s%s (%d hits)", m.Op, m.URI, m.Query, len(m.Hits))
	case c.Decision != nil:
		s = fmt.Sprintf("%s chose %s: %s", c.Decision.Selector, c.Decision.Choice, c.Decision.Reason)
	case c.Approval != nil:
		s = fmt.Sprintf("%s %s %s", c.Approval.Verdict, c.Approval.Subject, c.Approval.Reason)
	case c.Compress != nil:
		s = fmt.Sprintf("%d chunks → %q", c.Compress.Count, c.Compress.Summary)
	case c.Placement != nil:
		s = fmt.Sprintf("%s %s", c.Placement.Backend, c.Placement.SandboxID)
	case c.Note != nil:
		s = c.Note.Text
	case c.Error != nil:
		s = c.Error.Code + ": " + c.Error.Message
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 90 {
		s = string(r[:89]) + "…"
	}
	return s
}
