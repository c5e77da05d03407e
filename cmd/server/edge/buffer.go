package edge

import (
	"bytes"
	"io"
	"net/http"
)

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

// responseBuffer holds a handler's response until the transaction has committed. It
// wraps no writer (nothing may reach the client before the commit), so it is a
// ResponseWriter of its own rather than an httpsnoop hook.
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
