package research

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/openrath/rath/examples/internal/exmodel"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
)

var (
	reBrief    = regexp.MustCompile(`Attempt (\d+), .*: k=(\d+) scale=(none|standard)\.`)
	reNeedLoad = regexp.MustCompile(`load the bundled dataset`)
)

// offlineModel is the experimenter's scripted model: deterministic, and
// driven by what it is shown, as a live model would be. It reads the latest
// brief, loads the dataset if the brief says the workspace is empty, runs
// the experiment the brief names, and reports the result it got back.
func offlineModel() model.Model {
	return scripted.Func(func(_ context.Context, req *model.Request) (model.Response, error) {
		last := -1
		for i, m := range req.Messages {
			if m.Role == session.RoleUser {
				last = i
			}
		}
		if last < 0 {
			return model.Response{}, fmt.Errorf("research: the offline model found no brief")
		}
		brief := reBrief.FindStringSubmatch(req.Messages[last].Content)
		if brief == nil {
			return model.Response{}, fmt.Errorf("research: the offline model cannot read the brief %q", req.Messages[last].Content)
		}
		n, k, scale := brief[1], brief[2], brief[3]
		loaded, ran := false, ""
		for _, m := range req.Messages[last+1:] {
			if m.Role != session.RoleTool {
				continue
			}
			switch m.Name {
			case "load_dataset":
				loaded = true
			case "run_command":
				ran = m.Content
			}
		}
		switch {
		case reNeedLoad.MatchString(req.Messages[last].Content) && !loaded:
			return respond(req, "The workspace is empty; loading the bundled dataset first.",
				session.NewToolCall("a"+n+"-load", "load_dataset", `{}`)), nil
		case ran == "":
			args, _ := json.Marshal(map[string][]string{"args": {"sh", "experiment.sh", k, scale, n}})
			return respond(req, fmt.Sprintf("Running attempt %s: k=%s, scale=%s.", n, k, scale),
				session.NewToolCall("a"+n+"-run", "run_command", string(args))), nil
		}
		r, ok := parseResult(ran)
		if !ok {
			return respond(req, "The experiment printed no val_accuracy; its output is in the tool result above."), nil
		}
		text := fmt.Sprintf("Attempt %d (k=%d, scale=%s) reaches a validation accuracy of %.2f on the 20 held-out rows; the results are in results/attempt-%d.json.",
			r.Attempt, r.K, r.Scale, r.Accuracy, r.Attempt)
		if r.Scale == "none" && r.Spread > 10 {
			text += fmt.Sprintf(" The feature spreads differ about %.0f-fold (rpm against vibration), so rpm dominates the distances; standardising the features should help more than changing k.", r.Spread)
		} else {
			text += " With standardised features all three readings weigh in comparably."
		}
		return respond(req, text), nil
	})
}

// respond is a scripted answer of this example's model.
func respond(req *model.Request, text string, calls ...session.ToolCall) model.Response {
	return exmodel.Respond(req, "scripted-researcher", text, calls...)
}
