package rest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"messages/graph"
	"messages/models"
)

// Idempotency headers: the client's key, echoed on every answer to it, and the mark of a
// replayed response.
const (
	IdempotencyKeyHeader    = "Idempotency-Key"
	IdempotencyReplayHeader = "Idempotency-Replay"
)

// MaxIdempotencyKeyLength is the longest key accepted, in characters.
const MaxIdempotencyKeyLength = 255

// markActionPattern is the one /v1 route that changes anything.
const markActionPattern = "POST /v1/subscribers/{subscriberId}/messages/{messageId}/actions/{type}"

// IdempotencyOptions configure idempotency keys; zero fields take the defaults.
type IdempotencyOptions struct {
	// TTL is how long a response is replayed. Older records count as absent and are purged.
	TTL time.Duration
	// PurgeInterval is how often PurgeExpired deletes expired records.
	PurgeInterval time.Duration
	// LockWait is how long, on MySQL, a request waits for another instance's transaction
	// holding the same key before answering 409.
	LockWait time.Duration
}

// DefaultIdempotencyOptions keep responses for 24 hours, as Stripe does.
var DefaultIdempotencyOptions = IdempotencyOptions{TTL: 24 * time.Hour, PurgeInterval: time.Hour, LockWait: time.Second}

// Idempotency makes requests carrying an Idempotency-Key safe to retry: the first one runs
// in a database transaction that also stores its response, and every retry within the
// TTL gets that response again without running. One value serves /v1 and /graphql, so a
// key is held once per environment whichever route uses it.
type Idempotency struct {
	store  *models.Store
	logger *slog.Logger
	now    func() time.Time
	errors errorWriter
	opts   IdempotencyOptions
	routes *http.ServeMux

	mu      sync.Mutex
	running map[runningKey]bool

	replays atomic.Uint64
}

// runningKey is a key in use by a request of this process.
type runningKey struct{ environmentID, key string }

// NewIdempotency returns the idempotency middleware over the resolver's store.
func NewIdempotency(r *graph.Resolver, o IdempotencyOptions) *Idempotency {
	if o.TTL <= 0 {
		o.TTL = DefaultIdempotencyOptions.TTL
	}
	if o.PurgeInterval <= 0 {
		o.PurgeInterval = DefaultIdempotencyOptions.PurgeInterval
	}
	if o.LockWait <= 0 {
		o.LockWait = DefaultIdempotencyOptions.LockWait
	}
	routes := http.NewServeMux()
	routes.Handle(markActionPattern, http.NotFoundHandler())
	return &Idempotency{
		store: r.Store, logger: r.Logger, now: r.Now, opts: o, routes: routes,
		errors:  errorWriter{logger: r.Logger, now: r.Now},
		running: map[runningKey]bool{},
	}
}

// Wrap applies idempotency keys to next: on /v1 (graphqlStyle false) to POST
// .../actions/{type}, on /graphql (graphqlStyle true) to POSTed operations that are not
// queries. Everything else passes through untouched, whatever its headers. Wrap must sit
// inside authentication, which puts the caller's environment in the context.
func (i *Idempotency) Wrap(next http.Handler, graphqlStyle bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys := r.Header.Values(IdempotencyKeyHeader)
		if len(keys) == 0 || r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		if !graphqlStyle {
			if _, pattern := i.routes.Handler(r); pattern != markActionPattern {
				next.ServeHTTP(w, r)
				return
			}
		}
		body, whole := readBody(r)
		r = withBody(r, body, whole)
		if !whole {
			// Too large or unreadable: the handler refuses it and nothing runs.
			next.ServeHTTP(w, r)
			return
		}
		var fingerprint string
		if graphqlStyle {
			var query bool
			fingerprint, query = graphqlFingerprint(r, body)
			if query {
				next.ServeHTTP(w, r)
				return
			}
		} else {
			fingerprint = restFingerprint(r, body)
		}
		key, err := idempotencyKey(keys)
		if err != nil {
			i.errors.write(w, r, err, graphqlStyle)
			return
		}
		caller, err := models.CallerFrom(r.Context())
		if err != nil {
			i.errors.write(w, r, err, graphqlStyle)
			return
		}
		w.Header().Set(IdempotencyKeyHeader, key)
		rk := runningKey{caller.EnvironmentID, key}
		if !i.start(rk) {
			i.refuse(w, r, models.IdempotencyKeyBusy(key), graphqlStyle)
			return
		}
		defer i.finish(rk)
		i.serve(w, r, next, &models.IdempotencyKey{EnvironmentID: caller.EnvironmentID, Key: key, Fingerprint: fingerprint}, graphqlStyle)
	})
}

// errNotKept rolls back a request whose response says it did not run.
var errNotKept = errors.New("response not kept")

