// Package manifest reads the persisted-document manifests that GraphQL clients' build
// tools write, unchanged: Apollo's persisted query manifest
// (@apollo/generate-persisted-query-manifest), and the flat id-to-text maps of Relay
// (relay-compiler's persistConfig.file) and GraphQL Code Generator's client preset
// (persisted-documents.json).
package manifest

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Entry is one document of a manifest.
type Entry struct {
	// ID is the manifest's id for the document.
	ID string
	// SHA256 is the hex SHA-256 of Body, computed here.
	SHA256 string
	Body   string
	// Name is the operation name the manifest gives, "" when it gives none.
	Name string
}

// Format names the kind of manifest a file is.
type Format string

// The formats Read takes.
const (
	// Apollo is @apollo/generate-persisted-query-manifest's
	// {"format": "apollo-persisted-query-manifest", "version": 1, "operations": [...]}.
	Apollo Format = "apollo-persisted-query-manifest"
	// Map is a JSON object of id to document text: relay-compiler's persisted queries and
	// GraphQL Code Generator's persisted-documents.json.
	Map Format = "map"
)

// apolloManifest is Apollo's manifest, version 1.
type apolloManifest struct {
	Format     string `json:"format"`
	Version    int    `json:"version"`
	Operations []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
		Type string `json:"type"`
		Body string `json:"body"`
	} `json:"operations"`
}

// Read parses a manifest and checks each id that has the length of a digest against the
// digest of its text computed here (64 hex digits or sha256:<hex>: SHA-256, 40: SHA-1,
// 32: MD5), so a
// manifest whose ids were not made from its texts is refused; any other id is the build's
// own and taken as it is. Entries come in the order of their ids.
func Read(data []byte) (Format, []Entry, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return "", nil, errors.New("not a manifest: expected a JSON object")
	}
	var probe struct {
		Format json.RawMessage `json:"format"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return "", nil, fmt.Errorf("not a manifest: %v", err)
	}
	var entries []Entry
	format := Map
	if probe.Format != nil {
		var m apolloManifest
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil {
			return "", nil, fmt.Errorf("not an Apollo persisted query manifest: %v", err)
		}
		if m.Format != string(Apollo) || m.Version != 1 {
			return "", nil, fmt.Errorf("unknown manifest format %q version %d: expected %q version 1", m.Format, m.Version, Apollo)
		}
		format = Apollo
		for _, op := range m.Operations {
			entries = append(entries, Entry{ID: op.ID, Body: op.Body, Name: op.Name})
		}
	} else {
		var m map[string]string
		if err := json.Unmarshal(data, &m); err != nil {
			return "", nil, fmt.Errorf("not a manifest: expected an object of document ids to document texts: %v", err)
		}
		for id, body := range m {
			entries = append(entries, Entry{ID: id, Body: body})
		}
	}
	if len(entries) == 0 {
		return "", nil, errors.New("the manifest has no documents")
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].ID < entries[j].ID })
	for i := range entries {
		e := &entries[i]
		switch {
		case e.ID == "":
			return "", nil, errors.New("a document has an empty id")
		case len(e.ID) > 200:
			return "", nil, fmt.Errorf("document id %.40q... is longer than 200 characters", e.ID)
		case e.Body == "":
			return "", nil, fmt.Errorf("document %q has no text", e.ID)
		}
		sum := sha256.Sum256([]byte(e.Body))
		e.SHA256 = hex.EncodeToString(sum[:])
		if want, algorithm := digestOf(e.ID, e.Body); want != "" && want != e.ID {
			return "", nil, fmt.Errorf("document %q: its id is not the %s of its text (%s)", e.ID, algorithm, want)
		}
	}
	return format, entries, nil
}

// digestOf returns the digest of body that an id of this length would be, in lowercase
// hex, and the digest's name; "" for an id of no digest's length or not in hex. An id
// "sha256:<hex>", as GraphQL over HTTP's persisted documents and GraphQL Code
// Generator's client preset write it, is a SHA-256.
func digestOf(id, body string) (string, string) {
	if hexSum, ok := strings.CutPrefix(id, "sha256:"); ok {
		sum := sha256.Sum256([]byte(body))
		if want := hex.EncodeToString(sum[:]); want != hexSum {
			return "sha256:" + want, "SHA-256"
		}
		return id, "SHA-256"
	}
	if _, err := hex.DecodeString(id); err != nil {
		return "", ""
	}
	switch len(id) {
	case 64:
		sum := sha256.Sum256([]byte(body))
		return hex.EncodeToString(sum[:]), "SHA-256"
	case 40:
		sum := sha1.Sum([]byte(body))
		return hex.EncodeToString(sum[:]), "SHA-1"
	case 32:
		sum := md5.Sum([]byte(body))
		return hex.EncodeToString(sum[:]), "MD5"
	}
	return "", ""
}
