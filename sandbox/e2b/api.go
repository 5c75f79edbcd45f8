package e2b

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

// api is the control plane: E2B's REST API (Cube serves the same paths).
type api struct {
	o    Options
	http *http.Client
}

// newSandbox is the NewSandbox body of POST /sandboxes.
type newSandbox struct {
	TemplateID          string            `json:"templateID"`
	Timeout             int               `json:"timeout"`
	EnvVars             map[string]string `json:"envVars,omitempty"`
	Metadata            map[string]string `json:"metadata,omitempty"`
	Secure              bool              `json:"secure"`
	AllowInternetAccess *bool             `json:"allow_internet_access,omitempty"`
}

// created is the Sandbox answer of create, connect and fork.
type created struct {
	TemplateID      string  `json:"templateID"`
	SandboxID       string  `json:"sandboxID"`
	ClientID        string  `json:"clientID"`
	EnvdVersion     string  `json:"envdVersion"`
	EnvdAccessToken string  `json:"envdAccessToken,omitempty"`
	Domain          *string `json:"domain,omitempty"`
}

// detail is a SandboxDetail or ListedSandbox.
type detail struct {
	TemplateID string            `json:"templateID"`
	SandboxID  string            `json:"sandboxID"`
	StartedAt  time.Time         `json:"startedAt"`
	EndAt      time.Time         `json:"endAt"`
	State      string            `json:"state"`
	Metadata   map[string]string `json:"metadata,omitempty"`
}

func (a *api) header() http.Header {
	h := http.Header{}
	if a.o.APIKey != "" {
		h.Set("X-API-Key", a.o.APIKey)
	}
	return h
}

func (a *api) url(format string, args ...any) string { return remote.URL(a.o.APIURL, format, args...) }

func seconds(d time.Duration) int { return max(1, int((d+time.Second-1)/time.Second)) }

// notFound turns a 404 into sandbox.ErrNotFound.
func notFound(err error, id string) error {
	var se *remote.StatusError
	if errors.As(err, &se) && se.Status == http.StatusNotFound {
		return fmt.Errorf("%w: sandbox %s (%s)", sandbox.ErrNotFound, id, se.Message)
	}
	return err
}

func (a *api) create(ctx context.Context, req newSandbox) (created, error) {
	var out created
	_, err := remote.JSON(ctx, a.http, a.o.Retry, http.MethodPost, a.url("/sandboxes"), a.header(), req, &out, http.StatusCreated, http.StatusOK)
	if err == nil && out.SandboxID == "" {
		err = fmt.Errorf("%w: create answered without a sandboxID", remote.ErrAPI)
	}
	return out, err
}

func (a *api) get(ctx context.Context, id string) (detail, error) {
	var out detail
	_, err := remote.JSON(ctx, a.http, a.o.Retry, http.MethodGet, a.url("/sandboxes/%s", id), a.header(), nil, &out, http.StatusOK)
	return out, notFound(err, id)
}

// connect resumes a paused sandbox or extends a running one's lifetime,
// and returns what envd needs.
func (a *api) connect(ctx context.Context, id string) (created, error) {
	var out created
	body := map[string]int{"timeout": seconds(a.o.Lifetime)}
	_, err := remote.JSON(ctx, a.http, a.o.Retry, http.MethodPost, a.url("/sandboxes/%s/connect", id), a.header(), body, &out, http.StatusOK, http.StatusCreated)
	return out, notFound(err, id)
}

func (a *api) kill(ctx context.Context, id string) error {
	_, err := remote.JSON(ctx, a.http, a.o.Retry, http.MethodDelete, a.url("/sandboxes/%s", id), a.header(), nil, nil, http.StatusNoContent, http.StatusOK)
	return notFound(err, id)
}

func (a *api) pause(ctx context.Context, id string) error {
	_, err := remote.JSON(ctx, a.http, a.o.Retry, http.MethodPost, a.url("/sandboxes/%s/pause", id), a.header(), map[string]any{}, nil, http.StatusNoContent, http.StatusConflict)
	return notFound(err, id)
}

func (a *api) setTimeout(ctx context.Context, id string, d time.Duration) error {
	body := map[string]int{"timeout": seconds(d)}
	_, err := remote.JSON(ctx, a.http, a.o.Retry, http.MethodPost, a.url("/sandboxes/%s/timeout", id), a.header(), body, nil, http.StatusNoContent)
	return notFound(err, id)
}

// fork asks the deployment for a copy of a running sandbox. A deployment
// without the route answers 404 or 405 with no JSON: remote.ErrUnsupported.
func (a *api) fork(ctx context.Context, id string) (created, error) {
	var out []struct {
		Sandbox *created `json:"sandbox,omitempty"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error,omitempty"`
	}
	body := map[string]int{"timeout": seconds(a.o.Lifetime), "count": 1}
	_, err := remote.JSON(ctx, a.http, a.o.Retry, http.MethodPost, a.url("/sandboxes/%s/fork", id), a.header(), body, &out, http.StatusCreated, http.StatusOK)
	if err != nil {
		return created{}, remote.Unsupported(err)
	}
	switch {
	case len(out) != 1:
		return created{}, fmt.Errorf("%w: fork answered %d results for one", remote.ErrAPI, len(out))
	case out[0].Error != nil:
		return created{}, &remote.StatusError{Status: out[0].Error.Code, Message: out[0].Error.Message}
	case out[0].Sandbox == nil || out[0].Sandbox.SandboxID == "":
		return created{}, fmt.Errorf("%w: fork answered no sandbox", remote.ErrAPI)
	}
	return *out[0].Sandbox, nil
}

// snapshot takes a snapshot a new sandbox can be created from.
func (a *api) snapshot(ctx context.Context, id string) (string, error) {
	var out struct {
		SnapshotID string   `json:"snapshotID"`
		Names      []string `json:"names"`
	}
	_, err := remote.JSON(ctx, a.http, a.o.Retry, http.MethodPost, a.url("/sandboxes/%s/snapshots", id), a.header(), map[string]any{}, &out, http.StatusCreated, http.StatusOK)
	if err != nil {
		return "", remote.Unsupported(err)
	}
	if out.SnapshotID == "" {
		return "", fmt.Errorf("%w: snapshot answered no snapshotID", remote.ErrAPI)
	}
	return out.SnapshotID, nil
}

// list returns the sandboxes whose metadata holds every pair of match,
// running and paused, following the pages.
func (a *api) list(ctx context.Context, match map[string]string) ([]detail, error) {
	var pairs []string
	for k, v := range match {
		pairs = append(pairs, url.QueryEscape(k)+"="+url.QueryEscape(v))
	}
	var all []detail
	next := ""
	for page := 0; page < 1000; page++ {
		q := url.Values{"state": {"running,paused"}, "limit": {strconv.Itoa(100)}}
		if len(pairs) > 0 {
			q.Set("metadata", strings.Join(pairs, "&"))
		}
		if next != "" {
			q.Set("nextToken", next)
		}
		var out []detail
		resp, err := remote.JSON(ctx, a.http, a.o.Retry, http.MethodGet, a.url("/v2/sandboxes")+"?"+q.Encode(), a.header(), nil, &out, http.StatusOK)
		if err != nil {
			return nil, err
		}
		all = append(all, out...)
		if next = resp.Header.Get("X-Next-Token"); next == "" {
			return all, nil
		}
	}
	return all, fmt.Errorf("%w: listing sandboxes: more than 1000 pages", remote.ErrAPI)
}
