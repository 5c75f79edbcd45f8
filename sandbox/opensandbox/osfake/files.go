package osfake

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// permission is the spec's Permission (and, with path, FileMetadata).
// The fake applies the mode; owner and group are accepted and ignored.
type permission struct {
	Owner string `json:"owner,omitempty"`
	Group string `json:"group,omitempty"`
	Mode  int    `json:"mode"`
}

// fileInfo is the spec's FileInfo.
type fileInfo struct {
	Path       string    `json:"path"`
	Type       string    `json:"type"`
	Size       int64     `json:"size"`
	ModifiedAt time.Time `json:"modified_at"`
	CreatedAt  time.Time `json:"created_at"`
	Owner      string    `json:"owner"`
	Group      string    `json:"group"`
	Mode       int       `json:"mode"`
}

// maxUploadMemory is how much of an upload is held in memory (gin's
// default); the rest goes to temporary files.
const maxUploadMemory = 32 << 20

// fileError answers a failed file access as execd does: 404
// FILE_NOT_FOUND for a missing file, 500 RUNTIME_ERROR otherwise.
func fileError(w http.ResponseWriter, err error) {
	if errors.Is(err, fs.ErrNotExist) {
		apiError(w, http.StatusNotFound, codeFileNotFound, "file not found. "+err.Error())
		return
	}
	apiError(w, http.StatusInternalServerError, codeRuntimeError, "error accessing file: "+err.Error())
}

// path resolves a path from execd's API in the sandbox.
func (b *box) path(p string) (string, error) { return b.resolve(p, b.baseEnv()) }

// chmod applies a Permission's mode, its decimal digits read as octal
// (755 is rwxr-xr-x), as execd does; 0 leaves the mode.
func chmod(p string, perm permission) error {
	if perm.Mode == 0 {
		return nil
	}
	mode, err := strconv.ParseUint(strconv.Itoa(perm.Mode), 8, 32)
	if err != nil {
		return err
	}
	return os.Chmod(p, os.FileMode(mode))
}

// upload serves POST /files/upload as execd does
// (controller/filesystem_upload.go): a multipart form whose "metadata"
// parts (JSON FileMetadata) and "file" parts pair up in order. Both are
// read from the form's files, so a metadata part must carry a file name
// too. Parent directories are created; files are written with mode 0777
// less the umask, then given the metadata's mode.
func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	b := boxOf(r)
	if err := r.ParseMultipartForm(maxUploadMemory); err != nil || r.MultipartForm == nil {
		apiError(w, http.StatusBadRequest, codeInvalidFile, "multipart form is empty")
		return
	}
	defer func() { _ = r.MultipartForm.RemoveAll() }()
	metas, files := r.MultipartForm.File["metadata"], r.MultipartForm.File["file"]
	switch {
	case len(metas) == 0:
		apiError(w, http.StatusBadRequest, codeInvalidMetadata, "metadata file is missing")
		return
	case len(files) == 0:
		apiError(w, http.StatusBadRequest, codeInvalidContent, "file is missing")
		return
	case len(metas) != len(files):
		apiError(w, http.StatusBadRequest, codeInvalidFile, fmt.Sprintf("metadata and file count mismatch: %d vs %d", len(metas), len(files)))
		return
	}
	for i := range metas {
		var meta struct {
			Path string `json:"path"`
			permission
		}
		raw, err := readPart(metas[i].Open)
		if err != nil {
			apiError(w, http.StatusBadRequest, codeInvalidMetadata, "error reading metadata content. "+err.Error())
			return
		}
		if err := unmarshalStrict(raw, &meta, true); err != nil {
			apiError(w, http.StatusBadRequest, codeInvalidMetadata, "invalid metadata format. "+err.Error())
			return
		}
		if meta.Path == "" {
			apiError(w, http.StatusBadRequest, codeInvalidMetadata, "metadata path is empty")
			return
		}
		dst, err := b.path(meta.Path)
		if err != nil {
			apiError(w, http.StatusInternalServerError, codeRuntimeError, fmt.Sprintf("error resolving target path %s. %v", meta.Path, err))
			return
		}
		if err := os.MkdirAll(filepath.Dir(dst), os.ModePerm); err != nil {
			apiError(w, http.StatusInternalServerError, codeRuntimeError, fmt.Sprintf("error creating target directory %s. %v", filepath.Dir(dst), err))
			return
		}
		if err := writeFile(dst, files[i].Open); err != nil {
			apiError(w, http.StatusInternalServerError, codeRuntimeError, fmt.Sprintf("error writing file %s. %v", dst, err))
			return
		}
		if err := chmod(dst, meta.permission); err != nil {
			apiError(w, http.StatusInternalServerError, codeRuntimeError, fmt.Sprintf("error chmoding file %s. %v", dst, err))
			return
		}
	}
	w.WriteHeader(http.StatusOK)
}

