package gqlclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// SubscribeSSE runs req as a stream of Server-Sent Events (graphql-sse, distinct
// connections mode): a POST answered with text/event-stream, one "next" event per
// result, then "complete". header carries the credential. A refusal before the stream
// starts returns the status and body as an error.
func SubscribeSSE(ctx context.Context, client *http.Client, url string, header http.Header, req Request, buffer int) (*Subscription, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		cancel()
		return nil, err
	}
	for k, v := range header {
		hr.Header[k] = v
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "text/event-stream")
	resp, err := client.Do(hr)
	if err != nil {
		cancel()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		_ = resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	s := &Subscription{results: make(chan Result, buffer), done: make(chan struct{}), stop: cancel}
	go func() {
		defer func() { _ = resp.Body.Close() }()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		var event string
		var data strings.Builder
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				switch event {
				case "next":
					var r Result
					if err := json.Unmarshal([]byte(data.String()), &r); err == nil {
						s.results <- r
					}
				case "complete":
					s.end(nil)
					return
				}
				event = ""
				data.Reset()
			case strings.HasPrefix(line, "event:"):
				event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
			case strings.HasPrefix(line, "data:"):
				data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
			}
		}
		s.end(sc.Err())
	}()
	return s, nil
}
