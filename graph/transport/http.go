package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"messages/graph/errcode"
	"messages/graph/extension"
	"messages/graph/internal/buffers"
	"messages/models"
)

// answers are the buffers HTTP answers are encoded into: 16 KiB to start, as a page of
// inbox rows takes, and kept up to 1 MiB.
var answers = buffers.New(16<<10, 1<<20)

// The media types a GraphQL response is sent as.
const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// POST serves POST requests with a JSON body, answering as GraphQL over HTTP says.
type POST struct{}

// GET serves queries sent as GET with URL parameters, answering as GraphQL over HTTP
// says, with validators to revalidate the answer by (httpcache.go).
type GET struct{}

var (
	_ graphql.Transport = POST{}
	_ graphql.Transport = GET{}
)

// Supports takes POST requests whose body is JSON.
func (POST) Supports(r *http.Request) bool {
	if r.Header.Get("Upgrade") != "" || r.Method != http.MethodPost {
		return false
	}
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mediaType == mediaJSON
}

// Do reads the body as one JSON object and runs the operation it names.
func (POST) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	x := newExchange(w, r, exec)
	start := graphql.Now()
	params, documentID, err := decodeBody(r.Body)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		// The edge bounds bodies (http.MaxBytesHandler) and leaves the answer to the handler.
		x.refuse(r.Context(), http.StatusRequestEntityTooLarge, malformed(fmt.Sprintf("the request body is larger than %d bytes", tooLarge.Limit)))
		return
	case err != nil:
		x.refuse(r.Context(), http.StatusBadRequest, malformed(err.Error()))
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	x.run(extension.WithDocumentID(r.Context(), documentID), params)
}

// Supports takes GET requests.
func (GET) Supports(r *http.Request) bool {
	return r.Header.Get("Upgrade") == "" && r.Method == http.MethodGet
}

// Do reads the URL's query (or documentId), operationName, variables and extensions
// parameters and runs the operation if it is a query.
func (GET) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	x := newExchange(w, r, exec)
	start := graphql.Now()
	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		x.refuse(r.Context(), http.StatusBadRequest, malformed("the URL's parameters are not URL-encoded"))
		return
	}
	params := &graphql.RawParams{Query: values.Get("query"), OperationName: values.Get("operationName"), Headers: r.Header}
	for _, p := range []struct {
		name string
		into *map[string]any
	}{{"variables", &params.Variables}, {"extensions", &params.Extensions}} {
		if v := values.Get(p.name); v != "" {
			if err := decodeJSON(strings.NewReader(v), p.into); err != nil {
				msg := p.name + " must be a JSON object"
				if errors.As(err, new(repeatedMemberError)) {
					msg = p.name + ": " + err.Error()
				}
				x.refuse(r.Context(), http.StatusBadRequest, malformed(msg))
				return
			}
		}
	}
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	x.run(extension.WithDocumentID(r.Context(), values.Get("documentId")), params)
}

// exchange is one request and its answer, in the media type the client accepts.
type exchange struct {
	w     http.ResponseWriter
	r     *http.Request
	exec  graphql.GraphExecutor
	media string
}

// newExchange starts the answer to r in the media type its Accept header asks for.
func newExchange(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) *exchange {
	return &exchange{w: w, r: r, exec: exec, media: negotiate(r.Header.Values("Accept"))}
}

// run prepares the operation of params (parsing, validation, variables, limits) and, when
// it may run, executes it.
func (x *exchange) run(ctx context.Context, params *graphql.RawParams) {
	// Without a query there is nothing to run, unless a document id or a persisted query's
	// hash stands for it.
	if params.Query == "" && params.Extensions["persistedQuery"] == nil && extension.DocumentID(ctx) == "" {
		x.refuse(ctx, http.StatusBadRequest, malformed("the request has no query"))
		return
	}
	oc, errs := x.exec.CreateOperationContext(ctx, params)
	if errs != nil {
		status := http.StatusOK
		if x.media == mediaGraphQLResponse {
			status = http.StatusBadRequest
		}
		x.refuse(graphql.WithOperationContext(ctx, oc), status, errs)
		return
	}
	if x.r.Method == http.MethodGet && oc.Operation.Operation != ast.Query {
		// A GET may be repeated, prefetched or cached: it must not change anything.
		x.w.Header().Set("Allow", http.MethodPost)
		x.refuse(graphql.WithOperationContext(ctx, oc), http.StatusMethodNotAllowed,
			malformed(fmt.Sprintf("a %s cannot be sent with GET; use POST", oc.Operation.Operation)))
		return
	}
	responses, ctx := x.exec.DispatchOperation(ctx, oc)
	res := responses(ctx)
	res.Errors = capErrors(res.Errors)
	status := http.StatusOK
	if unavailable(res) {
		// Nothing ran because the database could not be reached: a 503 with Retry-After,
		// as the same outage gets before the operation (authentication) and on /v1, so
		// clients and load balancers retry instead of caching an empty answer.
		x.w.Header().Set("Retry-After", models.UnavailableRetryAfter)
		status = http.StatusServiceUnavailable
	}
	x.write(status, res)
}

// unavailable reports whether res has no data and only errors of an unreachable database.
func unavailable(res *graphql.Response) bool {
	if len(res.Errors) == 0 || (len(res.Data) > 0 && string(res.Data) != "null") {
		return false
	}
	for _, e := range res.Errors {
		if e.Extensions["code"] != errcode.For(models.EUNAVAILABLE) {
			return false
		}
	}
	return true
}