func readPart[F io.ReadCloser](open func() (F, error)) ([]byte, error) {
	f, err := open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func writeFile[F io.ReadCloser](dst string, open func() (F, error)) error {
	src, err := open()
	if err != nil {
		return err
	}
	defer src.Close()
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, os.ModePerm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, src); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// download serves GET /files/download as execd does
// (controller/filesystem_download.go): application/octet-stream with an
// attachment Content-Disposition; a Range header gives 206 with its first
// range, 416 {"code":"UNKNOWN"} when malformed; a range that starts past
// the end is left to net/http (416 too).
func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("path")
	if q == "" {
		apiError(w, http.StatusBadRequest, codeMissingQuery, "missing query parameter 'path'")
		return
	}
	p, err := boxOf(r).path(q)
	if err != nil {
		apiError(w, http.StatusInternalServerError, codeRuntimeError, fmt.Sprintf("error resolving file path: %s. %v", q, err))
		return
	}
	f, err := os.Open(p)
	if err != nil {
		fileError(w, err)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		apiError(w, http.StatusInternalServerError, codeRuntimeError, fmt.Sprintf("error getting file stat info: %s. %v", p, err))
		return
	}
	if st.IsDir() {
		// execd would start a 200 and fail reading; the fake says so.
		apiError(w, http.StatusInternalServerError, codeRuntimeError, fmt.Sprintf("error accessing file: %s is a directory", p))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", contentDisposition(filepath.Base(p)))
	h.Set("Content-Length", strconv.FormatInt(st.Size(), 10))
	if rh := r.Header.Get("Range"); rh != "" {
		ranges, err := parseRange(rh, st.Size())
		if err != nil {
			h.Del("Content-Disposition")
			h.Del("Content-Length")
			apiError(w, http.StatusRequestedRangeNotSatisfiable, codeUnknownExecd, "invalid range")
			return
		}
		if len(ranges) > 0 {
			rg := ranges[0]
			h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", rg.start, rg.start+rg.length-1, st.Size()))
			h.Set("Content-Length", strconv.FormatInt(rg.length, 10))
			w.WriteHeader(http.StatusPartialContent)
			_, _ = f.Seek(rg.start, io.SeekStart)
			_, _ = io.CopyN(w, f, rg.length)
			return
		}
	}
	http.ServeContent(w, r, filepath.Base(p), st.ModTime(), f)
}

// contentDisposition is execd's attachment header, RFC 5987-encoded for
// non-ASCII names.
func contentDisposition(name string) string {
	for _, c := range name {
		if c > 127 {
			enc := url.PathEscape(name)
			return `attachment; filename="` + enc + `"; filename*=UTF-8''` + enc
		}
	}
	return `attachment; filename="` + name + `"`
}

type byteRange struct{ start, length int64 }

// parseRange reads a bytes= Range header as execd does: ranges that start
// past the end are dropped, ends past it are clipped.
func parseRange(s string, size int64) ([]byteRange, error) {
	spec, ok := strings.CutPrefix(s, "bytes=")
	if !ok {
		return nil, errors.New("invalid range")
	}
	var out []byteRange
	for _, ra := range strings.Split(spec, ",") {
		ra = strings.TrimSpace(ra)
		if ra == "" {
			continue
		}
		first, last, ok := strings.Cut(ra, "-")
		if !ok {
			return nil, errors.New("invalid range")
		}
		first, last = strings.TrimSpace(first), strings.TrimSpace(last)
		var rg byteRange
		if first == "" {
			n, err := strconv.ParseInt(last, 10, 64)
			if err != nil || n < 0 {
				return nil, errors.New("invalid range")
			}
			n = min(n, size)
			rg = byteRange{size - n, n}
		} else {
			i, err := strconv.ParseInt(first, 10, 64)
			if err != nil || i < 0 {
				return nil, errors.New("invalid range")
			}
			rg = byteRange{i, size - i}
			if last != "" {
				j, err := strconv.ParseInt(last, 10, 64)
				if err != nil || j < i {
					return nil, errors.New("invalid range")
				}
				rg.length = j - i + 1
			}
		}
		if rg.start >= size {
			continue
		}
		rg.length = min(rg.length, size-rg.start)
		out = append(out, rg)
	}
	return out, nil
}

// removeFiles serves DELETE /files: each path a file (a directory is an
// error, a missing file is not).
func (s *Server) removeFiles(w http.ResponseWriter, r *http.Request) {
	b := boxOf(r)
	for _, q := range r.URL.Query()["path"] {
		err := func() error {
			p, err := b.path(q)
			if err != nil {
				return fmt.Errorf("invalid path: %w", err)
			}
			st, err := os.Stat(p)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				return nil
			case err != nil:
				return err
			case st.IsDir():
				return fmt.Errorf("path is a directory: %s", q)
			}
			return os.Remove(p)
		}()
		if err != nil {
			apiError(w, http.StatusInternalServerError, codeRuntimeError, fmt.Sprintf("error removing file %s. %v", q, err))
			return
		}
	}
	w.WriteHeader(http.StatusOK)
}

