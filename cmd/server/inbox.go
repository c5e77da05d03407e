package main

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"

	"messages/cmd/server/edge"
	"messages/graph/inbox"
	"messages/models"
	"messages/models/service"
)

// inboxSessionPath is where the live inbox asks for its session token, in development.
const inboxSessionPath = "/inbox/session"

// demoSubscriberIDs are the subscriberIds of the demo's subscribers, as ensureDemo's seed
// names them (user-<seed>-<n>), offered by the live inbox's picker.
var demoSubscriberIDs = func() []string {
	ids := make([]string, 6)
	for i := range ids {
		ids[i] = fmt.Sprintf("user-1-%05d", i)
	}
	return ids
}()

// mountInbox adds the development live inbox: the page at /inbox, its assets, and the
// endpoint it gets its session tokens from, all by a loopback name only, since the
// endpoint issues tokens without a key.
func mountInbox(mux *http.ServeMux, svc *service.Service, demoKey string, errs edge.ErrorWriter) {
	local := edge.LoopbackHost(errs)
	page := local(inbox.Handler(inbox.Options{Endpoint: "/graphql", SessionEndpoint: inboxSessionPath, Subscribers: demoSubscriberIDs}))
	mux.Handle("GET /inbox", page)
	mux.Handle("GET "+inbox.AssetPath, page)
	mux.Handle("POST "+inboxSessionPath, local(inboxSession(svc, demoKey, errs)))
}

// inboxSession serves POST /inbox/session in development: {"subscriberId": "..."} gets
// what POST /v1/inbox/session answers, issued with the demo environment's API key here on
// the server, so the live inbox page holds a subscriber's token and never the key. Without
// a demo key (a database given by DATABASE_URL) there is no such endpoint: 404.
func inboxSession(svc *service.Service, demoKey string, errs edge.ErrorWriter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if demoKey == "" {
			errs.WriteError(w, req, models.Errorf(models.ENOTFOUND,
				"the live inbox's sessions need the demo environment: run in development without DATABASE_URL"))
			return
		}
		// A JSON body only: a form another site posts here is refused unread.
		var body struct {
			SubscriberID string `json:"subscriberId"`
		}
		mt, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
		if mt != "application/json" || json.NewDecoder(http.MaxBytesReader(w, req.Body, 4<<10)).Decode(&body) != nil {
			errs.WriteError(w, req, models.Errorf(models.EMALFORMED, `the body must be application/json: {"subscriberId": "..."}`))
			return
		}
		ctx := req.Context()
		caller, err := svc.Authenticate(ctx, demoKey)
		if err != nil {
			errs.WriteError(w, req, err)
			return
		}
		s, err := svc.CreateSession(models.WithCaller(ctx, caller), body.SubscriberID, nil)
		if err != nil {
			errs.WriteError(w, req, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(s)
	})
}
