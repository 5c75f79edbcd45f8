package client

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"time"

	"github.com/openrath/rath/session"
)

// Schedule starts a workflow on a cron expression.
type Schedule struct {
	Name     string            `json:"name"`
	Workflow string            `json:"workflow"`
	Cron     string            `json:"cron"`
	Input    *string           `json:"input,omitempty"`
	Needs    map[string]string `json:"needs,omitempty"`
	Paused   bool              `json:"paused"`
	// Next is its next tick; Last and LastRun its last fire.
	Next    time.Time  `json:"next,omitzero"`
	Last    time.Time  `json:"last,omitzero"`
	LastRun session.ID `json:"last_run,omitempty"`
}

// Schedules returns the cluster's schedules, by name.
func (c *Client) Schedules(ctx context.Context) ([]Schedule, error) {
	var out struct {
		Items []Schedule `json:"items"`
	}
	err := c.call(ctx, request{method: "GET", path: "/v1/schedules"}, &out)
	return out.Items, err
}

// AddSchedule adds a schedule (its Name, Workflow, Cron and optionally
// Input, Needs and Paused) and returns it with its next tick.
func (c *Client) AddSchedule(ctx context.Context, s Schedule) (*Schedule, error) {
	body := struct {
		Name     string            `json:"name"`
		Workflow string            `json:"workflow"`
		Cron     string            `json:"cron"`
		Input    *string           `json:"input,omitempty"`
		Needs    map[string]string `json:"needs,omitempty"`
		Paused   bool              `json:"paused,omitempty"`
	}{s.Name, s.Workflow, s.Cron, s.Input, s.Needs, s.Paused}
	return scheduleCall(ctx, c, "/v1/schedules", body)
}

// PauseSchedule pauses (or, with paused false, resumes) schedule name.
func (c *Client) PauseSchedule(ctx context.Context, name string, paused bool) (*Schedule, error) {
	verb := "/resume"
	if paused {
		verb = "/pause"
	}
	return scheduleCall(ctx, c, "/v1/schedules/"+url.PathEscape(name)+verb, struct{}{})
}

// RemoveSchedule removes schedule name.
func (c *Client) RemoveSchedule(ctx context.Context, name string) error {
	res, err := c.do(ctx, request{method: "DELETE", path: "/v1/schedules/" + url.PathEscape(name)})
	if err != nil {
		return err
	}
	return res.Body.Close()
}

func scheduleCall(ctx context.Context, c *Client, path string, body any) (*Schedule, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	var s Schedule
	if err := c.call(ctx, request{method: "POST", path: path, body: bytes.NewReader(b), ctype: "application/json"}, &s); err != nil {
		return nil, err
	}
	return &s, nil
}