// filesInfo serves GET /files/info: a map from each path as given to its
// FileInfo (not following a final symlink).
func (s *Server) filesInfo(w http.ResponseWriter, r *http.Request) {
	b := boxOf(r)
	out := map[string]fileInfo{}
	for _, q := range r.URL.Query()["path"] {
		p, err := b.path(q)
		if err != nil {
			apiError(w, http.StatusInternalServerError, codeRuntimeError, "error accessing file: "+err.Error())
			return
		}
		st, err := os.Lstat(p)
		if err != nil {
			fileError(w, err)
			return
		}
		out[q] = infoOf(p, st)
	}
	writeJSON(w, http.StatusOK, out)
}

// infoOf is a FileInfo as execd builds it: names for owner and group when
// known, the mode's octal digits as a decimal number.
func infoOf(p string, st os.FileInfo) fileInfo {
	fi := fileInfo{Path: p, Size: st.Size(), ModifiedAt: st.ModTime(), CreatedAt: changeTime(st)}
	switch m := st.Mode(); {
	case m&os.ModeSymlink != 0:
		fi.Type = "symlink"
	case m.IsDir():
		fi.Type = "directory"
	case m.IsRegular():
		fi.Type = "file"
	default:
		fi.Type = "other"
	}
	fi.Mode, _ = strconv.Atoi(strconv.FormatUint(uint64(st.Mode().Perm()), 8))
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		fi.Owner = strconv.FormatUint(uint64(sys.Uid), 10)
		if u, err := user.LookupId(fi.Owner); err == nil {
			fi.Owner = u.Username
		}
		fi.Group = strconv.FormatUint(uint64(sys.Gid), 10)
		if g, err := user.LookupGroupId(fi.Group); err == nil {
			fi.Group = g.Name
		}
	}
	return fi
}

