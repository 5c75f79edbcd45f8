package report

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/openrath/rath/examples/internal/exmodel"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
)

var reRunID = regexp.MustCompile(`ses_[0-9A-Za-z]+`)

// offlineModel is the reporter's scripted model. It reads the run named in
// the request with all six read tools at once, writes the report from
// their results only — each section citing the call it came from — and
// answers with where the report is.
func offlineModel() model.Model {
	return scripted.Func(func(_ context.Context, req *model.Request) (model.Response, error) {
		last := -1
		for i, m := range req.Messages {
			if m.Role == session.RoleUser {
				last = i
			}
		}
		if last < 0 {
			return model.Response{}, fmt.Errorf("report: the offline model found no request")
		}
		src := reRunID.FindString(req.Messages[last].Content)
		if src == "" {
			return model.Response{}, fmt.Errorf("report: the request names no run")
		}
		got := map[string]session.Message{} // read results by tool
		wrote := false
		for _, m := range req.Messages[last+1:] {
			if m.Role == session.RoleTool {
				got[m.Name] = m
				wrote = wrote || m.Name == "write_file"
			}
		}
		switch {
		case len(got) == 0:
			args := fmt.Sprintf(`{"run_id":%q}`, src)
			var calls []session.ToolCall
			for _, t := range readTools {
				calls = append(calls, session.NewToolCall("r-"+strings.ReplaceAll(t, "_", "-"), t, args))
			}
			return respond(req, "Reading the preserved run "+src+": overview, session graph, tool log, sandboxes, verdicts and failures.", calls...), nil
		case !wrote:
			text, err := compose(src, got)
			if err != nil {
				return respond(req, "I could not read every part of the run: "+err.Error()), nil
			}
			args, _ := json.Marshal(map[string]string{"path": ReportPath, "content": text})
			return respond(req, "Writing the report to "+ReportPath+".", session.NewToolCall("r-write", "write_file", string(args))), nil
		}
		f, _ := decode[Failures](got["failure_analysis"].Content)
		v, _ := decode[Validation](got["validation_results"].Content)
		return respond(req, fmt.Sprintf("The technical report of run %s is in %s: six sections (overview, session graph, tool log, sandboxes, validation, failure analysis), "+
			"each citing the read call its facts come from. Final verdict: %s; failures: %s.", src, ReportPath, v.Final, f.Summary)), nil
	})
}

// respond is a scripted answer of this example's model.
func respond(req *model.Request, text string, calls ...session.ToolCall) model.Response {
	return exmodel.Respond(req, "scripted-reporter", text, calls...)
}
