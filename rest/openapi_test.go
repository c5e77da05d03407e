package rest

// The OpenAPI document is checked three ways: it loads and validates; its record schemas
// match the Go types field by field; and ValidateExchange (openapi_validate_test.go),
// which the REST harnesses call on every /v1 request they send, rejects what the
// document does not describe.

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/wire"
)

// The document loads, is a valid OpenAPI 3.1 document, and its examples match its schemas.
func TestOpenAPIDocumentValid(t *testing.T) {
	t.Parallel()
	if _, err := openAPI(); err != nil {
		t.Fatal(err)
	}
	var v struct{ OpenAPI string }
	if err := json.Unmarshal(OpenAPIDocument(), &v); err != nil || v.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q (%v), want 3.1.0", v.OpenAPI, err)
	}
}

// Every status the error table can answer is one the document describes.
func TestOpenAPIDocumentsEveryStatus(t *testing.T) {
	t.Parallel()
	v, err := openAPI()
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, item := range v.doc.Paths.Map() {
		for _, op := range item.Operations() {
			for code := range op.Responses.Map() {
				documented[code] = true
			}
		}
	}
	for code := range unlistedResponses {
		documented[strconv.Itoa(code)] = true
	}
	answered := []int{http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusRequestEntityTooLarge,
		http.StatusUnsupportedMediaType, http.StatusTooManyRequests} // the statusErrors
	for _, status := range statuses {
		answered = append(answered, status)
	}
	for _, status := range answered {
		if !documented[strconv.Itoa(status)] {
			t.Errorf("status %d is answered but not documented", status)
		}
	}
}

// The handler serves the embedded bytes as they are.
func TestOpenAPIHandler(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	OpenAPIHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d, want 200", rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	if !bytes.Equal(rec.Body.Bytes(), openAPIDocument) {
		t.Errorf("served %d bytes that are not the embedded document (%d bytes)", rec.Body.Len(), len(openAPIDocument))
	}
	doc := OpenAPIDocument()
	doc[0] = 'x'
	if !bytes.Equal(OpenAPIDocument(), openAPIDocument) || openAPIDocument[0] == 'x' {
		t.Error("OpenAPIDocument hands out the embedded bytes themselves")
	}
}

// The record schemas name exactly the JSON fields of the Go types, require exactly the
// ones always sent (no omitempty, or required by the platform's SDK: sdkRequired), give
// each its JSON type, and refuse other fields.
func TestOpenAPISchemasMatchModels(t *testing.T) {
	t.Parallel()
	v, err := openAPI()
	if err != nil {
		t.Fatal(err)
	}
	for name, typ := range map[string]reflect.Type{
		"MessagesPage": reflect.TypeFor[models.MessagesPage](),
		"Error":        reflect.TypeFor[ErrorBody](),
		"FieldError":   reflect.TypeFor[models.FieldError](),
	} {
		ref := v.doc.Components.Schemas[name]
		if ref == nil {
			t.Errorf("no schema %s", name)
			continue
		}
		compareSchema(t, name, typ, ref.Value)
	}
}

var (
	timeType = reflect.TypeFor[models.Time]()
	jsonType = reflect.TypeFor[models.JSON]()
)

// compareSchema compares the struct type typ with the object schema s at path.
func compareSchema(t *testing.T, path string, typ reflect.Type, s *openapi3.Schema) {
	t.Helper()
	if s.AdditionalProperties.Has == nil || *s.AdditionalProperties.Has {
		t.Errorf("%s: additionalProperties is not false", path)
	}
	var names, required []string
	for f := range typ.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
		ft := f.Type
		record, _ := strings.CutPrefix(path, "MessagesPage.data[]")
		record = strings.TrimPrefix(record, ".")
		switch {
		case path == "MessagesPage.data[].template.preferenceSettings":
			// Sent as {} when the template has none, so no flag is always there.
		case !slices.Contains(strings.Split(opts, ","), "omitempty") || ft.Kind() == reflect.Struct,
			strings.HasPrefix(path, "MessagesPage.data[]") && slices.Contains(sdkRequired[record], name):
			required = append(required, name)
		}
		prop := s.Properties[name]
		if prop == nil {
			continue // reported below
		}
		at := path + "." + name
		ps := prop.Value
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Slice && ft != jsonType {
			if !ps.Type.Is("array") || ps.Items == nil {
				t.Errorf("%s: type %v, want array", at, ps.Type.Slice())
				continue
			}
			ft, ps, at = ft.Elem(), ps.Items.Value, at+"[]"
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
		}
		if want := wireType(ft); want != "" && !ps.Type.Is(want) {
			t.Errorf("%s: type %v, want %s", at, ps.Type.Slice(), want)
		}
		if ft.Kind() == reflect.Struct && ft != timeType {
			compareSchema(t, at, ft, ps)
		}
	}
	slices.Sort(names)
	slices.Sort(required)
	if diff := cmp.Diff(names, slices.Sorted(maps.Keys(s.Properties))); diff != "" {
		t.Errorf("%s: properties (-Go +document):\n%s", path, diff)
	}
	if diff := cmp.Diff(required, slices.Sorted(slices.Values(s.Required))); diff != "" {
		t.Errorf("%s: required (-always sent +document):\n%s", path, diff)
	}
}

