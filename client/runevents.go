package client

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/openrath/rath/session"
)

// RunEvents returns the event stream of run id: its state ("run" events,
// whose data is a Run), the chunks of its sessions as they are committed
// (named by what they are: "step", "tool_call", "tool_result",
// "approval", ...; read them with RunChunk), then "end" when it is over.
// after is the id of the last event a reader had ("" for the start). Read
// it with All.
func (c *Client) RunEvents(ctx context.Context, id session.ID, after string) *Stream {
	return &Stream{c: c, ctx: ctx, path: runPath(id, "/events"), retry: 200 * time.Millisecond, last: after}
}

// RunChunkEvent is the data of a run stream's chunk event: the session the
// chunk is in, its index there, its kind and the chunk.
type RunChunkEvent struct {
	Session session.ID    `json:"session"`
	Index   int           `json:"index"`
	Kind    session.Kind  `json:"kind"`
	Chunk   session.Chunk `json:"chunk"`
}

// RunChunk decodes a run stream's chunk event (any event but run, live,
// end and error).
func (e Event) RunChunk() (RunChunkEvent, error) {
	var c RunChunkEvent
	switch e.Name {
	case "run", "live", "end", "error":
		return c, fmt.Errorf("client: a %q event is not a chunk", e.Name)
	}
	if err := json.Unmarshal(e.Data, &c); err != nil {
		return c, fmt.Errorf("client: %s event: %w", e.Name, err)
	}
	return c, nil
}

// Run decodes a run stream's "run" event.
func (e Event) Run() (*Run, error) {
	if e.Name != "run" {
		return nil, fmt.Errorf("client: a %q event is not a run", e.Name)
	}
	var r Run
	if err := json.Unmarshal(e.Data, &r); err != nil {
		return nil, fmt.Errorf("client: run event: %w", err)
	}
	return &r, nil
}
