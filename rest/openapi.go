package rest

import (
	"bytes"
	_ "embed"
	"net/http"
	"strconv"
)

// openAPIDocument is the OpenAPI 3.1 description of /v1: both operations, their
// parameters, the records, the error bodies per status and the headers. The test suite
// validates every /v1 request and response it makes against it, so it cannot drift from
// the code.
//
//go:embed openapi.json
var openAPIDocument []byte

// OpenAPIDocument returns a copy of the OpenAPI 3.1 document describing /v1.
func OpenAPIDocument() []byte { return bytes.Clone(openAPIDocument) }

// OpenAPIHandler serves the OpenAPI document as application/json. It needs no API key:
// the document is what a client reads before it has one.
func OpenAPIHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(openAPIDocument)))
		_, _ = w.Write(openAPIDocument)
	})
}