// wireType is the JSON Schema type a Go type marshals as; "" when any.
func wireType(t reflect.Type) string {
	switch {
	case t == timeType:
		return "string"
	case t == jsonType:
		return "object"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int32, reflect.Int64:
		return "integer"
	case reflect.Float64:
		return "number"
	case reflect.Struct:
		return "object"
	}
	return ""
}

// filled returns a Message with every field set, down to the last nested one, so its
// JSON carries every key the record can have.
func filled() models.Message {
	var m models.Message
	fill(reflect.ValueOf(&m).Elem(), "s")
	return m
}

// fill sets v, and everything in it, to a value the record may hold, with text as every
// free string: one element in every slice, every pointer set, enums and timestamps valid,
// free-form JSON with text inside it (and spaces a writer must keep as stored).
func fill(v reflect.Value, text string) {
	switch p := v.Addr().Interface().(type) {
	case *models.Time:
		*p = models.NewTime(time.Date(2025, 3, 1, 8, 0, 0, 250_000_000, time.UTC))
		return
	case *models.JSON:
		quoted, _ := json.Marshal(text)
		*p = models.JSON(`{"k": [1, 2.50, "<&>", "\u2028"], "t": ` + string(quoted) + `}`)
		return
	case *models.ChannelType:
		*p = models.ChannelPush
		return
	case *models.ButtonType:
		*p = models.ButtonSecondary
		return
	case *models.MessageActionStatus:
		*p = models.ActionDone
		return
	case *models.Severity:
		*p = models.SeverityHigh
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(text)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(3)
	case reflect.Float64:
		v.SetFloat(2.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), text)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), text)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), text)
			}
		}
	}
}

// rendered renders v as the server does: a message in its wire form, a page as a list
// writes it, anything else by writeJSON.
func rendered(t testing.TB, status int, v any) (http.Header, []byte) {
	t.Helper()
	rec := httptest.NewRecorder()
	switch v := v.(type) {
	case models.Message:
		b, err := wire.Message(&v)
		if err != nil {
			t.Fatal(err)
		}
		writeEncoded(rec, status, b)
	case *models.MessagesPage:
		if err := writePage(rec, v); err != nil {
			t.Fatal(err)
		}
	default:
		writeJSON(rec, status, v)
	}
	return rec.Header(), rec.Body.Bytes()
}