// refuse answers a request error: errs, through the extensions and the error presenter
// like any response, and no data entry, since nothing ran.
func (x *exchange) refuse(ctx context.Context, status int, errs gqlerror.List) {
	res := x.exec.DispatchError(ctx, capErrors(errs))
	x.write(status, requestError{Errors: res.Errors, Extensions: res.Extensions})
}

// requestError is the body of an answer to a request that did not run.
type requestError struct {
	Errors     gqlerror.List  `json:"errors"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// write sends body as JSON in the negotiated media type: a GET's successful answer with
// validators to revalidate it by, anything else never to be stored.
func (x *exchange) write(status int, body any) {
	var b []byte
	var err error
	if res, ok := body.(*graphql.Response); ok {
		// The answer is written before write returns, so its buffer is reused.
		buf := answers.Get()
		defer func() { answers.Put(buf, b) }()
		b, err = appendResponse(*buf, res)
	} else {
		b, err = json.Marshal(body)
	}
	if err != nil {
		// Only a resolver's unmarshalable value gets here; the recover function reports it.
		panic(fmt.Errorf("marshal GraphQL response: %w", err))
	}
	h := x.w.Header()
	h.Set("Content-Type", x.media)
	if x.r.Method == http.MethodGet && status == http.StatusOK {
		if notModified(x.w, x.r, x.media, b) {
			return
		}
	} else {
		h.Set("Cache-Control", "no-store")
	}
	x.w.WriteHeader(status)
	_, _ = x.w.Write(b)
}

// requestBody is a POST body: gqlgen's parameters and GraphQL over HTTP's documentId, a
// trusted document's id standing for the query.
type requestBody struct {
	graphql.RawParams
	DocumentID string `json:"documentId"`
}

// decodeBody reads a POST body: one JSON object whose query, documentId and
// operationName are strings, and variables and extensions objects, each of them optional
// or null. What was sent is never echoed back; a body over the limit is
// *http.MaxBytesError.
func decodeBody(body io.Reader) (*graphql.RawParams, string, error) {
	var p requestBody
	err := decodeJSON(body, &p)
	var typeErr *json.UnmarshalTypeError
	var tooLarge *http.MaxBytesError
	switch {
	case err == nil:
		return &p.RawParams, p.DocumentID, nil
	case errors.As(err, &tooLarge):
		return nil, "", err
	case errors.Is(err, io.EOF):
		return nil, "", errors.New("the request body is empty; send a JSON object with a query")
	case errors.As(err, &typeErr) && paramTypes[typeErr.Field] != "":
		return nil, "", fmt.Errorf("%s must be %s", typeErr.Field, paramTypes[typeErr.Field])
	case errors.As(err, &typeErr):
		return nil, "", errors.New("the request body must be one JSON object")
	case errors.As(err, new(repeatedMemberError)):
		return nil, "", err
	default:
		return nil, "", errors.New("the request body is not JSON")
	}
}

// repeatedMemberError is JSON that gives one member of an object twice: decoded, the
// last would silently win, so a variable meant as {read: true} could act as read: false.
type repeatedMemberError struct{ name string }

func (e repeatedMemberError) Error() string {
	return fmt.Sprintf("the member %q is given twice in one object: give each member once", clip(e.name, 60))
}

// paramTypes names the JSON type of each request parameter, for error messages.
var paramTypes = map[string]string{
	"query":         "a string",
	"documentId":    "a string",
	"operationName": "a string",
	"variables":     "an object",
	"extensions":    "an object",
}

// decodeJSON reads exactly one JSON value into v, numbers as written; a member given
// twice in one object is a repeatedMemberError.
func decodeJSON(r io.Reader, v any) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if name, ok := models.RepeatedMember(raw); ok {
		return repeatedMemberError{name}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more than one JSON value")
	}
	return nil
}

// negotiate picks the media type of the answer from the Accept header:
// application/graphql-response+json when the client prefers it, application/json
// otherwise: when it prefers that, when Accept is absent or a wildcard (the
// specification's default, for older clients), and when it names neither (the
// specification lets the server ignore Accept then, rather than answer 406).
func negotiate(accept []string) string {
	var ranges []string
	for _, v := range accept {
		ranges = append(ranges, strings.Split(v, ",")...)
	}
	qGraphQL, exact := quality(ranges, mediaGraphQLResponse)
	qJSON, _ := quality(ranges, mediaJSON)
	if qGraphQL > qJSON || qGraphQL > 0 && qGraphQL == qJSON && exact {
		return mediaGraphQLResponse
	}
	return mediaJSON
}

// quality is the weight Accept's ranges give mediaType: that of the most specific range
// matching it (0 when none does), and whether that range names it exactly.
func quality(ranges []string, mediaType string) (q float64, exact bool) {
	typ, _, _ := strings.Cut(mediaType, "/")
	best := -1 // specificity of the range that set q: 0 */*, 1 type/*, 2 exact
	for _, r := range ranges {
		name, params, err := mime.ParseMediaType(strings.TrimSpace(r))
		if err != nil {
			continue
		}
		specificity := -1
		switch name {
		case mediaType:
			specificity = 2
		case typ + "/*":
			specificity = 1
		case "*/*":
			specificity = 0
		}
		if specificity <= best {
			continue
		}
		best, q = specificity, 1
		if v, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 && f <= 1 {
				q = f
			} else {
				q = 0
			}
		}
	}
	return q, best == 2
}
