package osfake

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// The lifecycle API's schemas (components/schemas of
// sandbox-lifecycle.yml), with every property the spec defines: a request
// body with others is refused.

type imageSpec struct {
	URI  string `json:"uri"`
	Auth *struct {
		Username string `json:"username,omitempty"`
		Password string `json:"password,omitempty"`
	} `json:"auth,omitempty"`
}

type platformSpec struct {
	OS   string `json:"os"`
	Arch string `json:"arch"`
}

type networkPolicy struct {
	DefaultAction string `json:"defaultAction,omitempty"`
	Egress        []struct {
		Action string `json:"action"`
		Target string `json:"target"`
	} `json:"egress,omitempty"`
}

type createSandboxRequest struct {
	Image           *imageSpec        `json:"image"`
	SnapshotID      *string           `json:"snapshotId"`
	Platform        *platformSpec     `json:"platform"`
	Timeout         *int              `json:"timeout"`
	ResourceLimits  map[string]string `json:"resourceLimits"`
	Env             map[string]string `json:"env"`
	Metadata        map[string]string `json:"metadata"`
	Entrypoint      []string          `json:"entrypoint"`
	NetworkPolicy   *networkPolicy    `json:"networkPolicy"`
	CredentialProxy *struct {
		Enabled bool `json:"enabled"`
	} `json:"credentialProxy"`
	SecureAccess bool              `json:"secureAccess"`
	Volumes      []json.RawMessage `json:"volumes"`
	Extensions   map[string]string `json:"extensions"`
}

type sandboxStatus struct {
	State            string    `json:"state"`
	Reason           string    `json:"reason,omitempty"`
	Message          string    `json:"message,omitempty"`
	LastTransitionAt time.Time `json:"lastTransitionAt"`
}

// sandboxJSON is the Sandbox schema; the create response
// (CreateSandboxResponse) is the same without image and snapshotId.
type sandboxJSON struct {
	ID         string            `json:"id"`
	Image      *imageSpec        `json:"image,omitempty"`
	SnapshotID string            `json:"snapshotId,omitempty"`
	Platform   *platformSpec     `json:"platform,omitempty"`
	Status     sandboxStatus     `json:"status"`
	Metadata   map[string]string `json:"metadata,omitempty"`
	Entrypoint []string          `json:"entrypoint"`
	ExpiresAt  *time.Time        `json:"expiresAt,omitempty"`
	CreatedAt  time.Time         `json:"createdAt"`
}

type paginationInfo struct {
	Page        int  `json:"page"`
	PageSize    int  `json:"pageSize"`
	TotalItems  int  `json:"totalItems"`
	TotalPages  int  `json:"totalPages"`
	HasNextPage bool `json:"hasNextPage"`
}

type snapshotStatus struct {
	State            string    `json:"state"`
	Reason           string    `json:"reason,omitempty"`
	Message          string    `json:"message,omitempty"`
	LastTransitionAt time.Time `json:"lastTransitionAt"`
}

type snapshotJSON struct {
	ID        string         `json:"id"`
	SandboxID string         `json:"sandboxId"`
	Name      string         `json:"name,omitempty"`
	Status    snapshotStatus `json:"status"`
	CreatedAt time.Time      `json:"createdAt"`
}

type endpointJSON struct {
	Endpoint string            `json:"endpoint"`
	Headers  map[string]string `json:"headers,omitempty"`
}

// errorResponse is both specs' ErrorResponse.
type errorResponse struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// apiError writes an ErrorResponse.
func apiError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, errorResponse{Code: code, Message: msg})
}

// decodeStrict reads a JSON body into v, refusing unknown fields and
// trailing data. An empty body is an error only if required.
func decodeStrict(r *http.Request, v any, required bool) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		return err
	}
	return unmarshalStrict(b, v, required)
}

func unmarshalStrict(b []byte, v any, required bool) error {
	if len(bytes.TrimSpace(b)) == 0 {
		if required {
			return fmt.Errorf("request body is required")
		}
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("unexpected data after the JSON value")
	}
	return nil
}

// now is the time the fake stamps, UTC at the microsecond (as the
// reference server's Python datetimes are).
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// newUUID returns a random RFC 4122 version 4 UUID, the reference
// server's sandbox and snapshot ids.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
