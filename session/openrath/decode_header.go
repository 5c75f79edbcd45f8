package openrath

import (
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
	id       string
	created  time.Time
	parents  []string
	operator string
	kind     string
	extras   map[string]string // "openrath.extra.<key>" -> value
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
	p, err := parsePlacement(rec)
	if err != nil {
		return d.corrupt("header: %w", err)
	}
	d.hdr, d.hdrLine = h, d.line
	if p != nil {
		return d.append(session.Of(p))
	}
	return nil
}

// parseHeader reads the identity and lineage fields of a header. Absent
// operator and kind get the original's defaults.
func parseHeader(rec jsonObject) (*header, error) {
	h := &header{operator: "implicit", kind: "unknown", created: time.Unix(0, 0)}
	id, ok, err := rec.str("id")
	if err != nil {
		return nil, err
	}
	if !ok || id == "" {
		return nil, errors.New("no id")
	}
	h.id = id
	if created, ok, err := rec.str("created_at"); err != nil {
		return nil, err
	} else if ok {
		if h.created, err = parseTime(created); err != nil {
			return nil, fmt.Errorf("created_at: %w", err)
		}
	}
	if _, err := rec.get("parent_session_ids", &h.parents, "array of strings"); err != nil {
		return nil, err
	}
	if _, err := rec.get("lineage_operator", &h.operator, "string"); err != nil {
		return nil, err
	}
	if _, err := rec.get("lineage_kind", &h.kind, "string"); err != nil {
		return nil, err
	}
	h.extras, err = parseExtras(rec)
	return h, err
}

// parseExtras reads lineage_extras, a list of [key, value] pairs. Non-string
// values are kept as their JSON text.
func parseExtras(rec jsonObject) (map[string]string, error) {
	var pairs [][]json.RawMessage
	if _, err := rec.get("lineage_extras", &pairs, "array of [key, value] pairs"); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(pairs))
	for i, pair := range pairs {
		var key string
		if len(pair) != 2 || jsonType(pair[0]) != "string" || json.Unmarshal(pair[0], &key) != nil {
			return nil, fmt.Errorf("lineage_extras[%d]: want a [string, value] pair", i)
		}
		out["openrath.extra."+key] = extraValue(pair[1])
	}
	return out, nil
}

// parsePlacement returns the placement the header describes, or nil if it
// names no sandbox backend. Env values are dropped on purpose.
func parsePlacement(rec jsonObject) (*session.Placement, error) {
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
		if s, err = parseSpec(spec); err != nil {
			return nil, fmt.Errorf("sandbox_spec: %w", err)
		}
	}
	if backend == "" {
		return nil, nil // a spec without backend places nothing in the original either
	}
	return &session.Placement{Backend: backend, Spec: s, SandboxID: handle}, nil
}

// maxTimeout keeps timeout_seconds well inside time.Duration, so a value
// that imports also survives export and re-import.
const maxTimeout = float64(math.MaxInt64/2) / 1e9

func parseSpec(spec jsonObject) (session.Spec, error) {
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
	s.Timeout = time.Duration(secs * float64(time.Second))
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
