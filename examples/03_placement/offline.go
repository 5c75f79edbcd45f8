package placement

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
)

var onBackend = regexp.MustCompile(`on the (\w+) sandbox`)

// offline does what the latest prompt asks: write the file, list the
// workspace, then say what the listing showed.
func offline(_ context.Context, req *model.Request) (model.Response, error) {
	last := -1
	for i, m := range req.Messages {
		if m.Role == session.RoleUser {
			last = i
		}
	}
	if last < 0 {
		return model.Response{Text: "There is nothing to do."}, nil
	}
	backend := "this"
	if m := onBackend.FindStringSubmatch(req.Messages[last].Content); m != nil {
		backend = m[1]
	}
	var since []session.Message // the turns after the prompt
	for _, m := range req.Messages[last+1:] {
		if m.Role != session.RoleSystem {
			since = append(since, m)
		}
	}
	if len(since) == 0 {
		return model.Response{ToolCalls: []session.ToolCall{session.NewToolCall("write-"+backend, "write_file",
			fmt.Sprintf(`{"path":"from-%[1]s.txt","content":"Written on the %[1]s sandbox.\n"}`, backend))}}, nil
	}
	prev := since[len(since)-1]
	switch {
	case prev.Role == session.RoleTool && prev.Name == "write_file":
		return model.Response{ToolCalls: []session.ToolCall{session.NewToolCall("list-"+backend, "run_command", `{"shell":"pwd; ls -A"}`)}}, nil
	case prev.Role == session.RoleTool && prev.Name == "run_command" && strings.HasPrefix(prev.Content, "exit code 0"):
		dir, files := listing(prev.Content)
		return model.Response{Text: fmt.Sprintf("On the %s sandbox the workspace is %s and holds only %s.",
			backend, dir, strings.Join(files, ", "))}, nil
	case prev.Role == session.RoleTool:
		return model.Response{Text: fmt.Sprintf("The %s call failed: %s", prev.Name, prev.Content)}, nil
	}
	return model.Response{Text: "Done."}, nil
}
