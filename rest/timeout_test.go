package rest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"messages/graph"
	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
	"messages/rest"
)

// A database that stops answering (here: a row or the only connection held by another
// transaction) fails the request at the deadline with 503, Retry-After and an errorId
// that leads to the cause in the log, and leaves the message as it was.
func TestTimeoutUnavailable(t *testing.T) {
	t.Parallel()
	const deadline = 300 * time.Millisecond
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "a")
		msg := tn.Message(t, tn.Subscriber(t, "alice"), tn.Template(t, "welcome"), nil)
		a := newTimeoutAPI(t, s, deadline)
		before := stored(t, s, msg.ID)

		tx := s.DB().Begin()
		if tx.Error != nil {
			t.Fatal(tx.Error)
		}
		if err := tx.Exec("UPDATE messages SET status = status WHERE id = ?", msg.ID).Error; err != nil {
			t.Fatal(err)
		}
		uri := actionURI("alice", msg.ID, "primary")
		start := time.Now()
		res := a.post(t, tn.Key, uri, `{"status":"done","payload":{"n":1}}`)
		took := time.Since(start)
		if err := tx.Rollback().Error; err != nil {
			t.Fatal(err)
		}

		body := unavailable(t, a, res, uri)
		// Not before the deadline; the client's own deadline catches a hang.
		if took < deadline {
			t.Errorf("answered after %s, before the %s deadline", took, deadline)
		}
		for _, leak := range []string{"deadline", "context", "sql", "lock", "select", "update"} {
			if strings.Contains(strings.ToLower(string(res.body)), leak) {
				t.Errorf("503 body leaks %q: %s", leak, res.body)
			}
		}
		if !strings.Contains(a.log.String(), "errorId="+body["errorId"].(string)) {
			t.Errorf("the log has no line with errorId=%s:\n%s", body["errorId"], a.log.String())
		}
		if diff := cmp.Diff(before, stored(t, s, msg.ID)); diff != "" {
			t.Errorf("a mark that timed out changed the message (-before +after):\n%s", diff)
		}
		if res := a.post(t, tn.Key, uri, `{"status":"done"}`); res.status != http.StatusCreated {
			t.Errorf("once the lock is gone the mark answers %d, want 201: %s", res.status, res.body)
		}
	})
}

// On SQLite the held connection stops authentication itself, so /graphql answers with
// its errors array and SERVICE_UNAVAILABLE.
func TestTimeoutUnavailableGraphQL(t *testing.T) {
	t.Parallel()
	s := dbtest.Open(t, store.DialectSQLite)
	tn := dbtest.NewTenant(t, s, "a")
	a := newTimeoutAPI(t, s, 200*time.Millisecond)
	tx := s.DB().Begin()
	if tx.Error != nil {
		t.Fatal(tx.Error)
	}
	res := a.graphql(t, tn.Key, "{ messages { totalCount } }", nil)
	if err := tx.Rollback().Error; err != nil {
		t.Fatal(err)
	}
	if res.status != http.StatusServiceUnavailable || res.header.Get("Retry-After") != "2" {
		t.Fatalf("status %d, Retry-After %q; want 503 and 2: %s", res.status, res.header.Get("Retry-After"), res.body)
	}
	var body struct {
		Errors []struct {
			Message    string            `json:"message"`
			Extensions map[string]string `json:"extensions"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(res.body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Errors) != 1 || body.Errors[0].Extensions["code"] != "SERVICE_UNAVAILABLE" || body.Errors[0].Message != models.UnavailableMessage {
		t.Errorf("errors = %s, want one SERVICE_UNAVAILABLE saying %q", res.body, models.UnavailableMessage)
	}
}

// newTimeoutAPI is newAPI's routes with a request deadline of d.
func newTimeoutAPI(t testing.TB, s *store.Store, d time.Duration) *api {
	t.Helper()
	a := newChainAPI(t, s, rest.ChainOptions{Timeout: d, GraphQL: graph.HandlerOptions{Limits: graph.DefaultLimits}})
	a.srv.Client().Timeout = d + 10*time.Second
	return a
}

// unavailable checks a 503: Retry-After, the documented error body with the safe message
// and an errorId, and returns the body decoded.
func unavailable(t testing.TB, a *api, res response, uri string) map[string]any {
	t.Helper()
	if res.status != http.StatusServiceUnavailable {
		t.Fatalf("status = %d, want 503; body %s", res.status, res.body)
	}
	if got := res.header.Get("Retry-After"); got != "2" {
		t.Errorf("Retry-After = %q, want 2", got)
	}
	body := decode(t, res.body)
	id, _ := body["errorId"].(string)
	if !models.IsID(id) {
		t.Fatalf("errorId = %v, want an id: %s", body["errorId"], res.body)
	}
	want := map[string]any{
		"statusCode": float64(http.StatusServiceUnavailable),
		"timestamp":  clockText,
		"path":       uri,
		"message":    models.UnavailableMessage,
		"error":      "Service Unavailable",
		"errorId":    id,
	}
	if diff := cmp.Diff(want, body); diff != "" {
		t.Errorf("503 body (-want +got):\n%s", diff)
	}
	return body
}

// stored reads a message straight from the database, bypassing the API.
func stored(t testing.TB, s *store.Store, id string) models.Message {
	t.Helper()
	var m models.Message
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.DB().WithContext(ctx).Where("id = ?", id).Take(&m).Error; err != nil {
		t.Fatal(err)
	}
	// Where the mark is kept does not matter; AfterFind has folded it into CTA.
	m.ActionStatus, m.ActionResultType, m.ActionResultPayload = "", "", nil
	return m
}
