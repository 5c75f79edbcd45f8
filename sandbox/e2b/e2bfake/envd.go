package e2bfake

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// users are the sandbox's OS users (the template's default is "user").
var users = map[string]bool{"user": true, "root": true}

// serveEnvd answers a request to sandbox id's envd.
func (s *Server) serveEnvd(w http.ResponseWriter, r *http.Request, id string) {
	b := s.lookup(id)
	if b == nil || !b.running() {
		// What E2B's proxy answers for a sandbox that is not running.
		writeJSON(w, http.StatusBadGateway, map[string]any{"sandboxId": id, "message": "The sandbox was not found", "code": 502})
		return
	}
	switch {
	case r.URL.Path == "/health" && r.Method == http.MethodGet:
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
		return
	case r.URL.Path == "/files":
		if b.secure && r.Header.Get("X-Access-Token") != b.token {
			envdError(w, http.StatusUnauthorized, "unauthorized access, please provide a valid access token or method signing if supported")
			return
		}
		if u := r.URL.Query().Get("username"); u != "" && !users[u] {
			envdError(w, http.StatusUnauthorized, fmt.Sprintf("error looking up user '%s': unknown user", u))
			return
		}
		switch r.Method {
		case http.MethodGet:
			s.download(w, r, b)
		case http.MethodPost:
			s.upload(w, r, b)
		default:
			envdError(w, http.StatusMethodNotAllowed, "method not allowed")
		}
		return
	}
	if b.secure && r.Header.Get("X-Access-Token") != b.token {
		envdError(w, http.StatusUnauthorized, "unauthorized access, please provide a valid access token or method signing if supported")
		return
	}
	p, ok := s.rpcs(b)[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if _, err := user(r); err != nil {
		if p.stream {
			w.Header().Set("Content-Type", contentType(true, false))
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(endStream(err))
			return
		}
		writeError(w, err)
		return
	}
	serveRPC(w, r, s.sc, p)
}

// user reads the Basic-auth user name Connect calls select a user with.
func user(r *http.Request) (string, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "user", nil
	}
	enc, ok := strings.CutPrefix(h, "Basic ")
	raw, err := base64.StdEncoding.DecodeString(enc)
	name, _, _ := strings.Cut(string(raw), ":")
	if !ok || err != nil || !users[name] {
		return "", errorf("unauthenticated", "invalid username: '%s'", name)
	}
	return name, nil
}

func envdError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"code": status, "message": msg})
}

// rpcs are the Connect procedures a sandbox's envd serves.
func (s *Server) rpcs(b *box) map[string]*rpc {
	return map[string]*rpc{
		"/process.Process/Start":         {in: "process.StartRequest", out: "process.StartResponse", stream: true, handle: func(c *call) error { return s.start(c, b) }},
		"/process.Process/List":          {in: "process.ListRequest", out: "process.ListResponse", handle: func(c *call) error { return b.listProcs(c) }},
		"/process.Process/SendInput":     {in: "process.SendInputRequest", out: "process.SendInputResponse", handle: func(c *call) error { return b.sendInput(c) }},
		"/process.Process/CloseStdin":    {in: "process.CloseStdinRequest", out: "process.CloseStdinResponse", handle: func(c *call) error { return b.closeStdin(c) }},
		"/process.Process/SendSignal":    {in: "process.SendSignalRequest", out: "process.SendSignalResponse", handle: func(c *call) error { return b.sendSignal(c) }},
		"/process.Process/Connect":       {in: "process.ConnectRequest", out: "process.ConnectResponse", stream: true, handle: unimplemented},
		"/process.Process/Update":        {in: "process.UpdateRequest", out: "process.UpdateResponse", handle: unimplemented},
		"/filesystem.Filesystem/Stat":    {in: "filesystem.StatRequest", out: "filesystem.StatResponse", handle: func(c *call) error { return b.stat(c) }},
		"/filesystem.Filesystem/ListDir": {in: "filesystem.ListDirRequest", out: "filesystem.ListDirResponse", handle: func(c *call) error { return b.listDir(c) }},
		"/filesystem.Filesystem/MakeDir": {in: "filesystem.MakeDirRequest", out: "filesystem.MakeDirResponse", handle: func(c *call) error { return b.makeDir(c) }},
		"/filesystem.Filesystem/Move":    {in: "filesystem.MoveRequest", out: "filesystem.MoveResponse", handle: func(c *call) error { return b.move(c) }},
		"/filesystem.Filesystem/Remove":  {in: "filesystem.RemoveRequest", out: "filesystem.RemoveResponse", handle: func(c *call) error { return b.remove(c) }},
	}
}

func unimplemented(c *call) error {
	return errorf("unimplemented", "%s is not served by the fake", c.r.URL.Path)
}

// download serves GET /files: the bytes (Range honoured), 404 for a
// missing path, 400 for a directory.
func (s *Server) download(w http.ResponseWriter, r *http.Request, b *box) {
	p := b.resolve(r.URL.Query().Get("path"))
	st, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		envdError(w, http.StatusNotFound, fmt.Sprintf("path '%s' does not exist", p))
		return
	case err != nil:
		envdError(w, http.StatusInternalServerError, err.Error())
		return
	case st.IsDir():
		envdError(w, http.StatusBadRequest, fmt.Sprintf("path '%s' is a directory", p))
		return
	}
	f, err := os.Open(p)
	if err != nil {
		envdError(w, http.StatusInternalServerError, err.Error())
		return
	}
	defer f.Close()
	w.Header().Set("Content-Disposition", "inline; filename="+filepath.Base(p))
	http.ServeContent(w, r, filepath.Base(p), st.ModTime(), f)
}