// edited decodes a JSON object, applies edit, and encodes it again.
func edited(t testing.TB, body []byte, edit func(map[string]any)) []byte {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	edit(v)
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// errorAnswer is the error body the server writes for err, and its headers.
func errorAnswer(t testing.TB, uri string, err error, header http.Header) (int, http.Header, []byte) {
	t.Helper()
	ew := NewErrorWriter(slog.New(slog.DiscardHandler), func() time.Time { return time.Date(2025, 3, 1, 8, 0, 0, 0, time.UTC) })
	rec := httptest.NewRecorder()
	for k, v := range header {
		rec.Header()[k] = v
	}
	ew.WriteError(rec, httptest.NewRequest(http.MethodGet, uri, nil), err)
	return rec.Code, rec.Header(), rec.Body.Bytes()
}

// The validator accepts the server's answers and catches every kind of drift: a null, a
// missing or unknown field, a wrong enum, type or timestamp, an undocumented status or
// header, and a request the document refuses being served.
func TestValidateExchange(t *testing.T) {
	t.Parallel()
	const mark = "/v1/subscribers/alice/messages/67c2be400000000000000abc/actions/primary"
	auth := http.Header{"Authorization": {"ApiKey k"}, "Content-Type": {"application/json"}}
	markBody := []byte(`{"status":"done","payload":{"a":1}}`)

	full := filled()
	bare := models.Message{Content: []models.ContentBlock{}, Channel: models.ChannelSMS}
	recordHeader, fullBody := rendered(t, http.StatusCreated, full)
	_, bareBody := rendered(t, http.StatusCreated, bare)
	pageHeader, pageBody := rendered(t, http.StatusOK, &models.MessagesPage{Data: []*models.Message{&full, &bare}, PageSize: 10})

	// created is a mark answered 201 with body; listed a list of uri answered 200.
	created := func(body []byte) Exchange {
		return Exchange{Method: http.MethodPost, URI: mark, Header: auth, Body: markBody,
			Status: http.StatusCreated, ResponseHeader: recordHeader, ResponseBody: body}
	}
	listed := func(uri string, body []byte) Exchange {
		return Exchange{Method: http.MethodGet, URI: uri, Header: auth,
			Status: http.StatusOK, ResponseHeader: pageHeader, ResponseBody: body}
	}
	// refused is a request answered with the server's error body for err, plus header.
	refused := func(method, uri string, reqHeader http.Header, reqBody []byte, err error, header http.Header) Exchange {
		status, h, body := errorAnswer(t, uri, err, header)
		return Exchange{Method: method, URI: uri, Header: reqHeader, Body: reqBody,
			Status: status, ResponseHeader: h, ResponseBody: body}
	}
	with := func(e Exchange, edit func(*Exchange)) Exchange {
		edit(&e)
		return e
	}
	fullWith := func(edit func(record map[string]any)) Exchange { return created(edited(t, fullBody, edit)) }
	// first returns the object at keys inside v, taking the first element of arrays.
	first := func(v map[string]any, keys ...string) map[string]any {
		for _, k := range keys {
			switch x := v[k].(type) {
			case map[string]any:
				v = x
			case []any:
				v = x[0].(map[string]any)
			}
		}
		return v
	}
	invalidLimit := models.Invalid("limit", 0, "limit must be an integer from 1 to 1000")
	tooMany := &statusError{http.StatusTooManyRequests, "rate limit exceeded"}
	notFound := models.Errorf(models.ENOTFOUND, "message not found")
	notAllowed := &statusError{http.StatusMethodNotAllowed, "method DELETE is not allowed here"}
	list500 := refused(http.MethodGet, "/v1/messages", auth, nil, errors.New("boom"), nil)

	valid := map[string]Exchange{
		"mark201Full":        created(fullBody),
		"mark201Bare":        created(bareBody),
		"mark201PayloadNull": with(created(fullBody), func(e *Exchange) { e.Body = []byte(`{"status":"done","payload":null}`) }),
		"mark201Replayed": with(created(fullBody), func(e *Exchange) {
			e.ResponseHeader = http.Header{"Content-Type": {"application/json"}, "Idempotency-Key": {"k"}, "Idempotency-Replay": {"true"}}
		}),
		"mark400Malformed":          refused(http.MethodPost, mark, auth, []byte(`{`), models.Errorf(models.EMALFORMED, "request body is not valid JSON"), nil),
		"mark404Replayed":           refused(http.MethodPost, mark, auth, markBody, notFound, http.Header{"Idempotency-Replay": {"true"}}),
		"mark409":                   refused(http.MethodPost, mark, auth, markBody, models.IdempotencyKeyBusy("k"), http.Header{"Retry-After": {"1"}}),
		"mark415TextPlain":          refused(http.MethodPost, mark, http.Header{"Authorization": {"ApiKey k"}, "Content-Type": {"text/plain"}}, markBody, &statusError{http.StatusUnsupportedMediaType, "no"}, nil),
		"list200":                   listed("/v1/messages?limit=10&channel=push&transactionId=a&transactionId=b", pageBody),
		"list200BracketsAndIndices": listed("/v1/messages?transactionId[]=a&transactionId%5B0%5D=b", pageBody),
		"list200UnknownParameter":   listed("/v1/messages?foo=bar", pageBody),
		"list401NoKey":              refused(http.MethodGet, "/v1/messages", nil, nil, models.Errorf(models.EUNAUTHORIZED, "API key required"), nil),
		"list422":                   refused(http.MethodGet, "/v1/messages?limit=0", auth, nil, invalidLimit, nil),
		"list429":                   refused(http.MethodGet, "/v1/messages", auth, nil, tooMany, http.Header{"Retry-After": {"1"}, "Ratelimit-Limit": {"5"}}),
		"list500":                   list500,
		"list503":                   refused(http.MethodGet, "/v1/messages", auth, nil, models.Unavailable(time.Now()), nil),
		"route404":                  refused(http.MethodGet, "/v1/nope", auth, nil, &statusError{http.StatusNotFound, "Cannot GET /v1/nope"}, nil),
		"route405":                  refused(http.MethodDelete, "/v1/messages", auth, nil, notAllowed, http.Header{"Allow": {"GET, HEAD"}}),
		"graphqlNotInTheDocument":   {Method: http.MethodPost, URI: "/graphql", Status: http.StatusTeapot},
	}
	for name, e := range valid {
		t.Run(name, func(t *testing.T) {
			if err := ValidateExchange(e); err != nil {
				t.Errorf("refused: %v", err)
			}
		})
	}

	invalid := map[string]Exchange{
		"recordNull":                  fullWith(func(m map[string]any) { m["subject"] = nil }),
		"recordContentNull":           fullWith(func(m map[string]any) { m["content"] = nil }),
		"recordMissingRequired":       fullWith(func(m map[string]any) { delete(m, "_id") }),
		"recordUnknownField":          fullWith(func(m map[string]any) { m["unexpected"] = 1 }),
		"recordWrongType":             fullWith(func(m map[string]any) { m["read"] = "true" }),
		"recordChannelUnknown":        fullWith(func(m map[string]any) { m["channel"] = "fax" }),
		"recordTimestampNoMillis":     fullWith(func(m map[string]any) { m["createdAt"] = "2025-03-01T08:00:00Z" }),
		"recordTimestampNotUTC":       fullWith(func(m map[string]any) { m["createdAt"] = "2025-03-01T08:00:00.000+01:00" }),
		"recordPayloadArray":          fullWith(func(m map[string]any) { m["payload"] = []any{1} }),
		"subscriberMissingRequired":   fullWith(func(m map[string]any) { delete(first(m, "subscriber"), "subscriberId") }),
		"subscriberVersionString":     fullWith(func(m map[string]any) { first(m, "subscriber")["__v"] = "3" }),
		"actionStatusUnknown":         fullWith(func(m map[string]any) { first(m, "cta", "action")["status"] = "maybe" }),
		"buttonTypeUnknown":           fullWith(func(m map[string]any) { first(m, "cta", "action", "buttons")["type"] = "tertiary" }),
		"variantWithVariants":         fullWith(func(m map[string]any) { first(m, "template", "steps", "variants")["variants"] = []any{} }),
		"mark201ToABodyWithoutStatus": with(created(fullBody), func(e *Exchange) { e.Body = []byte(`{"payload":{}}`) }),
		"mark201ToTrailingData":       with(created(fullBody), func(e *Exchange) { e.Body = []byte(`{"status":"done"}}`) }),
		"mark201TrailingData":         created(append(bytes.Clone(fullBody), '}')),
		"mark201ToTypeTertiary":       with(created(fullBody), func(e *Exchange) { e.URI = strings.Replace(mark, "primary", "tertiary", 1) }),
		"mark201ToATooLongKey": with(created(fullBody), func(e *Exchange) {
			e.Header = auth.Clone()
			e.Header.Set("Idempotency-Key", strings.Repeat("k", 256))
		}),
		"mark201ReplayNotTrue": with(created(fullBody), func(e *Exchange) {
			e.ResponseHeader = http.Header{"Content-Type": {"application/json"}, "Idempotency-Replay": {"yes"}}
		}),
		"mark401WithoutChallenge": with(refused(http.MethodPost, mark, nil, markBody, models.Errorf(models.EUNAUTHORIZED, "no"), nil),
			func(e *Exchange) { e.ResponseHeader.Del("WWW-Authenticate") }),
		"list200MissingHasMore":     listed("/v1/messages", edited(t, pageBody, func(m map[string]any) { delete(m, "hasMore") })),
		"list200NotJSON":            with(listed("/v1/messages", pageBody), func(e *Exchange) { e.ResponseHeader = http.Header{"Content-Type": {"text/plain"}} }),
		"list200ToARefusedRequest":  listed("/v1/messages?limit=0", pageBody),
		"list200ToAnUnknownChannel": listed("/v1/messages?channel=fax", pageBody),
		"list200WithoutKey":         with(listed("/v1/messages", pageBody), func(e *Exchange) { e.Header = nil }),
		"list404Undocumented":       refused(http.MethodGet, "/v1/messages", auth, nil, notFound, nil),
		"list422WithoutErrors":      refused(http.MethodGet, "/v1/messages?limit=0", auth, nil, models.Errorf(models.EINVALID, "limit"), nil),
		"list429WithoutRetryAfter":  refused(http.MethodGet, "/v1/messages", auth, nil, tooMany, nil),
		"list429NegativeRemaining":  refused(http.MethodGet, "/v1/messages", auth, nil, tooMany, http.Header{"Retry-After": {"1"}, "Ratelimit-Remaining": {"-1"}}),
		"list500WithoutErrorId": with(list500, func(e *Exchange) {
			e.ResponseBody = edited(t, e.ResponseBody, func(m map[string]any) { delete(m, "errorId") })
		}),
		"route200Unknown":      {Method: http.MethodGet, URI: "/v1/nope", Header: auth, Status: http.StatusOK, ResponseHeader: pageHeader, ResponseBody: []byte(`{}`)},
		"route405WithoutAllow": refused(http.MethodDelete, "/v1/messages", auth, nil, notAllowed, nil),
	}
	for name, e := range invalid {
		t.Run(name, func(t *testing.T) {
			if err := ValidateExchange(e); err == nil {
				t.Errorf("accepted %s %s answered %d:\n%s", e.Method, e.URI, e.Status, e.ResponseBody)
			}
		})
	}
}