// serve runs next in a transaction that first claims the key and last stores the
// response, then answers: the response, a replay of the stored one, or a refusal.
func (i *Idempotency) serve(w http.ResponseWriter, r *http.Request, next http.Handler, rec *models.IdempotencyKey, graphqlStyle bool) {
	now := i.now()
	rec.CreatedAt, rec.ExpiresAt = now, now.Add(i.opts.TTL)
	res := &responseBuffer{header: http.Header{}}
	var stored *models.IdempotencyKey
	err := i.store.Transaction(r.Context(), func(ctx context.Context) error {
		var err error
		if stored, err = i.store.ClaimIdempotencyKey(ctx, rec, i.opts.LockWait); err != nil || stored != nil {
			return err
		}
		next.ServeHTTP(res, r.WithContext(ctx))
		if !ran(res.status(), res.body.Bytes(), graphqlStyle) {
			return errNotKept
		}
		rec.Status, rec.ContentType, rec.Body = res.status(), res.header.Get("Content-Type"), res.body.Bytes()
		return i.store.CompleteIdempotencyKey(ctx, rec)
	})
	switch {
	case err == nil && stored != nil:
		i.replay(w, r, rec, stored, graphqlStyle)
	case err == nil || errors.Is(err, errNotKept):
		res.writeTo(w)
	default:
		i.refuse(w, r, err, graphqlStyle)
	}
}

// replay answers with the stored response when the request is the one stored, and with
// 422 when the key was used for another request.
func (i *Idempotency) replay(w http.ResponseWriter, r *http.Request, rec, stored *models.IdempotencyKey, graphqlStyle bool) {
	if stored.Status == 0 {
		// A committed record always holds a response; one without is treated as running.
		i.refuse(w, r, models.IdempotencyKeyBusy(rec.Key), graphqlStyle)
		return
	}
	if stored.Fingerprint != rec.Fingerprint {
		i.errors.write(w, r, models.Invalid(IdempotencyKeyHeader, rec.Key,
			fmt.Sprintf("Idempotency-Key %q was already used for a different request; send a new key for a new request", rec.Key)), graphqlStyle)
		return
	}
	if stored.ContentType != "" {
		w.Header().Set("Content-Type", stored.ContentType)
	}
	i.replays.Add(1)
	w.Header().Set(IdempotencyReplayHeader, "true")
	w.WriteHeader(stored.Status)
	_, _ = w.Write(stored.Body)
}

// Replays counts the stored responses sent again to a retried request, for metrics.
func (i *Idempotency) Replays() uint64 { return i.replays.Load() }

// refuse writes an error; a conflict (the key is in use) tells the client when to retry.
func (i *Idempotency) refuse(w http.ResponseWriter, r *http.Request, err error, graphqlStyle bool) {
	if models.ErrorCode(err) == models.ECONFLICT {
		w.Header().Set("Retry-After", "1")
	}
	i.errors.write(w, r, err, graphqlStyle)
}

func (i *Idempotency) start(k runningKey) bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.running[k] {
		return false
	}
	i.running[k] = true
	return true
}

func (i *Idempotency) finish(k runningKey) {
	i.mu.Lock()
	defer i.mu.Unlock()
	delete(i.running, k)
}

