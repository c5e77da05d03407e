// Package webasset serves the embedded scripts and styles of the development pages (the
// playground and the live inbox): each file read once, at a URL that carries a hash of
// its content so browsers may cache it for a year. It also holds the one vendored copy
// of graphql-ws's browser build, which both pages load.
package webasset

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"time"
)

//go:embed graphql-ws.min.js
var vendored embed.FS

// GraphQLWS is graphql-ws's UMD build (see VERSIONS): the global graphqlWs, whose
// client speaks graphql-transport-ws, the protocol /graphql accepts.
var GraphQLWS = File{FS: vendored, Path: "graphql-ws.min.js"}

// File is one embedded file: the file system holding it and its path there. It is
// served under its base name.
type File struct {
	FS   fs.FS
	Path string
}

// Set is one page's files, served under a path prefix.
type Set struct {
	prefix string
	byName map[string]asset
}

type asset struct {
	body        []byte
	contentType string
	hash        string // of body: part of its URL, so a new version is a new URL
}

var contentTypes = map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}

// NewSet reads files, served under prefix; a missing file is a build mistake and panics.
func NewSet(prefix string, files ...File) *Set {
	s := &Set{prefix: prefix, byName: map[string]asset{}}
	for _, f := range files {
		b, err := fs.ReadFile(f.FS, f.Path)
		if err != nil {
			panic("webasset: " + err.Error())
		}
		sum := sha256.Sum256(b)
		s.byName[path.Base(f.Path)] = asset{body: b, contentType: contentTypes[path.Ext(f.Path)], hash: hex.EncodeToString(sum[:8])}
	}
	return s
}

// URL is the versioned URL of a file, for a page's template.
func (s *Set) URL(name string) (string, error) {
	a, ok := s.byName[name]
	if !ok {
		return "", fs.ErrNotExist
	}
	return s.prefix + name + "?v=" + a.hash, nil
}

// Body is a file's content, and whether the set has it.
func (s *Set) Body(name string) ([]byte, bool) {
	a, ok := s.byName[name]
	return a.body, ok
}

// Serve writes one file; its URL changes with its content, so it may be cached for a
// year.
func (s *Set) Serve(w http.ResponseWriter, r *http.Request, name string) {
	a, ok := s.byName[name]
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
