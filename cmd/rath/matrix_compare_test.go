package main

import (
	"encoding/json"
	"fmt"

	"github.com/openrath/rath/session"
)

// compare returns the index of the first chunk where got differs from
// want, or -1, and the index of a call the interruption cut in got, or
// -1: a tool_result that is an interrupted error where want has the same
// call's result (same node, call id, tool and arguments). Resume does not
// repeat a call to a tool that is not idempotent which the signal cut:
// its effect is unknown, the result says so, and the model goes on from
// there, so what follows may differ (the approval example's model
// answers that packaging failed) and is not compared.
func compare(want, got projection) (diff, cut int) {
	for i := range min(len(want.lines), len(got.lines)) {
		if want.lines[i] == got.lines[i] {
			continue
		}
		if cutCall(want.lines[i], got.lines[i]) || reviewedCall(got.lines[i], got.reviewed) {
			return -1, i
		}
		return i, -1
	}
	if len(want.lines) != len(got.lines) {
		return min(len(want.lines), len(got.lines)), -1
	}
	return -1, -1
}

// cutCall reports whether got is the interrupted result of the call whose
// result want is.
func cutCall(want, got string) bool {
	type result struct {
		Kind       string `json:"kind"`
		Node       string `json:"node"`
		ToolResult *struct {
			CallID string          `json:"call_id"`
			Tool   string          `json:"tool"`
			Args   json.RawMessage `json:"args"`
			Error  *struct {
				Kind string `json:"kind"`
			} `json:"error"`
		} `json:"tool_result"`
	}
	var w, g result
	if json.Unmarshal([]byte(want), &w) != nil || json.Unmarshal([]byte(got), &g) != nil || w.ToolResult == nil || g.ToolResult == nil {
		return false
	}
	wr, gr := w.ToolResult, g.ToolResult
	return gr.Error != nil && gr.Error.Kind == session.ToolErrInterrupted &&
		w.Node == g.Node && wr.CallID == gr.CallID && wr.Tool == gr.Tool && string(wr.Args) == string(gr.Args)
}

// resumePoint is the index of the first chunk of out appended at or after
// began (unix ns): the chunks before it were served from the record.
func resumePoint(out projection, began int64) int {
	for i, t := range out.times {
		if t >= began {
			return i
		}
	}
	return len(out.times)
}

// around shows where the lines a and b first differ, with some context.
func around(a, b string) (string, string) {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-200)
	cut := func(s string) string {
		to := min(len(s), i+300)
		if from >= to {
			return "…(ends)"
		}
		return "…" + s[from:to] + "…"
	}
	return cut(a), cut(b)
}

// line is chunk i of p, or "(none)" past its end.
func (p projection) line(i int) string {
	if i < len(p.lines) {
		return p.lines[i]
	}
	return "(none: it has " + fmt.Sprint(len(p.lines)) + " chunks)"
}

// withoutReviews leaves out the review chunks a person's verdict added
// (rath review), the one thing a resumed run settled by review has that an
// uninterrupted run has not, and returns the calls they settled. (Left out
// before projecting, so that the positions other chunks are named by stay
// those of an uninterrupted run.)
// The start mark a reviewed call gets when it is made again goes too.
func withoutReviews(chunks []session.Chunk) ([]session.Chunk, map[string]bool) {
	reviewed := map[string]bool{}
	for _, c := range chunks {
		if c.Approval != nil && session.IsReview(c.Approval.Verdict) {
			reviewed[c.Approval.CallID] = true
		}
	}
	out := chunks[:0:0]
	for _, c := range chunks {
		if a := c.Approval; a != nil && reviewed[a.CallID] && (session.IsReview(a.Verdict) || a.Verdict == session.VerdictStarted) {
			continue
		}
		out = append(out, c)
	}
	return out, reviewed
}

// reviewedCall reports whether got is the result of a call a review
// settled: the matrix's reviewer says "not happened" whatever happened, so
// the call made again may find its effect there already.
func reviewedCall(got string, reviewed map[string]bool) bool {
	var g struct {
		ToolResult *struct {
			CallID string `json:"call_id"`
		} `json:"tool_result"`
	}
	return len(reviewed) > 0 && json.Unmarshal([]byte(got), &g) == nil && g.ToolResult != nil && reviewed[g.ToolResult.CallID]
}
