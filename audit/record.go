package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/openrath/rath/session"
)

// Kinds of record.
const (
	// KindAuthentication: a request presented credentials (or none).
	KindAuthentication = "authentication"
	// KindGrant: a principal's grant was checked for an action.
	KindGrant = "grant"
	// KindPolicy: a policy decided an action of a run.
	KindPolicy = "policy"
	// KindSecret: a secret reference was resolved.
	KindSecret = "secret"
	// KindRunControl: a run was cancelled, resumed, reviewed or approved.
	KindRunControl = "run_control"
	// KindToken: a token was created, rotated or revoked.
	KindToken = "token"
	// KindQuota: a run refused, or made to wait, by its scope's quota.
	KindQuota = "quota"
	// KindWebhook: a webhook was added or removed.
	KindWebhook = "webhook"
)

// Outcomes of a record.
const (
	OutcomeAllowed = "allowed"
	OutcomeDenied  = "denied"
	OutcomeFailed  = "failed"
	OutcomeOK      = "ok"
	// OutcomeWaiting: the act waits (a run over its quota).
	OutcomeWaiting = "waiting"
)

// Record is one entry of the audit log. Its JSON form, without Lane, is
// what the log stores and hashes.
type Record struct {
	// Seq is the record's place in its lane: 1, 2, 3, … with no gaps.
	// Append sets it.
	Seq int64 `json:"seq"`
	// Time is when the log recorded it (UTC, never earlier than the
	// record before it in its lane). Append sets it.
	Time      time.Time `json:"time"`
	Kind      string    `json:"kind"`
	Principal string    `json:"principal,omitempty"`
	Tenant    string    `json:"tenant,omitempty"`
	Project   string    `json:"project,omitempty"`
	Action    string    `json:"action,omitempty"`
	Resource  string    `json:"resource,omitempty"`
	Outcome   string    `json:"outcome"`
	Reason    string    `json:"reason,omitempty"`
	RequestID string    `json:"request_id,omitempty"`
	// Source is where a request came from (its client's address), on the
	// records of requests that have no principal: failed authentications.
	Source string `json:"source,omitempty"`
	// Count is how many events of the same kind, outcome and source the
	// record stands for, when it sums up those not recorded one by one
	// (0: the record is one event).
	Count int64 `json:"count,omitempty"`
	// Lane is the lane (a session of the store) the record is in. List
	// sets it; it is not part of the stored record.
	Lane session.ID `json:"lane,omitempty"`
}

// recordPrefix starts the text of every record's note chunk.
const recordPrefix = "rath audit record: "

// MaxField bounds each string field of a record, in bytes.
const MaxField = 4096

// check reports why r cannot be appended; its error wraps ErrInvalid.
func (r *Record) check() error {
	if r.Kind == "" {
		return fmt.Errorf("%w: a record needs a kind", ErrInvalid)
	}
	if r.Outcome == "" {
		return fmt.Errorf("%w: a record needs an outcome", ErrInvalid)
	}
	if r.Count < 0 {
		return fmt.Errorf("%w: count %d is negative", ErrInvalid, r.Count)
	}
	for name, v := range map[string]string{"kind": r.Kind, "principal": r.Principal, "tenant": r.Tenant, "project": r.Project,
		"action": r.Action, "resource": r.Resource, "outcome": r.Outcome, "reason": r.Reason, "request_id": r.RequestID,
		"source": r.Source} {
		if len(v) > MaxField {
			return fmt.Errorf("%w: %s is %d bytes, more than %d", ErrInvalid, name, len(v), MaxField)
		}
	}
	return nil
}

// encodeRecord is the text of r's note chunk: the prefix and r's JSON,
// without its lane.
func encodeRecord(r Record) (string, error) {
	r.Lane = ""
	r.Time = r.Time.UTC()
	data, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	return recordPrefix + string(data), nil
}

// decodeRecord reads a record's note text. Only the exact form
// encodeRecord writes is accepted: unknown or repeated fields, a lane, a
// missing kind or outcome, or any other spelling of the same record are
// errors wrapping ErrInvalid.
func decodeRecord(text string) (Record, error) {
	body, ok := strings.CutPrefix(text, recordPrefix)
	if !ok {
		return Record{}, fmt.Errorf("%w: not an audit record", ErrInvalid)
	}
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	var r Record
	if err := dec.Decode(&r); err != nil {
		return Record{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if dec.More() {
		return Record{}, fmt.Errorf("%w: data after the record", ErrInvalid)
	}
	if r.Lane != "" {
		return Record{}, fmt.Errorf("%w: a stored record names a lane", ErrInvalid)
	}
	if err := r.check(); err != nil {
		return Record{}, err
	}
	again, err := encodeRecord(r)
	if err != nil {
		return Record{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if !bytes.Equal([]byte(again), []byte(text)) {
		return Record{}, fmt.Errorf("%w: the record is not in its canonical form", ErrInvalid)
	}
	return r, nil
}

// recordChunk is r as a note chunk stamped with r's time.
func recordChunk(r Record) (session.Chunk, error) {
	text, err := encodeRecord(r)
	if err != nil {
		return session.Chunk{}, err
	}
	return session.Note(text).WithNode("audit").WithTime(r.Time), nil
}

// chunkRecord reads the record a chunk holds.
func chunkRecord(c session.Chunk) (Record, error) {
	if c.Kind != session.KindNote || c.Note == nil {
		return Record{}, fmt.Errorf("%w: a %s chunk, not a record's note", ErrInvalid, c.Kind)
	}
	return decodeRecord(c.Note.Text)
}