// PurgeExpired deletes expired records at once and then every PurgeInterval, until ctx
// ends. Run it in its own goroutine.
func (i *Idempotency) PurgeExpired(ctx context.Context) {
	t := time.NewTicker(i.opts.PurgeInterval)
	defer t.Stop()
	for {
		n, err := i.store.PurgeIdempotencyKeys(ctx, i.now())
		switch {
		case err != nil && ctx.Err() == nil:
			i.logger.WarnContext(ctx, "purging expired idempotency keys failed", "error", err)
		case n > 0:
			i.logger.InfoContext(ctx, "purged expired idempotency keys", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// idempotencyKey validates the header: one value of 1 to 255 printable characters.
func idempotencyKey(values []string) (string, error) {
	if len(values) != 1 {
		return "", models.Errorf(models.EMALFORMED, "send one Idempotency-Key header, not %d", len(values))
	}
	k := values[0]
	n := utf8.RuneCountInString(k)
	valid := n >= 1 && n <= MaxIdempotencyKeyLength && utf8.ValidString(k)
	for _, c := range k {
		valid = valid && unicode.IsPrint(c)
	}
	if !valid {
		return "", models.Errorf(models.EMALFORMED, "Idempotency-Key must be 1 to %d printable characters", MaxIdempotencyKeyLength)
	}
	return k, nil
}

// ran reports whether a response means the request ran, so it is stored with its change:
// 2xx, and 404 (the record does not exist, and asking again will say so). Refusals
// before running (400, 401, 409, 413, 415, 422, 429) and failures (5xx) roll back, so
// the client may retry. GraphQL answers 200 even for failed fields: there the request
// ran when a field has data, when no field failed, or when every failure is NOT_FOUND.
func ran(status int, body []byte, graphqlStyle bool) bool {
	if status == http.StatusNotFound {
		return true
	}
	if status < 200 || status > 299 {
		return false
	}
	if !graphqlStyle {
		return true
	}
	var res struct {
		Data   map[string]json.RawMessage `json:"data"`
		Errors []struct {
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(body, &res); err != nil {
		// Unreadable, so possibly a success: keep it rather than undo what it reports.
		return true
	}
	for _, v := range res.Data {
		if !bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			return true
		}
	}
	for _, e := range res.Errors {
		if e.Extensions["code"] != "NOT_FOUND" {
			return false
		}
	}
	return true
}

// readBody reads the request body up to the size limit. whole is false when it was larger
// or could not be read.
func readBody(r *http.Request) (body []byte, whole bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	return body, err == nil && len(body) <= MaxBodyBytes
}

// withBody gives the handler the body again: the bytes read, then whatever was not.
func withBody(r *http.Request, body []byte, whole bool) *http.Request {
	r2 := r.WithContext(r.Context())
	if whole {
		r2.Body = io.NopCloser(bytes.NewReader(body))
	} else {
		r2.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	}
	return r2
}

// restFingerprint identifies a /v1 request: route, method, path segments and the body as
// canonical JSON, so whitespace and key order do not make a retry a different request.
func restFingerprint(r *http.Request, body []byte) string {
	return fingerprint(markActionPattern, r.Method, pathSegments(r.URL), string(canonicalJSON(body)))
}

// graphqlFingerprint identifies a GraphQL request by its query (as the SHA-256 hash that
// persisted queries use, so the full and hash-only forms match), operation name and
// canonical variables. query is true when the selected operation is certainly a query
// or subscription, which ignores the key; a request that cannot be understood here is
// treated as a mutation, so no mutation ever runs unprotected.
func graphqlFingerprint(r *http.Request, body []byte) (fp string, query bool) {
	var params struct {
		Query         string          `json:"query"`
		OperationName string          `json:"operationName"`
		Variables     json.RawMessage `json:"variables"`
		Extensions    struct {
			PersistedQuery struct {
				Hash string `json:"sha256Hash"`
			} `json:"persistedQuery"`
		} `json:"extensions"`
	}
	if err := json.Unmarshal(body, &params); err != nil {
		return fingerprint("graphql", r.Method, r.URL.Path, string(body)), false
	}
	queryID := strings.ToLower(params.Extensions.PersistedQuery.Hash)
	if params.Query != "" {
		sum := sha256.Sum256([]byte(params.Query))
		queryID = hex.EncodeToString(sum[:])
		query = isQuery(params.Query, params.OperationName)
	}
	vars := canonicalJSON(params.Variables)
	if len(bytes.TrimSpace(params.Variables)) == 0 || string(vars) == "null" {
		vars = []byte("{}")
	}
	return fingerprint("graphql", r.Method, r.URL.Path, queryID, params.OperationName, string(vars)), query
}

// isQuery reports whether the operation a request selects is a query or subscription.
func isQuery(text, operationName string) bool {
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: text}, graph.DefaultLimits.Tokens)
	if err != nil {
		return false
	}
	var op *ast.OperationDefinition
	switch {
	case operationName != "":
		op = doc.Operations.ForName(operationName)
	case len(doc.Operations) == 1:
		op = doc.Operations[0]
	}
	return op != nil && op.Operation != ast.Mutation
}

// fingerprint hashes the parts, each prefixed by its length so no two lists collide.
func fingerprint(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// pathSegments is the path as a JSON list of its unescaped segments, so that "a%2Fb" in
// one segment differs from "a" and "b" in two.
func pathSegments(u *url.URL) string {
	segments := strings.Split(u.EscapedPath(), "/")
	for n, s := range segments {
		if v, err := url.PathUnescape(s); err == nil {
			segments[n] = v
		}
	}
	b, _ := json.Marshal(segments)
	return string(b)
}

// canonicalJSON re-encodes one JSON value with sorted keys, no insignificant whitespace
// and numbers as written; anything else is returned as it is.
func canonicalJSON(raw []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	if _, err := dec.Token(); err != io.EOF {
		return raw
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return raw
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// responseBuffer holds a handler's response until the transaction has committed.
type responseBuffer struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (b *responseBuffer) Header() http.Header { return b.header }

func (b *responseBuffer) WriteHeader(code int) {
	if b.code == 0 && code >= 200 {
		b.code = code
	}
}

func (b *responseBuffer) Write(p []byte) (int, error) {
	if b.code == 0 {
		b.code = http.StatusOK
	}
	return b.body.Write(p)
}

func (b *responseBuffer) status() int {
	if b.code == 0 {
		return http.StatusOK
	}
	return b.code
}

// writeTo sends the buffered response.
func (b *responseBuffer) writeTo(w http.ResponseWriter) {
	for k, v := range b.header {
		w.Header()[k] = v
	}
	w.WriteHeader(b.status())
	_, _ = w.Write(b.body.Bytes())
}
