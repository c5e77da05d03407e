package api

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"messages/cmd/loadtest/loopback"
)

func TestSendCountsGraphQLErrorsAndStatuses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/errors":
			fmt.Fprint(w, `{"errors":[{"message":"boom"}],"data":null}`)
		case "/limited":
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"statusCode":429}`)
		case "/redirect":
			http.Redirect(w, r, "http://192.0.2.1/", http.StatusFound)
		default:
			fmt.Fprint(w, `{"data":{"messages":{"hasMore":false}}}`)
		}
	}))
	defer srv.Close()
	client := loopback.NewHTTPClient(1, 0, false)
	for path, wantErr := range map[string]string{"/ok": "", "/errors": "GraphQL errors", "/limited": "status 429", "/redirect": "status 302"} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, nil)
		_, err := Send(client, req, http.StatusOK, true)
		if (wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), wantErr)) {
			t.Errorf("%s: err = %v, want %q", path, err, wantErr)
		}
	}
}
