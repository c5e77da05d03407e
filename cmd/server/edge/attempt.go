package edge

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"messages/models"
)

// attempt is one request's use of its key.
type attempt struct {
	i      *Idempotency
	w      http.ResponseWriter // where the key is echoed; nil off HTTP
	keys   []string
	caller models.Caller

	running bool // the key is marked running in this process
	rk      runningKey
	rec     *models.IdempotencyKey // the claim, once begun
	stored  *models.IdempotencyKey // the record already stored under the key, if any
	refusal error                  // why the request may not run
	kept    bool                   // the request ran, so its response is stored
}

var _ Claim = (*attempt)(nil)

// newAttempt starts the attempt of r, whose caller authentication has found.
func (i *Idempotency) newAttempt(w http.ResponseWriter, r *http.Request, keys []string) (*attempt, error) {
	caller, err := models.CallerFrom(r.Context())
	if err != nil {
		return nil, err
	}
	return &attempt{i: i, w: w, keys: keys, caller: caller, kept: true}, nil
}

// begin validates the key, echoes it, and marks it running in this process: a second
// request with the same key meanwhile is told to retry, without asking the database.
func (a *attempt) begin(parts []string) error {
	key, err := idempotencyKey(a.keys)
	if err != nil {
		return err
	}
	if a.w != nil {
		a.w.Header().Set(IdempotencyKeyHeader, key)
	}
	if !a.running {
		// Not again when the transaction runs again (a deferring mount claims in it).
		rk := runningKey{a.caller.EnvironmentID, key}
		if !a.i.start(rk) {
			return models.IdempotencyKeyBusy(key)
		}
		a.running, a.rk = true, rk
	}
	now := a.i.now()
	a.rec = &models.IdempotencyKey{EnvironmentID: a.caller.EnvironmentID, Key: key, Fingerprint: fingerprint(parts...),
		CreatedAt: now, ExpiresAt: now.Add(a.i.opts.TTL)}
	return nil
}

// claim takes the key in ctx's transaction and reports whether the request may run:
// not when another request holds or has stored it.
func (a *attempt) claim(ctx context.Context) bool {
	var err error
	if a.stored, err = a.i.store.ClaimIdempotencyKey(ctx, a.rec, a.i.opts.LockWait); err != nil {
		a.refusal = err
		return false
	}
	return a.stored == nil
}

// Claim begins and claims in one step, for a deferring mount's handler.
func (a *attempt) Claim(ctx context.Context, parts []string) bool {
	if err := a.begin(parts); err != nil {
		a.refusal = err
		return false
	}
	return a.claim(ctx)
}

// Ran records whether the claimed request ran.
func (a *attempt) Ran(ran bool) { a.kept = ran }

// errNotKept rolls back a request whose response is not stored.
var errNotKept = errors.New("response not kept")

// serve runs the handler in a transaction that, when the request claimed the key and
// ran, also stores its response; then answers: the response, a replay of the stored
// one, or a refusal. The store runs the transaction again when it loses a conflict with
// another one (the claim or the change committed first elsewhere): each run starts from
// a fresh response and claim, and only the run that commits is answered, so the key's
// request executes once and its replays are the bytes that committed.
func (a *attempt) serve(w http.ResponseWriter, r *http.Request, errs ErrorWriter, handle func(res http.ResponseWriter, ctx context.Context)) {
	var res *responseBuffer
	err := a.i.store.RetryTransaction(r.Context(), func(ctx context.Context) error {
		res = &responseBuffer{header: http.Header{}}
		a.stored, a.refusal, a.kept = nil, nil, true
		handle(res, ctx)
		switch {
		case a.refusal != nil:
			return a.refusal
		case a.rec == nil || a.stored != nil || !a.kept || !ran(res.status()):
			// Not claimed, already stored, or not run: nothing to keep.
			return errNotKept
		}
		a.rec.Status, a.rec.ContentType, a.rec.Body = res.status(), res.header.Get("Content-Type"), res.body.Bytes()
		return a.i.store.CompleteIdempotencyKey(ctx, a.rec)
	})
	if a.running {
		a.i.finish(a.rk)
	}
	switch {
	case a.refusal != nil:
		refuse(w, r, errs, a.refusal)
	case a.stored != nil:
		a.i.replay(w, r, a.rec, a.stored, errs)
	case err == nil || errors.Is(err, errNotKept):
		res.writeTo(w)
	default:
		refuse(w, r, errs, err)
	}
}

// replay answers with the stored response when the request is the one stored, and with
// 422 when the key was used for another request.
func (i *Idempotency) replay(w http.ResponseWriter, r *http.Request, rec, stored *models.IdempotencyKey, errs ErrorWriter) {
	if err := replayable(rec, stored); err != nil {
		refuse(w, r, errs, err)
		return
	}
	if stored.ContentType != "" {
		w.Header().Set("Content-Type", stored.ContentType)
	}
	i.replays.Add(1)
	w.Header().Set(IdempotencyReplayHeader, "true")
	w.WriteHeader(stored.Status)
	_, _ = w.Write(stored.Body)
}

// replayable says why the stored record may not answer the request rec: it holds no
// response yet (the key is busy), or another request's (the key was reused).
func replayable(rec, stored *models.IdempotencyKey) error {
	if stored.Status == 0 {
		// A committed record always holds a response; one without is treated as running.
		return models.IdempotencyKeyBusy(rec.Key)
	}
	if stored.Fingerprint != rec.Fingerprint {
		return models.Invalid(IdempotencyKeyHeader, rec.Key,
			fmt.Sprintf("Idempotency-Key %q was already used for a different request; send a new key for a new request", rec.Key))
	}
	return nil
}

// run is serve for a door that is not an HTTP request (a WebSocket's operation): serve
// runs in a transaction with the key's claim and returns the response's JSON body, kept
// with the claim when the operation ran; the result is that body, or the body stored by
// the first run of the key (replayed), or a refusal.
func (i *Idempotency) run(ctx context.Context, key string, serve func(ctx context.Context, c Claim) []byte) (body []byte, replayed bool, err error) {
	caller, err := models.CallerFrom(ctx)
	if err != nil {
		return nil, false, err
	}
	a := &attempt{i: i, keys: []string{key}, caller: caller, kept: true}
	err = i.store.RetryTransaction(ctx, func(ctx context.Context) error {
		a.stored, a.refusal, a.kept = nil, nil, true
		body = serve(ctx, a)
		switch {
		case a.refusal != nil:
			return a.refusal
		case a.rec == nil || a.stored != nil || !a.kept:
			return errNotKept
		}
		a.rec.Status, a.rec.ContentType, a.rec.Body = http.StatusOK, "application/json", body
		return i.store.CompleteIdempotencyKey(ctx, a.rec)
	})
	if a.running {
		i.finish(a.rk)
	}
	switch {
	case a.refusal != nil:
		return nil, false, a.refusal
	case a.stored != nil:
		if err := replayable(a.rec, a.stored); err != nil {
			return nil, false, err
		}
		i.replays.Add(1)
		return a.stored.Body, true, nil
	case err == nil || errors.Is(err, errNotKept):
		return body, false, nil
	default:
		return nil, false, err
	}
}

// refuse writes an error; a conflict (the key is in use) tells the client when to retry.
func refuse(w http.ResponseWriter, r *http.Request, errs ErrorWriter, err error) {
	if models.ErrorCode(err) == models.ECONFLICT {
		w.Header().Set("Retry-After", "1")
	}
	errs.WriteError(w, r, err)
}
