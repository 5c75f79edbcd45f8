package cli

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/openrath/rath/session"
)

// egressCounts is a tool result's connections in a few words for its
// summary: " [egress 1 allowed, 2 refused]", or "" without any.
func egressCounts(cs []session.Connection) string {
	if len(cs) == 0 {
		return ""
	}
	allowed := 0
	for _, c := range cs {
		if c.Allowed {
			allowed++
		}
	}
	return fmt.Sprintf(" [egress %d allowed, %d refused]", allowed, len(cs)-allowed)
}

// writeEgress prints the connections the session's tool calls' commands
// opened, after the chunk table: an "egress" heading, then one line a
// connection — the chunk's index, host:port, allowed or refused, the
// rule, the reason. It prints nothing for a session without any.
func writeEgress(w io.Writer, s *session.Session) error {
	var tw *tabwriter.Writer
	for i, c := range s.All() {
		if c.ToolResult == nil {
			continue
		}
		for _, e := range c.ToolResult.Egress {
			if tw == nil {
				fmt.Fprintln(w, "\negress")
				tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "#\tCONNECTION\tDECISION\tRULE\tREASON")
			}
			decision := "refused"
			if e.Allowed {
				decision = "allowed"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", i, net.JoinHostPort(e.Host, strconv.Itoa(e.Port)), decision, orDash(e.Rule),
				strings.Join(strings.Fields(e.Reason), " "))
		}
	}
	if tw == nil {
		return nil
	}
	return tw.Flush()
}
