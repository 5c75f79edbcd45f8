package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/openrath/rath"
	"github.com/openrath/rath/session"
)

// outcome is what a run did, as `rath run` and `rath resume` report it.
type outcome struct {
	ID        session.ID     `json:"id"`
	Run       session.ID     `json:"run"`
	From      session.ID     `json:"from,omitempty"`
	Workflow  string         `json:"workflow,omitempty"`
	OK        bool           `json:"ok"`
	Chunks    int            `json:"chunks"`
	Answer    string         `json:"answer,omitempty"`
	Steps     int            `json:"steps"`
	ToolCalls int            `json:"tool_calls"`
	ToolFails int            `json:"tool_errors"`
	Tools     []string       `json:"tools,omitempty"`
	Usage     session.Usage  `json:"usage"`
	Placement *placementJSON `json:"placement,omitempty"`
}

// placementJSON is where the run's tools ran.
type placementJSON struct {
	Backend   string `json:"backend"`
	SandboxID string `json:"sandbox_id,omitempty"`
}

// answerMax bounds the answer an outcome prints; `rath show` has it all.
const answerMax = 2000

// newOutcome summarises the run whose output is out. Steps and tool calls
// are counted over what the run added to its input (the first from
// chunks of out, when out extends it).
func newOutcome(out *session.Session, run, from session.ID, workflow string, inputLen int, err error) outcome {
	o := outcome{ID: out.ID(), Run: run, From: from, Workflow: workflow, OK: err == nil, Chunks: out.Len(), Usage: out.Usage()}
	if inputLen > out.Len() {
		inputLen = 0
	}
	for i, c := range out.All() {
		switch {
		case c.Assistant != nil && c.Assistant.Text != "" && len(c.Assistant.ToolCalls) == 0:
			o.Answer = c.Assistant.Text
		case c.Note != nil && o.Answer == "":
			o.Answer = c.Note.Text
		}
		if i < inputLen {
			continue
		}
		switch {
		case c.ModelCall != nil:
			o.Steps++
		case c.ToolResult != nil:
			o.ToolCalls++
			if c.ToolResult.Error != nil {
				o.ToolFails++
			}
			if !slices.Contains(o.Tools, c.ToolResult.Tool) {
				o.Tools = append(o.Tools, c.ToolResult.Tool)
			}
		}
	}
	if p := out.Placement(); p.Backend != "" {
		o.Placement = &placementJSON{Backend: p.Backend, SandboxID: p.SandboxID}
	}
	return o
}

// inputLen is the length of the run's input session, 0 if unknown.
func (a *app) inputLen(ctx context.Context, rt *rath.Runtime, run session.ID) int {
	if run == "" {
		return 0
	}
	info, err := rt.Store.Info(ctx, run)
	if err != nil {
		return 0
	}
	return info.Len
}

// print writes the outcome for a person: the answer, what it took, where
// it ran, and the commands that look further.
func (o outcome) print(w io.Writer, cmd string) {
	answer := strings.TrimSpace(o.Answer)
	if r := []rune(answer); len(r) > answerMax {
		answer = string(r[:answerMax]) + "… (" + cmd + " show " + string(o.ID) + " has it all)"
	}
	if answer == "" {
		answer = "(no answer: the run ended without a final reply)"
	}
	fmt.Fprintf(w, "answer     %s\n", strings.ReplaceAll(answer, "\n", "\n           "))
	if !o.OK {
		fmt.Fprintln(w, "status     failed (the error follows on stderr)")
	}
	steps := fmt.Sprintf("%d model %s, %d tool %s", o.Steps, plural(o.Steps, "call", "calls"), o.ToolCalls, plural(o.ToolCalls, "call", "calls"))
	if o.ToolFails > 0 {
		steps += fmt.Sprintf(" (%d failed)", o.ToolFails)
	}
	if len(o.Tools) > 0 {
		steps += ": " + strings.Join(o.Tools, ", ")
	}
	fmt.Fprintf(w, "steps      %s\n", steps)
	usage := fmt.Sprintf("%d tokens in, %d out", o.Usage.InputTokens, o.Usage.OutputTokens)
	if o.Usage.CostUSD > 0 {
		usage += fmt.Sprintf(", $%.4f", o.Usage.CostUSD)
	} else {
		usage += ", cost unknown"
	}
	fmt.Fprintf(w, "usage      %s\n", usage)
	switch {
	case o.Placement == nil:
		fmt.Fprintln(w, "placement  none: tools ran in this process")
	case o.Placement.SandboxID != "":
		fmt.Fprintf(w, "placement  %s sandbox %s\n", o.Placement.Backend, o.Placement.SandboxID)
	default:
		fmt.Fprintf(w, "placement  %s sandbox (not opened)\n", o.Placement.Backend)
	}
	fmt.Fprintf(w, "session    %s (run %s)\n", o.ID, o.Run)
	fmt.Fprintf(w, "\nLook further:\n  %s show %s\n  %s replay %s\n  %s serve   then http://127.0.0.1:7474/#/s/%s\n",
		cmd, o.ID, cmd, o.ID, cmd, o.ID)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// self is the command that reaches this invocation's store again: the
// program's name with the --home and --store it was given.
func (a *app) self() string {
	cmd := a.name
	if a.home != "" {
		cmd += " --home " + a.home
	}
	if a.storeURL != "" {
		cmd += " --store " + a.storeURL
	}
	return cmd
}
