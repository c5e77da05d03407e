// Package inbox serves the development live inbox: one subscriber's newest messages,
// kept up to date by the messageEvents subscription, with their call-to-action buttons.
// Every file it needs is embedded in the binary, so it works offline.
package inbox

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

// AssetPath is where the handler serves the page's script and styles; mount the handler
// there as well as at the page's own path.
const AssetPath = "/inbox/assets/"

// DefaultLimit is how many of the newest messages the page lists when Options.Limit is 0.
const DefaultLimit = 20

// Options configure the page.
type Options struct {
	// Title is the page's title and heading.
	Title string
	// Endpoint is the GraphQL path on this origin, for queries, mutations and the
	// WebSocket of messageEvents.
	Endpoint string
	// SessionEndpoint is the path on this origin the page POSTs {"subscriberId": ...} to
	// for a session token; it answers as POST /v1/inbox/session does.
	SessionEndpoint string
	// Subscribers are the subscriberIds the page offers; the first is the default. The
	// page's ?subscriberId= may name another.
	Subscribers []string
	// Limit is how many of the newest messages the page lists; 0 means DefaultLimit.
	Limit int
}

//go:embed page.html inbox.js inbox.css assets/graphql-ws.min.js
var files embed.FS

var page = template.Must(template.New("page.html").Funcs(template.FuncMap{"asset": assetURL}).ParseFS(files, "page.html"))

// pageConfig is what inbox.js reads from the page's JSON data block.
type pageConfig struct {
	Endpoint        string   `json:"endpoint"`
	SessionEndpoint string   `json:"sessionEndpoint"`
	Subscribers     []string `json:"subscribers"`
	Limit           int      `json:"limit"`
}

// Handler serves the page at any path outside AssetPath, and the embedded files under it.
func Handler(o Options) http.Handler {
	if o.Title == "" {
		o.Title = "Live inbox"
	}
	if o.Endpoint == "" {
		o.Endpoint = "/graphql"
	}
	if o.SessionEndpoint == "" {
		o.SessionEndpoint = "/inbox/session"
	}
	if o.Subscribers == nil {
		o.Subscribers = []string{}
	}
	if o.Limit <= 0 {
		o.Limit = DefaultLimit
	}
	var html bytes.Buffer
	err := page.Execute(&html, struct {
		Title       string
		Subscribers []string
		Config      pageConfig
	}{o.Title, o.Subscribers, pageConfig{Endpoint: o.Endpoint, SessionEndpoint: o.SessionEndpoint, Subscribers: o.Subscribers, Limit: o.Limit}})
	if err != nil {
		panic("inbox: " + err.Error()) // the template and its data are fixed: a bug, not an input
	}
	body := html.Bytes()

	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, AssetPath) {
			serveAsset(w, r, strings.TrimPrefix(r.URL.Path, AssetPath))
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		w.Write(body)
	})
}

// contentSecurityPolicy allows scripts, styles and requests (the WebSocket included:
// 'self' covers ws: and wss: on the same host) only to this origin, and the picker's
// form only back to it.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// asset is one embedded file, read once.
type asset struct {
	body        []byte
	contentType string
	hash        string // of body: part of its URL, so a new version is a new URL
}

var assets = loadAssets()

// loadAssets reads every embedded script and style; inbox.js and inbox.css sit beside
// page.html because they are this package's own code, not vendored files.
func loadAssets() map[string]asset {
	types := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
	m := map[string]asset{}
	for _, name := range []string{"inbox.js", "inbox.css", "assets/graphql-ws.min.js"} {
		b, err := fs.ReadFile(files, name)
		if err != nil {
			panic("inbox: " + err.Error())
		}
		sum := sha256.Sum256(b)
		m[path.Base(name)] = asset{body: b, contentType: types[path.Ext(name)], hash: hex.EncodeToString(sum[:8])}
	}
	return m
}

// assetURL is the versioned URL of an embedded file, for the page's template.
func assetURL(name string) (string, error) {
	a, ok := assets[name]
	if !ok {
		return "", fs.ErrNotExist
	}
	return AssetPath + name + "?v=" + a.hash, nil
}

// serveAsset writes one embedded file; its URL changes with its content, so it may be
// cached for a year.
func serveAsset(w http.ResponseWriter, r *http.Request, name string) {
	a, ok := assets[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("ETag", `"`+a.hash+`"`)
	h.Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(a.body))
}
