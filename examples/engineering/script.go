package engineering

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
)

// The offline agents are scripted models that read their requests: what
// they do next depends on the results of their earlier calls, on what
// memory recalled and on the feedback a rejection left.

// script is one scripted agent: its call ids are prefix-1, prefix-2, ...
// (unique in a run, so merged attempts never share one), and step says
// what to do given the request.
type script struct {
	prefix string
	n      atomic.Int64
	step   func(s *script, v view) model.Response
}

// newScript returns the scripted model of one agent.
func newScript(prefix string, step func(s *script, v view) model.Response) model.Model {
	s := &script{prefix: prefix, step: step}
	return scripted.Func(func(_ context.Context, req *model.Request) (model.Response, error) {
		// Call ids go on from those the request holds, not from a count
		// kept in this process: a resumed run, whose earlier calls were
		// served from the record, names its next calls alike.
		s.n.Store(lastCall(req, prefix+"-"))
		resp := s.step(s, readView(req, prefix+"-"))
		resp.Usage = estimate(req, resp)
		return resp, nil
	})
}

// lastCall is the highest number of the calls named prefix<n> in req.
func lastCall(req *model.Request, prefix string) int64 {
	var last int64
	for _, m := range req.Messages {
		for _, c := range m.ToolCalls {
			if n, err := strconv.ParseInt(strings.TrimPrefix(c.ID, prefix), 10, 64); err == nil && strings.HasPrefix(c.ID, prefix) {
				last = max(last, n)
			}
		}
	}
	return last
}

// call makes a tool call with the next id.
func (s *script) call(name string, args any) session.ToolCall {
	b, _ := json.Marshal(args) // maps and strings: cannot fail
	return session.NewToolCall(fmt.Sprintf("%s-%d", s.prefix, s.n.Add(1)), name, string(b))
}

// estimate is a usage of four bytes a token.
func estimate(req *model.Request, resp model.Response) session.Usage {
	in := 0
	for _, m := range req.Messages {
		in += len(m.Content)
		for _, c := range m.ToolCalls {
			in += len(c.Args)
		}
	}
	out := len(resp.Text)
	for _, c := range resp.ToolCalls {
		out += len(c.Args)
	}
	return session.Usage{InputTokens: int64(in/4 + 1), OutputTokens: int64(out/4 + 1)}
}

// view is what a scripted agent reads off its request: its own calls
// with their results, in order, and the system and user messages.
type view struct {
	mine    []done
	context []string // system and user messages: instructions, task, notes, recalls, feedback
}

// done is one of the agent's calls and its result.
type done struct {
	call   session.ToolCall
	result string
	ok     bool // a result came back
}

func readView(req *model.Request, prefix string) view {
	var v view
	at := map[string]int{}
	for _, m := range req.Messages {
		switch m.Role {
		case session.RoleSystem, session.RoleUser:
			v.context = append(v.context, m.Content)
		case session.RoleAssistant:
			for _, c := range m.ToolCalls {
				if strings.HasPrefix(c.ID, prefix) {
					at[c.ID] = len(v.mine)
					v.mine = append(v.mine, done{call: c})
				}
			}
		case session.RoleTool:
			if i, ok := at[m.ToolCallID]; ok {
				v.mine[i].result, v.mine[i].ok = m.Content, true
			}
		}
	}
	return v
}

// last returns the result of the agent's latest call of tool.
func (v view) last(tool string) (done, bool) {
	for i := len(v.mine) - 1; i >= 0; i-- {
		if v.mine[i].call.Name == tool {
			return v.mine[i], true
		}
	}
	return done{}, false
}

// recalled returns the memory entries recalled into view that tell of a
// rejected patch, by URI.
func (v view) recalled() []string {
	var uris []string
	for _, c := range v.context {
		rest, ok := strings.CutPrefix(c, "Recalled from memory:")
		if !ok {
			continue
		}
		for _, line := range strings.Split(rest, "\n- [") {
			if uri, text, ok := strings.Cut(line, "] "); ok && strings.Contains(text, "was rejected") {
				uris = append(uris, strings.TrimPrefix(strings.TrimSpace(uri), "- ["))
			}
		}
	}
	return uris
}

// warned reports whether the agent knows a patch was rejected before:
// from memory or from the feedback of a rejected attempt.
func (v view) warned() bool {
	for _, c := range v.context {
		if strings.Contains(c, "was rejected") {
			return true
		}
	}
	return false
}

