package placement

import (
	"context"
	"fmt"
	"strings"

	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
)

// Stage is what the report found for one backend.
type Stage struct {
	Backend string
	// Skipped says why the backend did not run ("" if it ran).
	Skipped string
	// Sandbox is the id of the sandbox the worker's tools ran in, and
	// Remote where it lives if it is a remote provider's.
	Sandbox string
	Remote  *session.Remote
	// Dir and Files are what `pwd; ls -A` printed there.
	Dir   string
	Files []string
}

// Stages reads, from a run's session, what happened on each backend.
func Stages(s *session.Session) []Stage {
	out := make([]Stage, len(Backends))
	at := map[string]*Stage{}
	for i, b := range Backends {
		out[i].Backend = b
		at[b] = &out[i]
	}
	for _, c := range s.All() {
		seg, _, _ := strings.Cut(c.Node, "/")
		st := at[seg]
		switch {
		case st == nil:
		case c.Note != nil:
			st.Skipped = strings.TrimPrefix(c.Note.Text, fmt.Sprintf(skipped, seg))
		case c.Placement != nil && c.Placement.SandboxID != "":
			st.Sandbox, st.Remote = c.Placement.SandboxID, c.Placement.Remote
		case c.ToolResult != nil && c.ToolResult.Tool == "run_command" && c.ToolResult.Error == nil:
			st.Dir, st.Files = listing(c.ToolResult.Content)
		}
	}
	return out
}

// listing parses run_command's output of `pwd; ls -A`: the directory,
// then one file a line.
func listing(content string) (dir string, files []string) {
	_, stdout, _ := strings.Cut(content, "--- stdout\n")
	stdout, _, _ = strings.Cut(stdout, "--- stderr\n")
	lines := strings.Fields(stdout)
	if len(lines) == 0 {
		return "", nil
	}
	return lines[0], lines[1:]
}

// report records which backends ran, where, and what each saw.
func report(ctx context.Context, s *session.Session) (*session.Session, error) {
	var b strings.Builder
	b.WriteString("Placement report:")
	for _, st := range Stages(s) {
		if st.Skipped != "" {
			fmt.Fprintf(&b, "\n- %s: skipped (%s)", st.Backend, st.Skipped)
			continue
		}
		where := ""
		if r := st.Remote; r != nil {
			where = fmt.Sprintf(" (%s at %s, from %s)", r.Provider, r.URL, r.Template)
		}
		fmt.Fprintf(&b, "\n- %s: sandbox %s%s, working directory %s, files: %s",
			st.Backend, st.Sandbox, where, st.Dir, strings.Join(st.Files, ", "))
	}
	return runctx.Record(ctx, s, runctx.Invoke(ctx, "report"), session.Note(b.String()))
}
