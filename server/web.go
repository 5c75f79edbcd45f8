package server

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// web holds the viewer: a single page of plain JavaScript that loads
// nothing from the network but this server.
//
//go:embed web/index.html web/app.js web/style.css
var web embed.FS

// viewer serves the viewer: index.html at /, its scripts and styles under
// /static/ (no directory listings), and 404 for anything else.
func viewer() http.Handler {
	sub, err := fs.Sub(web, "web")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeFileFS(w, r, sub, "index.html")
	})
	static := http.StripPrefix("/static/", http.FileServerFS(sub))
	mux.Handle("GET /static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") { // no directory listings
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		static.ServeHTTP(w, r)
	}))
	return mux
}
