package opensandbox

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/remote"
)

// The lifecycle states of a sandbox (an open set: others may come).
const (
	statePending    = "Pending"
	stateRunning    = "Running"
	statePausing    = "Pausing"
	statePaused     = "Paused"
	stateResuming   = "Resuming"
	stateStopping   = "Stopping"
	stateTerminated = "Terminated"
	stateFailed     = "Failed"
)

// The states of a snapshot.
const (
	snapCreating = "Creating"
	snapReady    = "Ready"
	snapFailed   = "Failed"
)

// listPageSize is the page size of listings (the server allows 1..200).
const listPageSize = 100

// api is the lifecycle API.
type api struct {
	o    Options
	http *http.Client
}

// imageSpec is the ImageSpec schema.
type imageSpec struct {
	URI string `json:"uri"`
}

// createRequest is the CreateSandboxRequest body of POST /sandboxes:
// exactly one of Image and SnapshotID.
type createRequest struct {
	Image          *imageSpec        `json:"image,omitempty"`
	SnapshotID     string            `json:"snapshotId,omitempty"`
	Entrypoint     []string          `json:"entrypoint,omitempty"`
	Timeout        int               `json:"timeout"`
	ResourceLimits map[string]string `json:"resourceLimits"`
	Metadata       map[string]string `json:"metadata,omitempty"`
}

