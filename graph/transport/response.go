package transport

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"messages/graph/errcode"
	"messages/models"
)

// encodeResponse encodes res as json.Marshal does, but for its data, which gqlgen wrote
// as compact JSON and which is written as it is: json.Marshal would scan all of it again
// to compact it, and escape the HTML characters in its strings (megabytes on a page of
// 1,000 messages). The other members are small and encoded by encoding/json.
func encodeResponse(res *graphql.Response) ([]byte, error) {
	return appendResponse(make([]byte, 0, len(res.Data)+64), res)
}

// appendResponse appends res, encoded as encodeResponse does, to b.
func appendResponse(b []byte, res *graphql.Response) ([]byte, error) {
	b = append(b, '{')
	if len(res.Errors) > 0 {
		errs, err := json.Marshal(res.Errors)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, `"errors":`...), errs...), ',')
	}
	b = append(b, `"data":`...)
	if len(res.Data) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, res.Data...)
	}
	tail, err := json.Marshal(responseTail{res.Label, res.Path, res.HasNext, res.Extensions})
	if err != nil {
		return nil, err
	}
	if len(tail) > 2 { // more than {}
		b = append(append(b, ','), tail[1:len(tail)-1]...)
	}
	return append(b, '}'), nil
}

// responseTail is graphql.Response's members after data, as it encodes them.
type responseTail struct {
	Label      string         `json:"label,omitempty"`
	Path       ast.Path       `json:"path,omitempty"`
	HasNext    *bool          `json:"hasNext,omitempty"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// encodeResult is a result's JSON as a stream sends it, as an HTTP answer's body would
// be.
func encodeResult(res *graphql.Response) []byte {
	if res == nil {
		return nil
	}
	res.Errors = capErrors(res.Errors)
	b, err := encodeResponse(res)
	if err != nil {
		// Only a resolver's unmarshalable value gets here.
		return []byte(`{"errors":[{"message":"internal error","extensions":{"code":"INTERNAL_SERVER_ERROR"}}],"data":null}`)
	}
	return b
}

// malformed is the error of a request that is not a GraphQL request at all.
func malformed(message string) gqlerror.List {
	return gqlerror.List{{Message: message, Extensions: map[string]any{"code": "BAD_REQUEST"}}}
}

// presentCoded is a coded error as a GraphQL error: its message and extensions.code.
func presentCoded(err error) *gqlerror.Error {
	return &gqlerror.Error{Message: models.ErrorMessage(err), Extensions: map[string]any{"code": errcode.Of(err)}}
}

// maxErrors is the most errors one response lists: a 10 KB document of unknown fields
// would otherwise be answered with a megabyte of them.
const maxErrors = 20

// capErrors keeps the first maxErrors errors of list and says how many more there were.
func capErrors(list gqlerror.List) gqlerror.List {
	if len(list) <= maxErrors {
		return list
	}
	capped := append(gqlerror.List(nil), list[:maxErrors]...)
	return append(capped, &gqlerror.Error{
		Message:    fmt.Sprintf("%d more errors not listed", len(list)-maxErrors),
		Extensions: map[string]any{"code": "TOO_MANY_ERRORS"},
	})
}

// clip cuts s to at most n bytes, on a character boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