// research reads the issue, looks for how Count splits words, and says
// where the bug is.
func research(s *script, v view) model.Response {
	switch {
	case len(v.mine) == 0:
		return model.Response{Text: "I'll read the issue and see what the repository holds.",
			ToolCalls: []session.ToolCall{s.call("read_file", map[string]string{"path": "ISSUE.md"}), s.call("list_files", map[string]string{})}}
	case len(v.mine) == 2:
		return model.Response{Text: "The issue is about how Count separates words. Let me find where it splits the text.",
			ToolCalls: []session.ToolCall{
				s.call("grep", map[string]string{"pattern": `strings\.(Split|Fields)`, "glob": "*.go"}),
				s.call("read_file", map[string]string{"path": "wordcount.go"})}}
	}
	where := "wordcount.go"
	if g, ok := v.last("grep"); ok {
		if m := regexp.MustCompile(`(?m)^(\S+\.go:\d+):.*strings\.Split`).FindStringSubmatch(g.result); m != nil {
			where = m[1]
		}
	}
	var b strings.Builder
	if uris := v.recalled(); len(uris) > 0 {
		fmt.Fprintf(&b, "Memory recalls that a patch for this issue was rejected before (%s): the tests still failed after it, "+
			"so skipping empty words is not enough — the fix has to change how Count splits the text.\n\n", strings.Join(uris, ", "))
	}
	fmt.Fprintf(&b, "The bug is in Count, at %s: it splits the text with `strings.Split(text, \" \")`, so only a single space separates words. "+
		"Two spaces in a row give an empty word, and tabs and line breaks stay inside words: \"two\\tthree\\nfour\" is counted as one word, "+
		"as ISSUE.md shows. Top counts through Count, so it is wrong for the same texts. "+
		"TestCountWhitespace and TestTop in wordcount_test.go cover it, and Count's doc comment already says that words are separated by white space.", where)
	return model.Response{Text: b.String()}
}

// The coder's two patches of Count's loop: the first only drops the empty
// words two spaces make (plausible, but tabs and line breaks still glue
// words together); the second splits on any white space.
const (
	oldLoop = "\tfor _, w := range strings.Split(text, \" \") {\n" +
		"\t\tw = strings.ToLower(strings.Trim(w, punctuation))\n" +
		"\t\tcounts[w]++\n"
	skipEmpty = "\tfor _, w := range strings.Split(text, \" \") {\n" +
		"\t\tw = strings.ToLower(strings.Trim(w, punctuation))\n" +
		"\t\tif w == \"\" {\n" +
		"\t\t\tcontinue // two spaces in a row leave an empty word\n" +
		"\t\t}\n" +
		"\t\tcounts[w]++\n"
	splitFields = "\tfor _, w := range strings.Fields(text) {\n" +
		"\t\tw = strings.ToLower(strings.Trim(w, punctuation))\n" +
		"\t\tif w == \"\" {\n" +
		"\t\t\tcontinue // a word of punctuation only, such as \"--\"\n" +
		"\t\t}\n" +
		"\t\tcounts[w]++\n"
)

// code reads wordcount.go, patches Count's loop and says what it changed.
// Unless it knows of a rejected patch it makes the quick one.
func code(s *script, v view) model.Response {
	read, ok := v.last("read_file")
	if !ok {
		return model.Response{Text: "Let me look at Count first.", ToolCalls: []session.ToolCall{s.call("read_file", map[string]string{"path": "wordcount.go"})}}
	}
	edit, edited := v.last("edit_file")
	if !edited {
		if !strings.Contains(read.result, oldLoop) {
			return model.Response{Text: "wordcount.go does not have the loop the research describes, so I have not changed anything."}
		}
		if v.warned() {
			return model.Response{Text: "A patch that only skipped empty words was rejected, so I'll change how Count splits the text instead.",
				ToolCalls: []session.ToolCall{s.call("edit_file", map[string]string{"path": "wordcount.go", "old": oldLoop, "new": splitFields})}}
		}
		return model.Response{Text: "The empty word comes from two spaces in a row; I'll skip empty words.",
			ToolCalls: []session.ToolCall{s.call("edit_file", map[string]string{"path": "wordcount.go", "old": oldLoop, "new": skipEmpty})}}
	}
	if !strings.HasPrefix(edit.result, "edited ") {
		return model.Response{Text: "The edit did not apply: " + edit.result}
	}
	if strings.Contains(edit.call.ArgsString(), "strings.Fields") {
		return model.Response{Text: "Count now splits the text with `strings.Fields`, so any run of spaces, tabs and line breaks separates words, " +
			"and it skips words that are empty once punctuation is trimmed (wordcount.go). That fixes both symptoms in ISSUE.md, and Top with them."}
	}
	return model.Response{Text: "Count no longer counts an empty word: it skips words that are empty after trimming punctuation, " +
		"which is what two spaces in a row produced (wordcount.go)."}
}

// exitCode reads the exit code run_command reports on its first line.
var exitCode = regexp.MustCompile(`^exit code (-?\d+)`)

// failing lists the tests go test reports as failing.
func failing(output string) []string {
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^\s*--- FAIL: (\S+)`).FindAllStringSubmatch(output, -1) {
		names = append(names, m[1])
	}
	return names
}

// test runs `go test ./...` once and reports what it said.
func test(s *script, v view) model.Response {
	run, ok := v.last("run_command")
	if !ok {
		return model.Response{ToolCalls: []session.ToolCall{s.call("run_command", map[string][]string{"args": {"go", "test", "./..."}})}}
	}
	m := exitCode.FindStringSubmatch(run.result)
	switch {
	case m == nil:
		return model.Response{Text: "`go test ./...` did not run to the end: " + firstLine(run.result)}
	case m[1] == "0":
		return model.Response{Text: "`go test ./...` passed (exit code 0)."}
	}
	text := fmt.Sprintf("`go test ./...` failed with exit code %s", m[1])
	if names := failing(run.result); len(names) > 0 {
		text += ": " + strings.Join(names, " and ") + " fail"
	}
	return model.Response{Text: text + "."}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
