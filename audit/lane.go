package audit

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/openrath/rath/session"
)

// Labels of a lane's session.
const (
	// LabelLane marks a session as a lane of the audit log (value
	// "lane").
	LabelLane = "rath.audit"
	// LabelWriter names the process that writes the lane (host/pid).
	LabelWriter = "rath.audit.writer"
	// LabelStarted is when the lane began (RFC 3339, UTC): no record in
	// it is older.
	LabelStarted = "rath.audit.started"
	// LabelAnchor is the lane's last anchor: "LEN HEAD TIME", its number
	// of records, the id of its last chunk and its last record's time
	// when the anchor was written. Verify requires the lane to still
	// hold that chunk at that place.
	LabelAnchor = "rath.audit.anchor"
	// LabelSealed is set ("true") on a lane that will take no more
	// records (it reached its bound, or its Log was closed); its anchor
	// is then its exact length and head.
	LabelSealed = "rath.audit.sealed"
)

// laneValue is LabelLane's value.
const laneValue = "lane"

// headerPrefix starts the text of a lane's first chunk, its header.
const headerPrefix = "rath audit lane: "

// header is a lane's first chunk.
type header struct {
	Version int       `json:"version"`
	Writer  string    `json:"writer"`
	Started time.Time `json:"started"`
	// Prev is the lane this one continues (the same Log's lane before,
	// sealed when it reached its bound), as it was sealed.
	Prev *mark `json:"prev,omitempty"`
	// Seen are the anchors of other recent lanes as this lane began: a
	// witness that those lanes held at least that much.
	Seen []mark `json:"seen,omitempty"`
}

// mark is a lane's length (in records) and head at one moment.
type mark struct {
	Lane session.ID      `json:"lane"`
	Len  int64           `json:"len"`
	Head session.ChunkID `json:"head"`
	// Time is its last record's time (zero in a header's marks).
	Time time.Time `json:"time,omitzero"`
}

// String is a mark as LabelAnchor holds it (the lane aside).
func (m mark) String() string {
	return fmt.Sprintf("%d %s %s", m.Len, m.Head, m.Time.UTC().Format(timeLayout))
}

// parseAnchor reads LabelAnchor's value.
func parseAnchor(lane session.ID, v string) (mark, error) {
	f := strings.Fields(v)
	if len(f) != 3 {
		return mark{}, fmt.Errorf("anchor %q is not LEN HEAD TIME", v)
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || n < 0 {
		return mark{}, fmt.Errorf("anchor %q: bad length", v)
	}
	head := session.ChunkID(f[1])
	if err := head.Validate(); err != nil {
		return mark{}, fmt.Errorf("anchor %q: %w", v, err)
	}
	t, err := time.Parse(timeLayout, f[2])
	if err != nil {
		return mark{}, fmt.Errorf("anchor %q: %w", v, err)
	}
	return mark{Lane: lane, Len: n, Head: head, Time: t}, nil
}

// headerChunk is h as a lane's first chunk.
func headerChunk(h header) (session.Chunk, error) {
	data, err := json.Marshal(h)
	if err != nil {
		return session.Chunk{}, err
	}
	return session.Note(headerPrefix + string(data)).WithNode("audit").WithTime(h.Started), nil
}

// chunkHeader reads a lane's header chunk.
func chunkHeader(c session.Chunk) (header, error) {
	if c.Kind != session.KindNote || c.Note == nil {
		return header{}, fmt.Errorf("%w: the lane's first chunk is a %s chunk, not its header", ErrInvalid, c.Kind)
	}
	body, ok := strings.CutPrefix(c.Note.Text, headerPrefix)
	if !ok {
		return header{}, fmt.Errorf("%w: the lane's first chunk is not its header", ErrInvalid)
	}
	var h header
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		return header{}, fmt.Errorf("%w: the lane's header: %w", ErrInvalid, err)
	}
	if h.Version != 1 {
		return header{}, fmt.Errorf("%w: the lane's header has version %d", ErrInvalid, h.Version)
	}
	return h, nil
}

// timeLayout is how labels spell times.
const timeLayout = time.RFC3339Nano