// upload serves POST /files: multipart parts named "file", written to the
// path query parameter (or the part's file name), parents created.
func (s *Server) upload(w http.ResponseWriter, r *http.Request, b *box) {
	mr, err := r.MultipartReader()
	if err != nil {
		envdError(w, http.StatusBadRequest, "error parsing multipart form: "+err.Error())
		return
	}
	type entry struct {
		Path string `json:"path"`
		Name string `json:"name"`
		Type string `json:"type"`
	}
	var out []entry
	seen := map[string]bool{}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			envdError(w, http.StatusBadRequest, "error reading multipart form: "+err.Error())
			return
		}
		if part.FormName() != "file" {
			continue
		}
		target := r.URL.Query().Get("path")
		if target == "" {
			target = part.FileName()
		}
		p := b.resolve(target)
		if seen[p] {
			envdError(w, http.StatusBadRequest, "cannot upload multiple files to the same path: "+p)
			return
		}
		seen[p] = true
		if err := writePart(p, part); err != nil {
			status := http.StatusInternalServerError
			if errors.Is(err, errIsDir) {
				status = http.StatusBadRequest
			}
			envdError(w, status, err.Error())
			return
		}
		out = append(out, entry{Path: p, Name: filepath.Base(p), Type: "file"})
	}
	writeJSON(w, http.StatusOK, out)
}

var errIsDir = errors.New("path is a directory")

func writePart(p string, part *multipart.Part) error {
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return fmt.Errorf("%w: %s", errIsDir, p)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("error ensuring directories: %w", err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, part); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// entryInfo is filesystem.EntryInfo of a path, after envd: Lstat, the
// type and mode of a symlink's target.
func entryInfo(p string) (map[string]any, error) {
	st, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	e := map[string]any{"name": filepath.Base(p), "path": p, "size": st.Size(), "modifiedTime": st.ModTime().UTC().Format(time.RFC3339Nano)}
	mode := st.Mode()
	if mode&fs.ModeSymlink != 0 {
		t, _ := os.Readlink(p)
		e["symlinkTarget"] = t
		if tst, err := os.Stat(p); err == nil {
			mode = tst.Mode()
		} else {
			mode = 0
		}
	}
	switch {
	case mode.IsDir():
		e["type"] = "FILE_TYPE_DIRECTORY"
	case mode.IsRegular():
		e["type"] = "FILE_TYPE_FILE"
	default:
		e["type"] = "FILE_TYPE_UNSPECIFIED"
	}
	e["mode"] = uint32(mode.Perm())
	e["permissions"] = mode.String()
	return e, nil
}

type pathRequest struct {
	Path  string `json:"path"`
	Depth uint32 `json:"depth"`
}

func (b *box) stat(c *call) error {
	var req pathRequest
	if err := c.decode(&req); err != nil {
		return err
	}
	p := b.resolve(req.Path)
	e, err := entryInfo(p)
	if errors.Is(err, fs.ErrNotExist) {
		return errorf("not_found", "file not found: %s", p)
	}
	if err != nil {
		return errorf("internal", "%v", err)
	}
	return c.send(map[string]any{"entry": e})
}

func (b *box) listDir(c *call) error {
	var req pathRequest
	if err := c.decode(&req); err != nil {
		return err
	}
	p := b.resolve(req.Path)
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return errorf("not_found", "path not found: %s", p)
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return errorf("invalid_argument", "path is not a directory: %s", p)
	}
	ents, err := os.ReadDir(real)
	if err != nil {
		return errorf("internal", "%v", err)
	}
	list := []map[string]any{}
	for _, de := range ents {
		if e, err := entryInfo(filepath.Join(p, de.Name())); err == nil {
			list = append(list, e)
		}
	}
	return c.send(map[string]any{"entries": list})
}

func (b *box) makeDir(c *call) error {
	var req pathRequest
	if err := c.decode(&req); err != nil {
		return err
	}
	p := b.resolve(req.Path)
	if st, err := os.Stat(p); err == nil {
		if st.IsDir() {
			return errorf("already_exists", "directory already exists: %s", p)
		}
		return errorf("invalid_argument", "path already exists but it is not a directory: %s", p)
	}
	if err := os.MkdirAll(p, 0o755); err != nil {
		return errorf("internal", "%v", err)
	}
	e, _ := entryInfo(p)
	return c.send(map[string]any{"entry": e})
}

func (b *box) move(c *call) error {
	var req struct {
		Source      string `json:"source"`
		Destination string `json:"destination"`
	}
	if err := c.decode(&req); err != nil {
		return err
	}
	src, dst := b.resolve(req.Source), b.resolve(req.Destination)
	if _, err := os.Lstat(src); err != nil {
		return errorf("not_found", "source file not found: %s", src)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return errorf("internal", "%v", err)
	}
	if err := os.Rename(src, dst); err != nil {
		return errorf("internal", "%v", err)
	}
	e, _ := entryInfo(dst)
	return c.send(map[string]any{"entry": e})
}

func (b *box) remove(c *call) error {
	var req pathRequest
	if err := c.decode(&req); err != nil {
		return err
	}
	if err := os.RemoveAll(b.resolve(req.Path)); err != nil {
		return errorf("internal", "%v", err)
	}
	return nil
}
