package agent

import (
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
)

// journalStep reports the workspace changes made by the tool results
// appended to the session from chunk `from` on.
func (r *run) journalStep(from int) error {
	j := runctx.Journal(r.ctx)
	if j == nil || r.lease == nil {
		return nil
	}
	var calls []string
	var eff []session.FileEffect
	for i := from; i < r.s.Len(); i++ {
		if tr := r.s.Chunk(i).ToolResult; tr != nil && len(tr.Effects) > 0 && tr.SandboxID == r.lease.ID() {
			calls = append(calls, tr.CallID)
			eff = append(eff, tr.Effects...)
		}
	}
	if len(calls) == 0 {
		return nil
	}
	return j.Changed(r.ctx, r.s, r.lease.Sandbox, calls, eff)
}
