package transport

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"
)

// HTTP caching of queries sent as GET. The answer depends on the API key and on the
// data, which can change at any time, so a browser may keep it but must ask again
// before using it (Cache-Control: private, no-cache; no shared cache may keep it), and
// it asks with the answer's ETag: when the query, run again, answers the same bytes, the
// answer is 304 Not Modified without a body. The query always runs: the ETag spares
// sending the answer, not computing it.

// getCacheControl is the Cache-Control of a GET query's answer.
const getCacheControl = "private, no-cache"

// notModified gives the answer body, in media type, its validators and reports whether
// the request's If-None-Match already holds it, in which case it has answered 304.
func notModified(w http.ResponseWriter, r *http.Request, media string, body []byte) bool {
	tag := entityTag(media, body)
	h := w.Header()
	h.Set("Cache-Control", getCacheControl)
	h.Set("ETag", tag)
	h.Add("Vary", "Authorization")
	h.Add("Vary", "Accept")
	if !matches(r.Header.Values("If-None-Match"), tag) {
		return false
	}
	h.Del("Content-Type")
	w.WriteHeader(http.StatusNotModified)
	return true
}

// entityTag is the strong ETag of an answer: a hash of its bytes and of its media type,
// since the same bytes as application/json and as application/graphql-response+json are
// two representations.
func entityTag(media string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(media))
	h.Write([]byte{0})
	h.Write(body)
	return `"` + base64.RawURLEncoding.EncodeToString(h.Sum(nil)) + `"`
}

// matches reports whether the If-None-Match values list tag, by the weak comparison
// RFC 9110 asks of If-None-Match (W/ is ignored), or are "*".
func matches(ifNoneMatch []string, tag string) bool {
	for _, v := range ifNoneMatch {
		for _, t := range strings.Split(v, ",") {
			t = strings.TrimSpace(t)
			if t == "*" || strings.TrimPrefix(t, "W/") == tag {
				return true
			}
		}
	}
	return false
}
