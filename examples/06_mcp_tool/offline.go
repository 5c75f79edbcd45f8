package mcptool

import (
	"context"
	"fmt"
	"strings"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
)

// offline lists the glossary's terms, looks up the two it needs, and
// answers from the definitions.
func offline(_ context.Context, req *model.Request) (model.Response, error) {
	defs := map[string]string{} // by call id
	listed := false
	for _, m := range req.Messages {
		if m.Role != session.RoleTool {
			continue
		}
		switch m.Name {
		case "glossary_list_terms":
			listed = true
		case "glossary_define":
			defs[m.ToolCallID] = m.Content
		}
	}
	switch {
	case !listed:
		return model.Response{Text: "Let me see what the glossary covers.",
			ToolCalls: []session.ToolCall{session.NewToolCall("terms", "glossary_list_terms", `{}`)}}, nil
	case len(defs) == 0:
		return model.Response{Text: "It defines both. Looking them up.", ToolCalls: []session.ToolCall{
			session.NewToolCall("fork", "glossary_define", `{"term":"fork"}`),
			session.NewToolCall("merge", "glossary_define", `{"term":"merge"}`),
		}}, nil
	}
	return model.Response{Text: fmt.Sprintf("According to the glossary:\n\n- Fork: %s\n- Merge: %s\n\n"+
		"So a fork splits one history into two independent branches, and a merge joins two branches back into one, "+
		"keeping what they share only once.", strings.TrimSpace(defs["fork"]), strings.TrimSpace(defs["merge"]))}, nil
}
