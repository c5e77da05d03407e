// Package inbox serves the development live inbox: one subscriber's in-app messages in
// tabs (all, unread, archived) with an unread badge, read and archived from the page,
// kept up to date by the messageEvents and messageCounts subscriptions, with their
// call-to-action buttons. Every file it needs is embedded in the binary, so it works
// offline.
package inbox

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"strings"

	"messages/graph/webasset"
)

// AssetPath is where the handler serves the page's script and styles; mount the handler
// there as well as at the page's own path.
const AssetPath = "/inbox/assets/"

// DefaultLimit is how many messages the page lists at a time (at first, and for each
// "Load more") when Options.Limit is 0.
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
	// Limit is how many messages the page lists at a time; 0 means DefaultLimit.
	Limit int
}

//go:embed page.html inbox.js inbox.css
var files embed.FS

var page = template.Must(template.New("page.html").Funcs(template.FuncMap{"asset": assets.URL}).ParseFS(files, "page.html"))

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
			assets.Serve(w, r, strings.TrimPrefix(r.URL.Path, AssetPath))
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

// assets are the page's scripts and styles; inbox.js and inbox.css sit beside page.html
// because they are this package's own code.
var assets = webasset.NewSet(AssetPath,
	webasset.File{FS: files, Path: "inbox.js"}, webasset.File{FS: files, Path: "inbox.css"}, webasset.GraphQLWS)
