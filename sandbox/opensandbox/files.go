package opensandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"path"

	"github.com/openrath/rath/sandbox"
)

// fileMetadata is execd's FileMetadata: where an uploaded file goes.
type fileMetadata struct {
	Path string `json:"path"`
}

// Upload implements remote.Conn: POST /files/upload, a multipart form of a
// metadata part (JSON, sent as a file part: execd reads it from the form's
// files) followed by the file part.
func (e *execd) Upload(ctx context.Context, p string, data []byte) error {
	body, ctype, err := uploadForm(p, data)
	if err != nil {
		return err
	}
	resp, err := e.send(ctx, true, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.base+"/files/upload", bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", ctype)
		}
		return req, err
	})
	if err != nil {
		return fmt.Errorf("uploading %s: %w", p, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("uploading %s: %w", p, e.refused(ctx, resp))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.Body.Close()
}

// uploadForm builds the upload's body and its content type.
func uploadForm(p string, data []byte) ([]byte, string, error) {
	meta, err := json.Marshal(fileMetadata{Path: p})
	if err != nil {
		return nil, "", err
	}
	var body bytes.Buffer
	body.Grow(len(data) + 1024)
	mw := multipart.NewWriter(&body)
	part := func(name, filename, ctype string, content []byte) error {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, name, filename))
		h.Set("Content-Type", ctype)
		w, err := mw.CreatePart(h)
		if err == nil {
			_, err = w.Write(content)
		}
		return err
	}
	if err := part("metadata", "metadata", "application/json", meta); err != nil {
		return nil, "", err
	}
	if err := part("file", path.Base(p), "application/octet-stream", data); err != nil {
		return nil, "", err
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	return body.Bytes(), mw.FormDataContentType(), nil
}

// Download implements remote.Conn: GET /files/download.
func (e *execd) Download(ctx context.Context, p string) ([]byte, error) {
	u := e.base + "/files/download?" + url.Values{"path": {p}}.Encode()
	resp, err := e.send(ctx, true, func(ctx context.Context) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	})
	if err != nil {
		return nil, fmt.Errorf("downloading %s: %w", p, err)
	}
	if resp.StatusCode == http.StatusNotFound {
		if se, code := readRefusal(resp); code == codeFileNotFound {
			return nil, fmt.Errorf("%w: %s", sandbox.ErrNotFound, p)
		} else if gerr := e.gone(ctx); gerr != nil {
			return nil, gerr
		} else {
			return nil, fmt.Errorf("downloading %s: execd of sandbox %s: %w", p, e.id, se)
		}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("downloading %s: %w", p, e.refused(ctx, resp))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%w: downloading %s: %v", sandbox.ErrInterrupted, p, err)
	}
	if resp.ContentLength >= 0 && int64(len(data)) != resp.ContentLength {
		return nil, fmt.Errorf("%w: downloading %s: %d of %d bytes", sandbox.ErrInterrupted, p, len(data), resp.ContentLength)
	}
	return data, nil
}

// Remove implements remote.Conn: DELETE /files (execd answers 200 for a
// file that is not there).
func (e *execd) Remove(ctx context.Context, p string) error {
	u := e.base + "/files?" + url.Values{"path": {p}}.Encode()
	resp, err := e.send(ctx, true, func(ctx context.Context) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodDelete, u, nil)
	})
	if err != nil {
		return fmt.Errorf("removing %s: %w", p, err)
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("removing %s: %w", p, e.refused(ctx, resp))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.Body.Close()
}
