package openrath

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/openrath/rath/session"
)

// Encode writes s in OpenRath-Python's session JSONL format so that the
// original's load_session() reads it.
//
// The chunk records are s's transcript, the model's view: notes and memory
// recalls become system rows, evidence-only chunks (model calls, decisions,
// approvals, errors) are left out, and so are reasoning blocks, which the
// original has no place for. The header id is the "openrath.id" of an
// imported session, otherwise a UUID derived from s's id, so exporting the
// same session twice gives the same file name. Secret env names are not
// written: the original would need their values.
func Encode(w io.Writer, s *session.Session) error {
	if s == nil {
		return fmt.Errorf("%w: nil session", session.ErrInvalid)
	}
	bw := bufio.NewWriter(w)
	e := encoder{w: bw}
	first, last := sessionTimes(s)
	e.write(headerOut(s, first))
	rows := 0
	for _, m := range s.Transcript() {
		payload, kind, err := payloadOut(m)
		if err != nil {
			return err
		}
		e.write(chunkRecord{RecordType: "chunk", Index: rows, Kind: kind, Payload: payload})
		rows++
	}
	e.write(trailerRecord{
		RecordType:      "trailer",
		ClosedAt:        isoTime(last),
		FinalChunkCount: rows,
		CumulativeUsage: usageOut(s.Usage()),
	})
	if e.err != nil {
		return e.err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("encode openrath: %w", err)
	}
	return nil
}

// encoder writes records and keeps the first error.
type encoder struct {
	w   io.Writer
	buf bytes.Buffer
	err error
}

// rawNEL is U+0085 (NEL). Python's str.splitlines, which the original
// loader uses, breaks lines at it; json.dumps and encoding/json both leave
// it raw. Escaped, the line stays one line for Python. (encoding/json
// already escapes U+2028 and U+2029, the other non-ASCII breaks.)
const rawNEL, escapedNEL = "\u0085", `\u0085`

func (e *encoder) write(rec any) {
	if e.err != nil {
		return
	}
	e.buf.Reset()
	enc := json.NewEncoder(&e.buf)
	enc.SetEscapeHTML(false) // the original writes <, > and & as they are
	if err := enc.Encode(rec); err != nil {
		e.err = fmt.Errorf("%w: encode openrath record: %w", session.ErrInvalid, err)
		return
	}
	line := e.buf.Bytes()
	if bytes.Contains(line, []byte(rawNEL)) {
		line = bytes.ReplaceAll(line, []byte(rawNEL), []byte(escapedNEL))
	}
	if _, err := e.w.Write(line); err != nil {
		e.err = fmt.Errorf("encode openrath: %w", err)
	}
}

func headerOut(s *session.Session, created time.Time) headerRecord {
	lin := s.Lineage()
	h := headerRecord{
		RecordType:       "header",
		SchemaVersion:    schemaVersion,
		ID:               sessionUUID(s),
		CreatedAt:        isoTime(created),
		ParentSessionIDs: make([]string, 0, len(lin.Parents)),
		LineageOperator:  lin.Op,
		LineageKind:      lineageKind(lin.Kind),
		LineageExtras:    make([][2]string, 0, len(lin.Extras)),
	}
	for _, p := range lin.Parents {
		h.ParentSessionIDs = append(h.ParentSessionIDs, deriveUUID(p))
	}
	for _, k := range slices.Sorted(maps.Keys(lin.Extras)) {
		h.LineageExtras = append(h.LineageExtras, [2]string{k, lin.Extras[k]})
	}
	if p := s.Placement(); !p.IsZero() {
		h.SandboxBackend = &p.Backend
		h.SandboxSpec = specOut(p.Spec)
		h.SandboxHandleID = nullable(p.SandboxID)
	}
	return h
}

// specOut maps a Spec to the original's sandbox_spec. Only the non-secret
// Env is written; SecretEnv names have no values to write.
func specOut(s session.Spec) *specRecord {
	out := &specRecord{Image: nullable(s.Image), Env: s.Env, WorkingDir: nullable(s.Dir)}
	if s.Timeout > 0 {
		secs := s.Timeout.Seconds()
		out.TimeoutSeconds = &secs
	}
	return out
}

// nullable turns "" into null, as the original writes unset strings.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// lineageKind maps a lineage kind to the original's LineageKind value;
// kinds it does not have become "unknown", which it accepts.
func lineageKind(k session.LineageKind) string {
	switch k {
	case session.LineageLeafUser:
		return "leaf_user"
	case session.LineageLeafSystem:
		return "leaf_system"
	case session.LineageFork:
		return "op_fork"
	case session.LineageDetach:
		return "op_detach"
	case session.LineageMerge:
		return "op_merge"
	}
	return "unknown"
}

// payloadOut maps one transcript message to a chunk record's kind and
// payload.
func payloadOut(m session.Message) (payload any, kind string, err error) {
	switch m.Role {
	case session.RoleSystem:
		return textPayload{m.Content}, "system", nil
	case session.RoleUser:
		return textPayload{m.Content}, "user", nil
	case session.RoleAssistant:
		p := assistantPayload{Content: nullable(m.Content)}
		for _, tc := range m.ToolCalls {
			p.ToolCalls = append(p.ToolCalls, toolCall{
				ID: tc.ID, Type: "function",
				Function: function{Name: tc.Name, Arguments: tc.ArgsString()},
			})
		}
		return p, "assistant", nil
	case session.RoleTool:
		return toolResultPayload{m.ToolCallID, m.Name, m.Content}, "tool_result", nil
	}
	return nil, "", fmt.Errorf("%w: transcript role %q has no OpenRath chunk kind", session.ErrInvalid, m.Role)
}

// usageOut returns the trailer's cumulative_usage, or nil (null) if no
// tokens were counted.
func usageOut(u session.Usage) *usage {
	if u.InputTokens == 0 && u.OutputTokens == 0 {
		return nil
	}
	return &usage{u.InputTokens, u.OutputTokens, u.Total()}
}
