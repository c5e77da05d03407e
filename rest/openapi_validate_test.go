package rest

// ValidateExchange is how the REST harnesses (api.do in main_test.go, idemAPI.send in
// idempotency_test.go) hold every /v1 request and response of the test suite to the
// OpenAPI document: kin-openapi finds the route and validates the request, the status
// and the headers; response bodies are validated against schemas compiled once with the
// JSON Schema 2020-12 validator kin-openapi itself uses.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Exchange is one request a test sent and the response it got back.
type Exchange struct {
	Method string
	// URI is the path and query as sent.
	URI            string
	Header         http.Header
	Body           []byte
	Status         int
	ResponseHeader http.Header
	ResponseBody   []byte
}

// ValidateExchange checks an exchange under /v1 against the OpenAPI document; others
// (/graphql) are not in it and pass. The response must match the document for its route
// and status. A request the document refuses must be refused (4xx or 5xx): deliberately
// malformed requests are checked that way rather than skipped. Paths and methods the
// document does not list must answer with one of the error responses they can get.
func ValidateExchange(e Exchange) error {
	if !strings.HasPrefix(e.URI, "/v1/") {
		return nil
	}
	v, err := openAPI()
	if err != nil {
		return err
	}
	ctx := context.Background()
	req, err := http.NewRequestWithContext(ctx, e.Method, "http://api.test"+e.URI, bytes.NewReader(e.Body))
	if err != nil {
		return err
	}
	req.Header = e.Header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	match := req
	if req.Method == http.MethodHead {
		match = req.Clone(ctx)
		match.Method = http.MethodGet
	}
	response := func(in *openapi3filter.RequestValidationInput) error {
		out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: e.Status,
			Header: e.ResponseHeader, Options: v.responseOptions}
		out.SetBodyBytes(e.ResponseBody)
		if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
			return err
		}
		return v.validateBody(in.Route, e)
	}
	route, params, err := v.router.FindRoute(match)
	if err != nil {
		if e.Status < 400 {
			return fmt.Errorf("answered %d, but the document has no such operation (%v)", e.Status, err)
		}
		if err := response(&openapi3filter.RequestValidationInput{Request: req, Route: v.unlisted, Options: v.options}); err != nil {
			return fmt.Errorf("response to an operation the document does not list: %w", err)
		}
		return nil
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: v.options}
	var errs []error
	if err := openapi3filter.ValidateRequest(ctx, in); err != nil && e.Status < 400 {
		errs = append(errs, fmt.Errorf("answered %d to a request the document refuses: %w", e.Status, err))
	}
	if err := response(in); err != nil {
		errs = append(errs, fmt.Errorf("response: %w", err))
	}
	return errors.Join(errs...)
}

// openAPIValidator is the loaded document and what validating against it needs.
type openAPIValidator struct {
	doc    *openapi3.T
	router routers.Router
	// unlisted answers paths and methods the document does not list: what comes before
	// routing (401, 429, 5xx) and the routing refusals (404, 405).
	unlisted *routers.Route
	// options validate requests; responseOptions responses but their bodies, which
	// validateBody checks against schemas compiled once.
	options, responseOptions *openapi3filter.Options
	schemas                  map[string]*jsonschema.Schema
}

// validateBody checks a response body against the schema the document gives it for its
// status and media type. kin-openapi would compile the schema again for every response,
// which made the suite twice as slow; here each is compiled once, with the same JSON
// Schema 2020-12 validator.
func (v *openAPIValidator) validateBody(route *routers.Route, e Exchange) error {
	r := route.Operation.Responses.Status(e.Status)
	if e.Method == http.MethodHead || r == nil || r.Value == nil || len(r.Value.Content) == 0 {
		return nil
	}
	ct := e.ResponseHeader.Get("Content-Type")
	mt := r.Value.Content.Get(ct)
	if mt == nil {
		return fmt.Errorf("Content-Type %q is not one the document gives status %d", ct, e.Status)
	}
	if mt.Schema == nil {
		return nil
	}
	schema := v.schemas[mt.Schema.Ref]
	if schema == nil {
		return fmt.Errorf("the document's schema for status %d is not a $ref to #/components/schemas", e.Status)
	}
	body, err := strictJSON(bytes.NewReader(e.ResponseBody), nil, nil, nil)
	if err != nil {
		return fmt.Errorf("body is not JSON: %w", err)
	}
	if err := schema.Validate(body); err != nil {
		return fmt.Errorf("body does not match %s: %w", mt.Schema.Ref, err)
	}
	return nil
}

