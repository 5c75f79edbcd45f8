package report

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/openrath/rath/session"
)

// ReportPath is where the reporter writes the report in its workspace.
const ReportPath = "report.md"

// Section is one "## " section of a report, with the read call it cites.
type Section struct {
	Title string
	// Tool and CallID are the citation: "Source: tool `T`, call `ID`."
	Tool, CallID string
	Body         string
}

var reSource = regexp.MustCompile("Source: tool `([a-z_]+)`, call `([^`]+)`")

// Sections splits a Markdown report into its "## " sections.
func Sections(report string) []Section {
	var out []Section
	for _, part := range strings.Split("\n"+report, "\n## ")[1:] {
		title, body, _ := strings.Cut(part, "\n")
		sec := Section{Title: strings.TrimSpace(title), Body: body}
		if m := reSource.FindStringSubmatch(body); m != nil {
			sec.Tool, sec.CallID = m[1], m[2]
		}
		out = append(out, sec)
	}
	return out
}

// ReportText returns the report the session wrote: the content of its last
// successful write_file of ReportPath, as the tool call recorded it.
func ReportText(s *session.Session) (string, bool) {
	text, ok := "", false
	for _, c := range s.All() {
		r := c.ToolResult
		if r == nil || r.Tool != "write_file" || r.Error != nil {
			continue
		}
		var a struct{ Path, Content string }
		if json.Unmarshal(r.Args, &a) == nil && a.Path == ReportPath {
			text, ok = a.Content, true
		}
	}
	return text, ok
}

// readTools are the names of the tools a section may cite.
var readTools = []string{"run_overview", "session_graph", "tool_log", "sandbox_metadata", "validation_results", "failure_analysis"}

// Source returns the run a report session is about: the one its request
// (the first user message) names.
func Source(s *session.Session) (session.ID, bool) {
	for _, c := range s.All() {
		if c.User != nil {
			id := reRunID.FindString(c.User.Text)
			return session.ID(id), id != ""
		}
	}
	return "", false
}

// traceable is the report validator's check: the report names the source
// run, and every section cites a successful call of a read tool on it,
// recorded in this session.
func traceable() func(context.Context, *session.Session) (bool, string, error) {
	return func(_ context.Context, s *session.Session) (bool, string, error) {
		src, ok := Source(s)
		if !ok {
			return false, "the request names no run", nil
		}
		text, ok := ReportText(s)
		if !ok {
			return false, "no write_file of " + ReportPath + " succeeded", nil
		}
		if !strings.Contains(text, string(src)) {
			return false, "the report does not name the source run " + string(src), nil
		}
		calls := map[string]*session.ToolResult{}
		for _, c := range s.All() {
			if c.ToolResult != nil {
				calls[c.ToolResult.CallID] = c.ToolResult
			}
		}
		secs := Sections(text)
		if len(secs) == 0 {
			return false, "the report has no sections", nil
		}
		var cites []string
		for _, sec := range secs {
			r := calls[sec.CallID]
			switch {
			case sec.CallID == "":
				return false, fmt.Sprintf("section %q cites no tool call", sec.Title), nil
			case r == nil || r.Tool != sec.Tool || !slices.Contains(readTools, r.Tool):
				return false, fmt.Sprintf("section %q cites %s call %s, which this session did not make", sec.Title, sec.Tool, sec.CallID), nil
			case r.Error != nil:
				return false, fmt.Sprintf("section %q cites call %s, which failed", sec.Title, sec.CallID), nil
			case !strings.Contains(string(r.Args), string(src)):
				return false, fmt.Sprintf("section %q cites call %s, which read another run", sec.Title, sec.CallID), nil
			}
			cites = append(cites, fmt.Sprintf("%s <- %s %s", sec.Title, sec.Tool, sec.CallID))
		}
		return true, fmt.Sprintf("%d sections, each citing a successful read of %s: %s", len(secs), src, strings.Join(cites, "; ")), nil
	}
}
