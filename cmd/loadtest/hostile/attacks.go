package hostile

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// persistedQueries sends --persisted distinct 1 MB documents, each with its hash as an
// automatic persisted query.
func (h *hostileRun) persistedQueries(ctx context.Context, r *attackRow) error {
	return concurrently(ctx, r, h.c.persisted, 4, func(ctx context.Context, i int) (string, error) {
		query := fmt.Sprintf("# %d\n{ messages { totalCount } }", i) + strings.Repeat(" ", 1_000_000)
		sum := sha256.Sum256([]byte(query))
		return h.post(ctx, h.c.apiKey, map[string]any{"query": query,
			"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}})
	})
}

// distinctDocuments sends --documents distinct documents, each as dense as the limits
// allow.
func (h *hostileRun) distinctDocuments(ctx context.Context, r *attackRow) error {
	return concurrently(ctx, r, h.c.documents, 4, func(ctx context.Context, i int) (string, error) {
		// The densest document within the limits: each is parsed, validated and cached.
		query := fmt.Sprintf("query Q%d { messages(limit: 1) { data { %s} } } fragment F on Message { _id }", i, strings.Repeat("...F ", 985))
		return h.post(ctx, h.c.apiKey, map[string]any{"query": query})
	})
}

// aliasesOverLargePayloads asks 40 times, as the large-payload tenant, for ten aliases of
// a 1,000-message page with payloads.
func (h *hostileRun) aliasesOverLargePayloads(ctx context.Context, r *attackRow) error {
	var q strings.Builder
	q.WriteString("{")
	for i := range 10 {
		fmt.Fprintf(&q, " a%d: messages(limit: 1000) { data { _id payload content { content } } }", i)
	}
	q.WriteString(" }")
	return concurrently(ctx, r, 40, 4, func(ctx context.Context, _ int) (string, error) {
		return h.post(ctx, h.c.largeKey, map[string]any{"query": q.String()})
	})
}

// repeatedFields is gqlparser's quadratic case: one field repeated in one selection set.
// Each document is distinct, so no cache answers for it.
func repeatedFields(i int) string {
	return fmt.Sprintf("query Q%d { messages { data {", i) + strings.Repeat(" _id", 7_990) + " } } }"
}

// unknownFieldsDocument names thousands of fields no type has.
func unknownFieldsDocument(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "query Q%d {", i)
	for j := 0; b.Len() < 32_000; j++ {
		fmt.Fprintf(&b, " f%d", j)
	}
	return b.String()[:32_000] + " }"
}

// hostileDocuments is an attack that sends 100 documents made by document.
func (h *hostileRun) hostileDocuments(document func(i int) string) func(ctx context.Context, r *attackRow) error {
	return func(ctx context.Context, r *attackRow) error {
		return concurrently(ctx, r, 100, 4, func(ctx context.Context, i int) (string, error) {
			return h.post(ctx, h.c.apiKey, map[string]any{"query": document(i)})
		})
	}
}

// slowBodies opens 300 connections that each send a stream request's headers without a
// credential and never its body, and counts how each was answered and when.
func (h *hostileRun) slowBodies(ctx context.Context, r *attackRow) error {
	u, err := url.Parse(h.c.baseURL)
	if err != nil {
		return err
	}
	var held atomic.Int64
	err = concurrently(ctx, r, 300, 300, func(ctx context.Context, _ int) (string, error) {
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			return "dial failed", nil
		}
		defer conn.Close()
		start := time.Now()
		fmt.Fprintf(conn, "POST /graphql HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: 100\r\n\r\n", u.Host)
		_ = conn.SetReadDeadline(time.Now().Add(60 * time.Second))
		line, err := bufio.NewReader(conn).ReadString('\n')
		if time.Since(start) > 5*time.Second {
			held.Add(1)
		}
		if err != nil {
			return "no answer", nil
		}
		return strings.TrimPrefix(strings.TrimSpace(line), "HTTP/1.1 "), nil
	})
	r.notes = fmt.Sprintf("%d held past 5 s", held.Load())
	return err
}
