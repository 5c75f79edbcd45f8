package server

import (
	"bytes"
	"fmt"
	"io"
	"net/http"

	"github.com/openrath/rath/export"
	"github.com/openrath/rath/session"
)

// graphTypes are the graph formats and their content types. The SVG is
// drawn by the export package's own layout (export.SVG), so it needs no
// Graphviz on the server.
var graphTypes = map[string]string{
	export.FormatJSON:    "application/json; charset=utf-8",
	export.FormatDOT:     "text/vnd.graphviz; charset=utf-8",
	export.FormatMermaid: "text/plain; charset=utf-8",
	"svg":                "image/svg+xml",
}

// errFormat is a format parameter the endpoint does not know.
type errFormat struct{ msg string }

func (e errFormat) Error() string { return e.msg }

// serveGraph writes the lineage graph of id in the request's format, or
// calls failed: with 400 and the reason for an unknown format, with 0 and
// the error otherwise.
func (s *Server) serveGraph(w http.ResponseWriter, r *http.Request, id session.ID, failed func(status int, err error)) {
	format := r.URL.Query().Get("format")
	if format == "" {
		format = export.FormatJSON
	}
	ctype, ok := graphTypes[format]
	if !ok {
		failed(http.StatusBadRequest, errFormat{fmt.Sprintf("unknown graph format %q (want json, dot, mermaid or svg)", format)})
		return
	}
	g, err := export.LoadGraph(r.Context(), s.storeOf(r.Context()), id)
	if err != nil {
		failed(0, err)
		return
	}
	var body []byte
	if format == "svg" {
		body, err = export.SVG(r.Context(), g)
	} else {
		var buf bytes.Buffer
		err = g.Write(&buf, format)
		body = buf.Bytes()
	}
	if err != nil {
		failed(0, err)
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(body)
}

// exportFiles are the session formats and their file name suffixes.
var exportFiles = map[string]string{
	export.FormatJSONL:    ".jsonl",
	export.FormatOpenRath: ".openrath.jsonl",
}

// serveExport writes session id in the request's format as a download, or
// calls failed as serveGraph does. An error after the first byte aborts
// the response: the client sees a cut download, not a broken file.
func (s *Server) serveExport(w http.ResponseWriter, r *http.Request, id session.ID, failed func(status int, err error)) {
	format := r.URL.Query().Get("format")
	if format == "" {
		format = export.FormatJSONL
	}
	suffix, ok := exportFiles[format]
	if !ok {
		failed(http.StatusBadRequest, errFormat{fmt.Sprintf("unknown export format %q (want jsonl or openrath)", format)})
		return
	}
	ses, err := s.storeOf(r.Context()).Load(r.Context(), id)
	if err != nil {
		failed(0, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/x-ndjson; charset=utf-8")
	h.Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", string(id)+suffix))
	h.Set("Cache-Control", "no-store")
	cw := &countingWriter{w: w}
	if err := export.WriteSession(cw, ses, format); err != nil {
		if cw.n == 0 {
			h.Del("Content-Disposition")
			failed(0, err)
			return
		}
		panic(http.ErrAbortHandler)
	}
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
