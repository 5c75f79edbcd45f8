package client

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// ClusterStatus is the cluster as its page in the viewer shows it: the
// workers, the pools and the runs (GET /v1/cluster).
type ClusterStatus struct {
	Workers []Worker `json:"workers"`
	Pools   []Queue  `json:"pools"`
	Runs    []Run    `json:"runs"`
}

// ClusterStatus returns the cluster's status now.
func (c *Client) ClusterStatus(ctx context.Context) (*ClusterStatus, error) {
	var out ClusterStatus
	if err := c.call(ctx, request{method: "GET", path: "/v1/cluster"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ClusterEvents returns the stream of the cluster's status: a "status"
// event at once, after changes and at least every two seconds (read each
// with Event.Status), "error" when the server could not read it (the
// stream goes on). Read it with All.
func (c *Client) ClusterEvents(ctx context.Context) *Stream {
	return &Stream{c: c, ctx: ctx, path: "/v1/cluster/events", retry: 200 * time.Millisecond}
}

// Status decodes a "status" event's data.
func (e Event) Status() (*ClusterStatus, error) {
	if e.Name != "status" {
		return nil, fmt.Errorf("client: a %q event is not a status", e.Name)
	}
	var s ClusterStatus
	if err := json.Unmarshal(e.Data, &s); err != nil {
		return nil, fmt.Errorf("client: status event: %w", err)
	}
	return &s, nil
}