// compileSchemas compiles every schema of #/components/schemas, keyed by its $ref.
func compileSchemas(doc *openapi3.T) (map[string]*jsonschema.Schema, error) {
	const base = "https://api.test/openapi.json"
	raw, err := jsonschema.UnmarshalJSON(bytes.NewReader(openAPIDocument))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(base, raw); err != nil {
		return nil, err
	}
	schemas := map[string]*jsonschema.Schema{}
	for name := range doc.Components.Schemas {
		ref := "#/components/schemas/" + name
		if schemas[ref], err = c.Compile(base + ref); err != nil {
			return nil, fmt.Errorf("compiling %s: %w", ref, err)
		}
	}
	return schemas, nil
}

// unlistedResponses are the answers a path or method missing from the document can get.
var unlistedResponses = map[int]string{
	http.StatusUnauthorized:        "Unauthorized",
	http.StatusNotFound:            "NotFound",
	http.StatusMethodNotAllowed:    "MethodNotAllowed",
	http.StatusTooManyRequests:     "TooManyRequests",
	http.StatusInternalServerError: "InternalServerError",
	http.StatusServiceUnavailable:  "ServiceUnavailable",
}

// openAPI loads and validates the document once per test binary.
var openAPI = sync.OnceValues(func() (*openAPIValidator, error) {
	openapi3filter.RegisterBodyDecoder("application/json", strictJSON)
	doc, err := loadOpenAPI()
	if err != nil {
		return nil, err
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, err
	}
	unlisted := openapi3.NewResponsesWithCapacity(len(unlistedResponses))
	for status, name := range unlistedResponses {
		r := doc.Components.Responses[name]
		if r == nil {
			return nil, fmt.Errorf("the document has no #/components/responses/%s", name)
		}
		unlisted.Set(strconv.Itoa(status), r)
	}
	schemas, err := compileSchemas(doc)
	if err != nil {
		return nil, err
	}
	options := &openapi3filter.Options{
		IncludeResponseStatus: true,
		MultiError:            true,
		SkipSettingDefaults:   true,
		AuthenticationFunc:    apiKeyScheme,
	}
	responseOptions := *options
	responseOptions.ExcludeResponseBody = true
	return &openAPIValidator{
		doc: doc, router: router,
		unlisted: &routers.Route{Spec: doc, Operation: &openapi3.Operation{Responses: unlisted}},
		options:  options, responseOptions: &responseOptions, schemas: schemas,
	}, nil
})

// loadOpenAPI parses the embedded document and validates it, examples included.
func loadOpenAPI() (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(OpenAPIDocument())
	if err != nil {
		return nil, fmt.Errorf("loading openapi.json: %w", err)
	}
	if err := doc.Validate(loader.Context, openapi3.EnableExamplesValidation()); err != nil {
		return nil, fmt.Errorf("openapi.json is not a valid OpenAPI document: %w", err)
	}
	return doc, nil
}

// strictJSON decodes a body that is one JSON value. kin-openapi's own decoder reads the
// first value and ignores what follows, which would let `{"status":"done"}}` pass.
func strictJSON(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
	dec := json.NewDecoder(body)
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

// apiKeyScheme checks the form the document gives each security scheme: "ApiKey <key>"
// for ApiKey, "Bearer <token>" for the SessionToken (HTTP bearer) scheme. Whether the
// credential is valid is the server's business (401 either way).
func apiKeyScheme(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	want, name := "ApiKey", in.SecurityScheme.Name
	if in.SecurityScheme.Type == "http" {
		want, name = "Bearer", "Authorization"
	}
	h := in.RequestValidationInput.Request.Header.Get(name)
	scheme, value, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, want) || value == "" || len(value) > 4096 || strings.ContainsAny(value, " \t") ||
		(want == "ApiKey" && len(value) > 256) {
		return fmt.Errorf("%s is not of the form %s <credential>", name, want)
	}
	return nil
}
