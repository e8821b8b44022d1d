package serve

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// web holds the page: index.html (every page path renders from it and the
// JSON API), app.js, style.css and the vendored graph library.
//
//go:embed web/index.html web/app.js web/style.css web/vendor
var web embed.FS

// pagePaths are the paths the page renders; they serve index.html.
var pagePaths = []string{"GET /{$}", "GET /entity/{id...}", "GET /community/{id}", "GET /text-unit/{id...}", "GET /graph/{id...}", "GET /search"}

func (s *Server) webRoutes(m *http.ServeMux) {
	static, err := fs.Sub(web, "web")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	index, err := fs.ReadFile(static, "index.html")
	if err != nil {
		panic(err)
	}
	page := func(w http.ResponseWriter, r *http.Request) {
		secureHeaders(w)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(index)
	}
	for _, p := range pagePaths {
		m.HandleFunc(p, page)
	}
	files := http.StripPrefix("/static/", http.FileServerFS(static))
	m.Handle("GET /static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/static/" || strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r) // no directory listings
			return
		}
		secureHeaders(w)
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	}))
}

// secureHeaders keeps the page to this server's own scripts and styles.
func secureHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
}

// public reports whether path needs no key: health checks, for probes
// that hold none, and the page and its files, which hold no data (the
// page asks for the key and sends it with its API calls).
func public(path string) bool {
	if path == "/healthz" || path == "/readyz" || path == "/" || path == "/search" || strings.HasPrefix(path, "/static/") {
		return true
	}
	for _, p := range []string{"/entity/", "/community/", "/text-unit/", "/graph/"} {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}
