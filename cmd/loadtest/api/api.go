// Package api is the message server's API as the benchmarks call it: authenticated
// requests to /v1 and /graphql, the check that a response succeeded, the GraphQL
// documents more than one benchmark sends, and the walk that finds a deep cursor.
package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	jsonv1 "github.com/go-json-experiment/json/v1"
)

// Server is the server under load and the API key of the environment it is called for.
type Server struct {
	BaseURL string
	APIKey  string
}

// ListURL is GET /v1/messages with query values.
func (s Server) ListURL(q url.Values) string {
	u := strings.TrimSuffix(s.BaseURL, "/") + "/v1/messages"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// Get is a GET of u with the API key.
func (s Server) Get(ctx context.Context, u string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "ApiKey "+s.APIKey)
	req.Header.Set("Accept", "application/json")
	return req, nil
}

// Post is a POST of a JSON body to u with the API key.
func (s Server) Post(ctx context.Context, u string, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "ApiKey "+s.APIKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	return req, nil
}

// GraphQLBody is a GraphQL request.
type GraphQLBody struct {
	Query     string         `json:"query"`
	Variables map[string]any `json:"variables,omitempty"`
}

// GraphQL is a POST of query and its variables to /graphql with the API key.
func (s Server) GraphQL(ctx context.Context, query string, vars map[string]any) (*http.Request, error) {
	body, err := json.Marshal(GraphQLBody{Query: query, Variables: vars})
	if err != nil {
		return nil, err
	}
	return s.Post(ctx, strings.TrimSuffix(s.BaseURL, "/")+"/graphql", body)
}

// ListInto reads GET /v1/messages with q and decodes its page into v.
func (s Server) ListInto(ctx context.Context, client *http.Client, q url.Values, v any) error {
	req, err := s.Get(ctx, s.ListURL(q))
	if err != nil {
		return err
	}
	body, err := Send(client, req, http.StatusOK, false)
	if err != nil {
		return err
	}
	// encoding/json's semantics on its v2 implementation (jsonv1): a 400 KB page decodes in
	// a third of encoding/json's time, which a walk of every page would otherwise count.
	if err := jsonv1.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET /v1/messages: the page is not JSON: %w", err)
	}
	return nil
}

// Send performs a request and reads the whole body. A status other than want, a
// transport failure or, on GraphQL, a response with errors is an error.
func Send(client *http.Client, req *http.Request, want int, graphql bool) ([]byte, error) {
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if resp.StatusCode != want {
		return body, fmt.Errorf("%s %s: status %d: %s", req.Method, req.URL.Path, resp.StatusCode, Clip(body))
	}
	// gqlgen writes "errors" first, so a response with errors starts with it.
	if graphql && bytes.HasPrefix(bytes.TrimSpace(body), []byte(`{"errors"`)) {
		return body, fmt.Errorf("%s %s: GraphQL errors: %s", req.Method, req.URL.Path, Clip(body))
	}
	return body, nil
}

// Clip shortens a response body for an error message.
func Clip(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}
