// Package playground serves the development GraphQL playground (GraphiQL) with every
// file it needs embedded in the binary, so it works offline and opens authenticated.
package playground

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"messages/graph/webasset"
)

// AssetPath is where the handler serves the page's scripts and styles; mount the handler
// there as well as at the page's own path.
const AssetPath = "/playground/assets/"

// DefaultQuery is the example the first tab holds when Options.DefaultQuery is empty.
const DefaultQuery = `# The newest messages of the API key's environment.
# Run: Ctrl-Enter. Every type and field: Docs.
query Messages {
  messages(limit: 5) {
    totalCount
    data {
      _id
      createdAt
      channel
      title
      read
      subscriber { subscriberId }
    }
  }
}
`

// Options configure the page.
type Options struct {
	// Title is the page's title.
	Title string
	// Endpoint is the GraphQL URL, usually a path on the same origin such as "/graphql".
	Endpoint string
	// Headers are sent with every request, the schema's introspection included, and
	// shown in the header editor, where the user may override them.
	Headers map[string]string
	// DefaultQuery fills the first tab; empty means DefaultQuery.
	DefaultQuery string
}

//go:embed page.html start.js assets/*.js assets/*.css
var files embed.FS

var page = template.Must(template.New("page.html").Funcs(template.FuncMap{"asset": assets.URL}).ParseFS(files, "page.html"))

// pageConfig is what start.js reads from the page's JSON data block.
type pageConfig struct {
	Endpoint     string            `json:"endpoint"`
	Headers      map[string]string `json:"headers"`
	DefaultQuery string            `json:"defaultQuery"`
}

// Handler serves the page at any path outside AssetPath, and the embedded files under it.
func Handler(o Options) http.Handler {
	if o.Title == "" {
		o.Title = "GraphQL playground"
	}
	if o.Endpoint == "" {
		o.Endpoint = "/graphql"
	}
	if o.DefaultQuery == "" {
		o.DefaultQuery = DefaultQuery
	}
	if o.Headers == nil {
		o.Headers = map[string]string{}
	}
	var html bytes.Buffer
	err := page.Execute(&html, struct {
		Title  string
		Config pageConfig
	}{o.Title, pageConfig{Endpoint: o.Endpoint, Headers: o.Headers, DefaultQuery: o.DefaultQuery}})
	if err != nil {
		panic("playground: " + err.Error()) // the template and its data are fixed: a bug, not an input
	}
	csp := contentSecurityPolicy(o.Endpoint)
	body := html.Bytes()

	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, AssetPath) {
			assets.Serve(w, r, strings.TrimPrefix(r.URL.Path, AssetPath))
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-store") // it carries the API key
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		w.Write(body)
	})
}

// contentSecurityPolicy allows scripts and styles only from this origin (GraphiQL sets
// inline styles, so those are allowed), and requests only to this origin and the endpoint,
// over HTTP and over the subscriptions' WebSocket. 'self' covers ws: and wss: of this
// host (CSP Level 3); an endpoint elsewhere needs its ws(s): origin named, since an
// http(s): source does not match a WebSocket URL.
func contentSecurityPolicy(endpoint string) string {
	connect := "'self'"
	if u, err := url.Parse(endpoint); err == nil && u.Scheme != "" && u.Host != "" {
		connect += " " + u.Scheme + "://" + u.Host
		switch u.Scheme {
		case "http":
			connect += " ws://" + u.Host
		case "https":
			connect += " wss://" + u.Host
		}
	}
	return "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
		"img-src 'self' data:; font-src 'self' data:; connect-src " + connect + "; " +
		"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

// assets are the page's scripts and styles; start.js sits beside page.html because it is
// this package's own code, not a vendored file.
var assets = webasset.NewSet(AssetPath,
	webasset.File{FS: files, Path: "start.js"}, webasset.File{FS: files, Path: "assets/graphiql.min.js"},
	webasset.File{FS: files, Path: "assets/graphiql.min.css"}, webasset.File{FS: files, Path: "assets/react.production.min.js"},
	webasset.File{FS: files, Path: "assets/react-dom.production.min.js"}, webasset.GraphQLWS)
