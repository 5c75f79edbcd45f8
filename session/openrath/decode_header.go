package openrath

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/openrath/rath/session"
)

// schemaVersion is the only schema_version the Python writer ever produced.
const schemaVersion = 1

// header is what the decoder keeps of the header record.
type header struct {
	sid     session.ID   // the id of the imported session: IDOf(the header's id)
	parents []session.ID // the parents that are UUIDs, as session ids
	created time.Time
	extras  map[string]string // the lineage extras of the imported session
	prompts []prompt          // PromptKey extras, by row
}

// header decodes the header record and, if it names a sandbox, appends the
// placement chunk.
func (d *decoder) header(rec jsonObject) error {
	if d.hdr != nil {
		return d.corrupt("duplicate header (the first is on line %d)", d.hdrLine)
	}
	// The version comes first: a newer file should say so, not fail on
	// some field it renamed.
	var version int64
	ok, err := rec.get("schema_version", &version, "integer")
	if err != nil {
		return d.corrupt("header: %w", err)
	}
	if !ok {
		return d.corrupt("header has no schema_version")
	}
	if version != schemaVersion {
		return d.fail(session.ErrVersion, "OpenRath schema_version %d, this build reads %d", version, schemaVersion)
	}
	h, err := parseHeader(rec)
	if err != nil {
		return d.corrupt("header: %w", err)
	}
	if slices.Contains(h.parents, h.sid) {
		return d.corrupt("%w: parent_session_ids name the session itself (%s)", ErrCycle, h.extras[ExtraID])
	}
	p, err := parseSandbox(rec, h.extras)
	if err != nil {
		return d.corrupt("header: %w", err)
	}
	d.hdr, d.hdrLine = h, d.line
	lin := session.Lineage{Parents: h.parents, Op: ImportOp, Kind: session.LineageImport, Extras: h.extras}
	if d.s, err = session.Assemble(h.sid, lin, nil); err != nil {
		return d.corrupt("header: %w", err) // unreachable: IDOf gives valid ids
	}
	if p != nil {
		return d.append(session.Of(p))
	}
	return nil
}

// parseHeader reads the identity and lineage fields of a header. Absent
// operator and kind get the original's defaults.
func parseHeader(rec jsonObject) (*header, error) {
	h := &header{created: time.Unix(0, 0).UTC(), extras: map[string]string{}}
	id, ok, err := rec.str("id")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("no id")
	}
	// The original refuses a header whose id is not a UUID too.
	if h.sid, err = IDOf(id); err != nil {
		return nil, fmt.Errorf("id: %w", err)
	}
	h.extras[ExtraID] = id
	if created, ok, err := rec.str("created_at"); err != nil {
		return nil, err
	} else if ok {
		if h.created, err = parseTime(created); err != nil {
			return nil, fmt.Errorf("created_at: %w", err)
		}
		h.extras[ExtraCreatedAt] = created
	}
	if err := h.parseParents(rec); err != nil {
		return nil, err
	}
	operator, kind := "implicit", "unknown"
	if _, err := rec.get("lineage_operator", &operator, "string"); err != nil {
		return nil, err
	}
	if _, err := rec.get("lineage_kind", &kind, "string"); err != nil {
		return nil, err
	}
	h.extras[ExtraOperator], h.extras[ExtraKind] = operator, kind
	return h, h.parseExtras(rec)
}

// parseParents reads parent_session_ids. Those that are UUIDs become
// lineage parents; the original's loader drops the others, and so do the
// lineage edges, but ExtraParents keeps them all.
func (h *header) parseParents(rec jsonObject) error {
	var parents []string
	if _, err := rec.get("parent_session_ids", &parents, "array of strings"); err != nil {
		return err
	}
	h.parents = []session.ID{}
	for _, p := range parents {
		if id, err := IDOf(p); err == nil {
			h.parents = append(h.parents, id)
		}
	}
	if parents == nil {
		parents = []string{}
	}
	h.extras[ExtraParents] = string(marshal(parents))
	return nil
}