// status is the SandboxStatus and SnapshotStatus schema.
type status struct {
	State   string `json:"state"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// String says the state and why, for errors.
func (s status) String() string {
	out := s.State
	if why := strings.TrimSpace(strings.Join([]string{s.Reason, s.Message}, " ")); why != "" {
		out += " (" + why + ")"
	}
	return out
}

// sandboxJSON is the Sandbox schema (and CreateSandboxResponse, a subset).
type sandboxJSON struct {
	ID         string            `json:"id"`
	Image      *imageSpec        `json:"image,omitempty"`
	SnapshotID string            `json:"snapshotId,omitempty"`
	Status     status            `json:"status"`
	Metadata   map[string]string `json:"metadata,omitempty"`
	Entrypoint []string          `json:"entrypoint"`
	ExpiresAt  *time.Time        `json:"expiresAt,omitempty"`
	CreatedAt  time.Time         `json:"createdAt"`
}

// from is what the sandbox was created from: its image, or its snapshot.
func (s sandboxJSON) from() string {
	if s.Image != nil && s.Image.URI != "" {
		return s.Image.URI
	}
	return s.SnapshotID
}

// endpoint is the Endpoint schema: a host and path without a scheme, and
// the headers every request to it must carry.
type endpoint struct {
	Endpoint string            `json:"endpoint"`
	Headers  map[string]string `json:"headers,omitempty"`
}

// snapshotJSON is the Snapshot schema.
type snapshotJSON struct {
	ID        string `json:"id"`
	SandboxID string `json:"sandboxId"`
	Status    status `json:"status"`
}

func (a *api) header() http.Header {
	h := http.Header{}
	if a.o.APIKey != "" {
		h.Set("OPEN-SANDBOX-API-KEY", a.o.APIKey)
	}
	return h
}

func (a *api) url(format string, args ...any) string { return remote.URL(a.o.APIURL, format, args...) }

// call sends a JSON request to the lifecycle API; a refused API key says
// where the key comes from.
func (a *api) call(ctx context.Context, method, u string, in, out any, want ...int) error {
	_, err := remote.JSON(ctx, a.http, a.o.Retry, method, u, a.header(), in, out, want...)
	var se *remote.StatusError
	if errors.As(err, &se) && (se.Status == http.StatusUnauthorized || se.Status == http.StatusForbidden) {
		return fmt.Errorf("%w (the lifecycle API refused the API key: check OPEN_SANDBOX_API_KEY)", err)
	}
	return err
}

// notFound turns a 404 into sandbox.ErrNotFound.
func notFound(err error, what string) error {
	var se *remote.StatusError
	if errors.As(err, &se) && se.Status == http.StatusNotFound {
		return fmt.Errorf("%w: %s (%s)", sandbox.ErrNotFound, what, se.Message)
	}
	return err
}

func (a *api) create(ctx context.Context, req createRequest) (sandboxJSON, error) {
	var out sandboxJSON
	err := a.call(ctx, http.MethodPost, a.url("/sandboxes"), req, &out, http.StatusAccepted, http.StatusCreated, http.StatusOK)
	if err == nil && out.ID == "" {
		err = fmt.Errorf("%w: create answered without an id", remote.ErrAPI)
	}
	return out, err
}

func (a *api) get(ctx context.Context, id string) (sandboxJSON, error) {
	var out sandboxJSON
	err := a.call(ctx, http.MethodGet, a.url("/sandboxes/%s", id), nil, &out, http.StatusOK)
	return out, notFound(err, "sandbox "+id)
}

func (a *api) kill(ctx context.Context, id string) error {
	err := a.call(ctx, http.MethodDelete, a.url("/sandboxes/%s", id), nil, nil, http.StatusNoContent, http.StatusOK, http.StatusAccepted)
	return notFound(err, "sandbox "+id)
}

func (a *api) pause(ctx context.Context, id string) error {
	err := a.call(ctx, http.MethodPost, a.url("/sandboxes/%s/pause", id), nil, nil, http.StatusAccepted, http.StatusNoContent, http.StatusOK)
	return notFound(err, "sandbox "+id)
}

func (a *api) resume(ctx context.Context, id string) error {
	err := a.call(ctx, http.MethodPost, a.url("/sandboxes/%s/resume", id), nil, nil, http.StatusAccepted, http.StatusNoContent, http.StatusOK)
	return notFound(err, "sandbox "+id)
}

// renew moves the sandbox's expiration to at (the API wants it later than
// the current one).
func (a *api) renew(ctx context.Context, id string, at time.Time) error {
	body := map[string]string{"expiresAt": at.UTC().Format(time.RFC3339)}
	err := a.call(ctx, http.MethodPost, a.url("/sandboxes/%s/renew-expiration", id), body, nil, http.StatusOK)
	return notFound(err, "sandbox "+id)
}

func (a *api) endpoint(ctx context.Context, id string, port int) (endpoint, error) {
	var out endpoint
	err := a.call(ctx, http.MethodGet, a.url("/sandboxes/%s/endpoints/%d", id, port), nil, &out, http.StatusOK)
	if err == nil && out.Endpoint == "" {
		err = fmt.Errorf("%w: the endpoint of port %d is empty", remote.ErrAPI, port)
	}
	return out, notFound(err, "sandbox "+id)
}

// snapshot asks for a snapshot of a running sandbox; it is ready once
// getSnapshot says so.
func (a *api) snapshot(ctx context.Context, id string) (snapshotJSON, error) {
	var out snapshotJSON
	err := a.call(ctx, http.MethodPost, a.url("/sandboxes/%s/snapshots", id), map[string]any{}, &out, http.StatusAccepted, http.StatusCreated, http.StatusOK)
	if err != nil {
		return out, remote.Unsupported(err)
	}
	if out.ID == "" {
		return out, fmt.Errorf("%w: snapshot answered without an id", remote.ErrAPI)
	}
	return out, nil
}

func (a *api) getSnapshot(ctx context.Context, id string) (snapshotJSON, error) {
	var out snapshotJSON
	err := a.call(ctx, http.MethodGet, a.url("/snapshots/%s", id), nil, &out, http.StatusOK)
	return out, notFound(err, "snapshot "+id)
}

// list returns the sandboxes whose metadata holds every pair of match,
// following the pages. The filter is one query parameter whose value is
// itself a URL-encoded query string, as the spec and the SDKs have it.
func (a *api) list(ctx context.Context, match map[string]string) ([]sandboxJSON, error) {
	filter := url.Values{}
	for k, v := range match {
		filter.Set(k, v)
	}
	var all []sandboxJSON
	for page := 1; page <= 1000; page++ {
		q := url.Values{"page": {strconv.Itoa(page)}, "pageSize": {strconv.Itoa(listPageSize)}}
		if len(filter) > 0 {
			q.Set("metadata", filter.Encode())
		}
		var out struct {
			Items      []sandboxJSON `json:"items"`
			Pagination struct {
				HasNextPage bool `json:"hasNextPage"`
			} `json:"pagination"`
		}
		if err := a.call(ctx, http.MethodGet, a.url("/sandboxes")+"?"+q.Encode(), nil, &out, http.StatusOK); err != nil {
			return nil, err
		}
		all = append(all, out.Items...)
		if !out.Pagination.HasNextPage || len(out.Items) == 0 {
			return all, nil
		}
	}
	return all, fmt.Errorf("%w: listing sandboxes: more than 1000 pages", remote.ErrAPI)
}