// moveFiles serves POST /files/mv: each src renamed to dest, dest's
// directory created, an existing dest refused.
func (s *Server) moveFiles(w http.ResponseWriter, r *http.Request) {
	var req []struct {
		Src  string `json:"src"`
		Dest string `json:"dest"`
	}
	if err := decodeStrict(r, &req, true); err != nil {
		apiError(w, http.StatusBadRequest, codeInvalidRequest, "error parsing request, MAYBE invalid body format. "+err.Error())
		return
	}
	b := boxOf(r)
	for _, m := range req {
		src, err1 := b.path(m.Src)
		dst, err2 := b.path(m.Dest)
		if err := errors.Join(err1, err2); err != nil {
			fileError(w, err)
			return
		}
		if _, err := os.Stat(src); err != nil {
			fileError(w, fmt.Errorf("source path not found: %s: %w", m.Src, err))
			return
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			fileError(w, err)
			return
		}
		if _, err := os.Stat(dst); err == nil {
			fileError(w, fmt.Errorf("destination path already exists: %s", m.Dest))
			return
		}
		if err := os.Rename(src, dst); err != nil {
			fileError(w, err)
			return
		}
	}
	w.WriteHeader(http.StatusOK)
}

// listDirectory serves GET /directories/list: entries to depth (default
// 1) in lexical order, each directory's descendants after it, symlinks
// not followed (a symlink as the path is refused).
func (s *Server) listDirectory(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("path") == "" {
		apiError(w, http.StatusBadRequest, codeMissingQuery, "missing query parameter 'path'")
		return
	}
	depth := 1
	if v := q.Get("depth"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			apiError(w, http.StatusBadRequest, codeInvalidRequest, "invalid query parameter 'depth': "+v)
			return
		}
		depth = n
	}
	p, err := boxOf(r).path(q.Get("path"))
	if err != nil {
		apiError(w, http.StatusInternalServerError, codeRuntimeError, err.Error())
		return
	}
	st, err := os.Lstat(p)
	switch {
	case err != nil:
		fileError(w, err)
		return
	case st.Mode()&os.ModeSymlink != 0:
		apiError(w, http.StatusBadRequest, codeInvalidRequest, "path is a symbolic link, refusing to traverse: "+p)
		return
	case !st.IsDir():
		apiError(w, http.StatusBadRequest, codeInvalidRequest, "path is not a directory: "+p)
		return
	}
	out := []fileInfo{}
	var walk func(dir string, level int) error
	walk = func(dir string, level int) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		for _, e := range entries {
			full := filepath.Join(dir, e.Name())
			info, err := e.Info()
			if err != nil {
				return err
			}
			out = append(out, infoOf(full, info))
			if e.IsDir() && level+1 < depth {
				if err := walk(full, level+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if depth > 0 {
		if err := walk(p, 0); err != nil {
			apiError(w, http.StatusInternalServerError, codeRuntimeError, fmt.Sprintf("error listing directory %s. %v", p, err))
			return
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// makeDirs serves POST /directories: a map from path to Permission, each
// made with its parents (mkdir -p) and given the mode.
func (s *Server) makeDirs(w http.ResponseWriter, r *http.Request) {
	var req map[string]permission
	if err := decodeStrict(r, &req, true); err != nil {
		apiError(w, http.StatusBadRequest, codeInvalidRequest, "error parsing request, MAYBE invalid body format. "+err.Error())
		return
	}
	b := boxOf(r)
	for dir, perm := range req {
		p, err := b.path(dir)
		if err == nil {
			err = os.MkdirAll(p, os.ModePerm)
		}
		if err == nil {
			err = chmod(p, perm)
		}
		if err != nil {
			fileError(w, err)
			return
		}
	}
	w.WriteHeader(http.StatusOK)
}

// removeDirs serves DELETE /directories: each path removed with all it
// holds (rm -rf).
func (s *Server) removeDirs(w http.ResponseWriter, r *http.Request) {
	b := boxOf(r)
	for _, q := range r.URL.Query()["path"] {
		p, err := b.path(q)
		if err == nil {
			err = os.RemoveAll(p)
		}
		if err != nil {
			apiError(w, http.StatusInternalServerError, codeRuntimeError, fmt.Sprintf("error removing directory %s. %v", q, err))
			return
		}
	}
	w.WriteHeader(http.StatusOK)
}
