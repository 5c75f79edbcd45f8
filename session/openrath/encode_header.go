package openrath

import (
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/openrath/rath/session"
)

// importExtras returns s's lineage extras if s is a session Decode made:
// lineage Op ImportOp whose ExtraID is s's own id. Its header can be
// written as the file had it.
func importExtras(s *session.Session) map[string]string {
	lin := s.Lineage()
	if lin.Op != ImportOp || lin.Kind != session.LineageImport {
		return nil
	}
	if id, err := IDOf(lin.Extras[ExtraID]); err != nil || id != s.ID() {
		return nil
	}
	return lin.Extras
}

// headerOut builds the header record: from the extras of an imported
// session (ex), else from s's lineage. The prompts go last in
// lineage_extras.
func headerOut(s *session.Session, ex map[string]string, prompts []prompt) headerRecord {
	lin := s.Lineage()
	h := headerRecord{
		RecordType:      "header",
		SchemaVersion:   schemaVersion,
		ID:              UUIDOf(s.ID()),
		CreatedAt:       isoTime(firstTime(s)),
		LineageOperator: lin.Op,
		LineageKind:     lineageKind(lin.Kind),
	}
	var pairs [][2]json.RawMessage
	if ex != nil {
		h.ID, h.LineageOperator, h.LineageKind = ex[ExtraID], ex[ExtraOperator], ex[ExtraKind]
		if c, ok := ex[ExtraCreatedAt]; ok {
			h.CreatedAt = c
		}
		if json.Unmarshal([]byte(ex[ExtraParents]), &h.ParentSessionIDs) != nil {
			h.ParentSessionIDs = nil
		}
		if raw, ok := ex[ExtraExtras]; ok && json.Unmarshal([]byte(raw), &pairs) != nil {
			pairs = nil
		}
	} else {
		for _, k := range slices.Sorted(maps.Keys(lin.Extras)) {
			pairs = append(pairs, [2]json.RawMessage{marshal(k), marshal(lin.Extras[k])})
		}
	}
	if h.ParentSessionIDs == nil {
		h.ParentSessionIDs = make([]string, 0, len(lin.Parents))
		for _, p := range lin.Parents {
			h.ParentSessionIDs = append(h.ParentSessionIDs, UUIDOf(p))
		}
	}
	for _, p := range prompts {
		pairs = append(pairs, [2]json.RawMessage{marshal(PromptKey), marshal(p)})
	}
	if pairs == nil {
		pairs = [][2]json.RawMessage{}
	}
	h.LineageExtras = marshal(pairs)
	if p := s.Placement(); !p.IsZero() {
		h.SandboxBackend = &p.Backend
		h.SandboxHandleID = nullable(p.SandboxID)
		if ex[ExtraSpec] != "null" || !p.Spec.Equal(session.Spec{}) {
			h.SandboxSpec = specOut(p.Spec)
			if e, ok := ex[ExtraEntrypoint]; ok && json.Valid([]byte(e)) {
				h.SandboxSpec.Entrypoint = json.RawMessage(e)
			}
		}
	}
	return h
}

// firstTime is the time of s's first chunk, or now for an empty session.
func firstTime(s *session.Session) time.Time {
	if s.Len() == 0 {
		return time.Now()
	}
	return s.Chunk(0).Time
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
