package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"messages/graph/gqlclient"
	"messages/models/dbtest"
)

// A production server with TRUSTED_DOCUMENTS=require: a session runs the documents a
// manifest loaded with documents add trusts, by id, over POST, graphql-ws and SSE, and
// nothing else (PERSISTED_QUERY_NOT_IN_LIST, the socket kept); an API key runs any
// document; a manifest added while it runs is answered within seconds, without a restart.
func TestTrustedDocumentsRequired(t *testing.T) {
	const (
		inbox     = `query Inbox { messages(limit: 10) { totalCount data { _id } } }`
		later     = `query Later { messageCounts { total } }`
		arbitrary = `{ messages(limit: 1) { totalCount } }`
	)
	sum := func(s string) string { b := sha256.Sum256([]byte(s)); return hex.EncodeToString(b[:]) }
	for _, dialect := range dbtest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			w := newSessionWorld(t, dialect, "--trusted-documents", "require")
			if code, _, stderr := runCLI(t, "", "documents", "add", manifestFile(t, "inbox.json", map[string]string{sum(inbox): inbox})); code != 0 {
				t.Fatalf("documents add exited %d: %s", code, stderr)
			}
			session := "Bearer " + w.token(t, "alice")
			post := func(t *testing.T, auth string, body map[string]any) (map[string]any, []string) {
				t.Helper()
				b, _ := json.Marshal(body)
				r := w.call(t, http.MethodPost, "/graphql", auth, string(b))
				var res struct {
					Data   map[string]any
					Errors []gqlclient.Error
				}
				if err := json.Unmarshal(r.body, &res); err != nil {
					t.Fatalf("answer %d %s: %v", r.status, r.body, err)
				}
				var codes []string
				for _, e := range res.Errors {
					codes = append(codes, e.Code())
				}
				return res.Data, codes
			}
			totalOf := func(data map[string]any) any {
				m, _ := data["messages"].(map[string]any)
				return m["totalCount"]
			}

			// The set is read every 2 s: wait for the first read after documents add.
			deadline := time.Now().Add(10 * time.Second)
			for {
				data, codes := post(t, session, map[string]any{"documentId": "sha256:" + sum(inbox)})
				if len(codes) == 0 {
					if total := totalOf(data); total != float64(2) {
						t.Errorf("alice's session by id: totalCount %v, want her 2", total)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the added document was not answered within 10 s: %v", codes)
				}
				time.Sleep(200 * time.Millisecond)
			}
			if _, codes := post(t, session, map[string]any{"query": inbox}); len(codes) != 0 {
				t.Errorf("session, the trusted text: %v", codes)
			}
			if _, codes := post(t, session, map[string]any{"query": arbitrary}); !slices.Equal(codes, []string{"PERSISTED_QUERY_NOT_IN_LIST"}) {
				t.Errorf("session, an arbitrary document: %v, want PERSISTED_QUERY_NOT_IN_LIST", codes)
			}
			if _, codes := post(t, session, map[string]any{"documentId": "sha256:" + sum(arbitrary)}); !slices.Equal(codes, []string{"PERSISTED_QUERY_NOT_FOUND"}) {
				t.Errorf("session, an unknown id: %v, want PERSISTED_QUERY_NOT_FOUND", codes)
			}
			if data, codes := post(t, "ApiKey "+w.key, map[string]any{"query": arbitrary}); len(codes) != 0 || totalOf(data) != float64(3) {
				t.Errorf("API key, an arbitrary document: %v %v", codes, data)
			}

			t.Run("graphqlWS", func(t *testing.T) {
				conn := dialEvents(t, w.srv.base, session)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				refused, err := conn.Subscribe(ctx, gqlclient.Request{Query: arbitrary}, 1)
				if err != nil {
					t.Fatal(err)
				}
				for range refused.Results() {
				}
				var opErr *gqlclient.OperationError
				if !errors.As(refused.Err(), &opErr) || len(opErr.Errors) != 1 || opErr.Errors[0].Code() != "PERSISTED_QUERY_NOT_IN_LIST" {
					t.Errorf("an arbitrary document over the socket ended with %v", refused.Err())
				}
				byID, err := conn.Subscribe(ctx, gqlclient.Request{DocumentID: "sha256:" + sum(inbox)}, 1)
				if err != nil {
					t.Fatal(err)
				}
				var got []gqlclient.Result
				for r := range byID.Results() {
					got = append(got, r)
				}
				if byID.Err() != nil || len(got) != 1 || len(got[0].Errors) > 0 {
					t.Errorf("by id on the same socket: %v %+v", byID.Err(), got)
				}
			})
			t.Run("sse", func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				header := http.Header{"Authorization": {session}}
				stream := func(req gqlclient.Request) []gqlclient.Result {
					s, err := gqlclient.SubscribeSSE(ctx, e2eClient, w.srv.base+"/graphql", header, req, 4)
					if err != nil {
						t.Fatal(err)
					}
					var got []gqlclient.Result
					for r := range s.Results() {
						got = append(got, r)
					}
					return got
				}
				if got := stream(gqlclient.Request{DocumentID: "sha256:" + sum(inbox)}); len(got) != 1 || len(got[0].Errors) > 0 {
					t.Errorf("by id over SSE: %+v", got)
				}
				if got := stream(gqlclient.Request{Query: arbitrary}); len(got) != 1 || len(got[0].Errors) != 1 || got[0].Errors[0].Code() != "PERSISTED_QUERY_NOT_IN_LIST" {
					t.Errorf("an arbitrary document over SSE: %+v", got)
				}
			})
			t.Run("addedWhileRunning", func(t *testing.T) {
				if code, _, stderr := runCLI(t, "", "documents", "add", manifestFile(t, "later.json", map[string]string{"later-v1": later})); code != 0 {
					t.Fatalf("documents add exited %d: %s", code, stderr)
				}
				start := time.Now()
				for {
					_, codes := post(t, session, map[string]any{"documentId": "later-v1"})
					if len(codes) == 0 {
						t.Logf("answered %s after documents add", time.Since(start).Round(time.Millisecond))
						break
					}
					if time.Since(start) > 10*time.Second {
						t.Fatalf("not answered within 10 s: %v", codes)
					}
					time.Sleep(100 * time.Millisecond)
				}
				if code, _, stderr := runCLI(t, "", "documents", "remove", "later-v1"); code != 0 {
					t.Fatalf("documents remove exited %d: %s", code, stderr)
				}
				for start = time.Now(); ; time.Sleep(100 * time.Millisecond) {
					if _, codes := post(t, session, map[string]any{"documentId": "later-v1"}); slices.Equal(codes, []string{"PERSISTED_QUERY_NOT_FOUND"}) {
						break
					}
					if time.Since(start) > 10*time.Second {
						t.Fatal("still answered 10 s after documents remove")
					}
				}
			})
		})
	}
}
