package edge

import (
	"fmt"
	"net/http"
	"net/url"
	"unicode/utf8"
)

// MaxURIBytes bounds a request's URI, path and query as sent; a longer one is 414. The
// largest legitimate URIs are a GET /graphql carrying a query at its 32 KiB limit,
// percent-encoded (letters, digits and spaces as "+" keep their size, GraphQL's
// punctuation triples: 40 to 50 KiB for a real query), and a GET /v1/messages with the
// 100 transactionId values allowed, 255 characters each (about 28 KiB with index keys).
// 64 KiB holds both with room; past it a URI is an attack or a mistake, and refusing it
// before anything parses it keeps its size out of the query parser, the 404 body and the
// log.
const MaxURIBytes = 64 << 10

// maxQuotedPath is how much of a client's path a refusal quotes.
const maxQuotedPath = 200

// URILimit answers 414, written by errs, to a request whose URI is longer than max bytes.
// The body names the path by its first bytes only: the error writer echoes the request's
// URI, which is what is refused for its size.
func URILimit(max int, errs ErrorWriter) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if len(r.RequestURI) <= max {
				next.ServeHTTP(w, r)
				return
			}
			short := r.WithContext(r.Context())
			short.URL = &url.URL{Path: Shorten(r.URL.Path, maxQuotedPath)}
			errs.WriteError(w, short, &StatusError{Status: http.StatusRequestURITooLong,
				Message: fmt.Sprintf("the URI is too long: send at most %d KiB of path and query", max>>10)})
		})
	}
}

// Shorten returns s whole when it has at most n bytes, else its first bytes, at most n,
// followed by "…": how a refusal quotes what a client sent without echoing all of it. The
// result is valid UTF-8: a byte that is not is quoted as U+FFFD.
func Shorten(s string, n int) string {
	if len(s) <= n && utf8.ValidString(s) {
		return s
	}
	out := make([]byte, 0, min(len(s), n)+len("…"))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if len(out)+utf8.RuneLen(r) > n {
			return string(out) + "…"
		}
		out = utf8.AppendRune(out, r)
		i += size
	}
	return string(out)
}