// parseExtras reads lineage_extras, a list of [key, value] pairs: the
// PromptKey pairs become prompts, the others are kept whole in ExtraExtras
// and one by one under ExtraPrefix.
func (h *header) parseExtras(rec jsonObject) error {
	var pairs [][]json.RawMessage
	if _, err := rec.get("lineage_extras", &pairs, "array of [key, value] pairs"); err != nil {
		return err
	}
	var kept [][2]json.RawMessage
	for i, pair := range pairs {
		var key string
		if len(pair) != 2 || jsonType(pair[0]) != "string" || json.Unmarshal(pair[0], &key) != nil {
			return fmt.Errorf("lineage_extras[%d]: want a [string, value] pair", i)
		}
		if key == PromptKey {
			if p, ok := parsePrompt(pair[1]); ok {
				h.prompts = append(h.prompts, p)
				continue
			}
		}
		kept = append(kept, [2]json.RawMessage{pair[0], compact(pair[1])})
		h.extras[ExtraPrefix+key] = extraValue(pair[1])
	}
	slices.SortStableFunc(h.prompts, func(a, b prompt) int { return a.Row - b.Row })
	if len(kept) > 0 {
		h.extras[ExtraExtras] = string(marshal(kept))
	}
	return nil
}

// compact returns raw without insignificant space.
func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// marshal encodes v, which holds only strings and valid raw JSON, as
// compact JSON with <, > and & as they are.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // strings and valid raw JSON always encode
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// parseSandbox returns the placement the header describes, or nil if it
// names no sandbox backend, and notes in extras what the placement cannot
// hold (a null spec, the entrypoint). Env values are dropped on purpose.
func parseSandbox(rec jsonObject, extras map[string]string) (*session.Placement, error) {
	backend, _, err := rec.str("sandbox_backend")
	if err != nil {
		return nil, err
	}
	handle, _, err := rec.str("sandbox_handle_id")
	if err != nil {
		return nil, err
	}
	spec, hasSpec, err := rec.object("sandbox_spec")
	if err != nil {
		return nil, err
	}
	var s session.Spec
	if hasSpec {
		if s, err = parseSpec(spec, extras); err != nil {
			return nil, fmt.Errorf("sandbox_spec: %w", err)
		}
	}
	if backend == "" {
		return nil, nil // a spec without backend places nothing in the original either
	}
	if !hasSpec {
		extras[ExtraSpec] = "null"
	}
	return &session.Placement{Backend: backend, Spec: s, SandboxID: handle}, nil
}

// maxTimeout keeps timeout_seconds well inside time.Duration, so a value
// that imports also survives export and re-import.
const maxTimeout = float64(math.MaxInt64/2) / 1e9

func parseSpec(spec jsonObject, extras map[string]string) (session.Spec, error) {
	var s session.Spec
	var err error
	if s.Image, _, err = spec.str("image"); err != nil {
		return s, err
	}
	if s.Dir, _, err = spec.str("working_dir"); err != nil {
		return s, err
	}
	var secs float64
	if _, err := spec.get("timeout_seconds", &secs, "number"); err != nil {
		return s, err
	}
	if secs < 0 || secs > maxTimeout {
		return s, fmt.Errorf("timeout_seconds %g out of range", secs)
	}
	// Python's timedelta counts microseconds; rounding to them keeps the
	// value through export and import.
	s.Timeout = time.Duration(math.Round(secs*1e6)) * time.Microsecond
	if raw, ok := spec["entrypoint"]; ok && jsonType(raw) != "null" {
		if jsonType(raw) != "array" {
			return s, fmt.Errorf(`"entrypoint" is %s, want array`, describe(raw))
		}
		extras[ExtraEntrypoint] = string(compact(raw))
	}
	// Only the names: the values may be API keys.
	env, _, err := spec.object("env")
	if err != nil {
		return s, err
	}
	for name := range env {
		if name == "" {
			return s, errors.New("env has an empty variable name")
		}
		s.SecretEnv = append(s.SecretEnv, name)
	}
	slices.Sort(s.SecretEnv)
	return s, nil
}
