package service_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"strings"
	"testing"
	"time"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/keyseal"
	"messages/models/service"
	"messages/models/session"
	"messages/models/store"
)

func subscriberHash(key, subscriberID string) string {
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte(subscriberID))
	return hex.EncodeToString(mac.Sum(nil))
}

// An inbox session opens with the hex HMAC of the subscriberId keyed with an active API
// key of the application's environment, and with nothing else: a wrong hash, another
// subscriber's, another environment's key, a revoked key, a key stored as a hash only,
// or an unknown application is refused alike, and no token is issued.
func TestOpenInboxSession(t *testing.T) {
	sealer, err := keyseal.New(bytes.Repeat([]byte("s"), 32))
	if err != nil {
		t.Fatal(err)
	}
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		signer, err := session.NewSigner(time.Now, session.RandomSecret())
		if err != nil {
			t.Fatal(err)
		}
		a, b := dbtest.NewTenant(t, s, "a"), dbtest.NewTenant(t, s, "b")
		// A key made while no secret was set: stored as a hash only.
		hashOnly := a.Key
		if err := s.DB().Exec("UPDATE api_keys SET sealed = NULL WHERE environment_id = ?", a.Env.ID).Error; err != nil {
			t.Fatal(err)
		}
		sealedStore := s
		keyA, _, err := sealedStore.CreateAPIKey(ctx, a.Env.ID, "inbox")
		if err != nil {
			t.Fatal(err)
		}
		keyB, _, err := sealedStore.CreateAPIKey(ctx, b.Env.ID, "inbox")
		if err != nil {
			t.Fatal(err)
		}
		revoked, revokedRec, err := sealedStore.CreateAPIKey(ctx, a.Env.ID, "revoked")
		if err != nil {
			t.Fatal(err)
		}
		if err := sealedStore.RevokeAPIKey(ctx, revokedRec.ID); err != nil {
			t.Fatal(err)
		}
		appA, err := s.ApplicationIdentifier(ctx, a.Env.ID)
		if err != nil {
			t.Fatal(err)
		}
		svc := service.New(service.Options{Store: sealedStore, Sessions: signer})
		open := func(app, hash, sub string) (*service.InboxSession, error) {
			return svc.OpenInboxSession(ctx, service.InboxSessionRequest{ApplicationIdentifier: app, SubscriberHash: hash,
				Subscriber: models.Subscriber{SubscriberID: sub, FirstName: "Ada"}})
		}

		for _, tt := range []struct{ name, app, hash, sub string }{
			{"wrongHash", appA, subscriberHash(keyA, "someone-else"), "ada"},
			{"otherEnvironmentsKey", appA, subscriberHash(keyB, "ada"), "ada"},
			{"revokedKey", appA, subscriberHash(revoked, "ada"), "ada"},
			{"hashOnlyKey", appA, subscriberHash(hashOnly, "ada"), "ada"},
			{"unknownApplication", "nosuchapp123", subscriberHash(keyA, "ada"), "ada"},
			{"notHex", appA, "zz", "ada"},
		} {
			if got, err := open(tt.app, tt.hash, tt.sub); models.ErrorCode(err) != models.EUNAUTHORIZED || got != nil {
				t.Errorf("%s: %v, %v; want unauthorized and no session", tt.name, got, err)
			}
		}

		got, err := open(appA, subscriberHash(keyA, "ada"), "ada")
		if err != nil {
			t.Fatal(err)
		}
		caller, err := svc.AuthenticateSession(ctx, got.Token)
		if err != nil || caller.EnvironmentID != a.Env.ID || caller.SubscriberID != "ada" {
			t.Fatalf("the token authenticates as %+v (%v), want ada of environment a", caller, err)
		}
		ids, err := s.SubscriberIDs(ctx, a.Env.ID, []string{"ada"})
		if err != nil || ids["ada"] == "" {
			t.Fatalf("the subscriber was not created: %v %v", ids, err)
		}
		if _, err := open(appA, subscriberHash(keyA, "ada"), "ada"); err != nil {
			t.Fatalf("a second session of a known subscriber: %v", err)
		}
		if n := got.Counts.Count(models.Unread()); n != 0 {
			t.Errorf("a new subscriber has %d unread", n)
		}

		// A key sealed under a secret this service's store does not have: a hash keyed
		// with it may be right, and the answer says the server cannot tell, logged.
		other, err := keyseal.New(bytes.Repeat([]byte("o"), 32))
		if err != nil {
			t.Fatal(err)
		}
		foreign, rec, err := s.CreateAPIKey(ctx, a.Env.ID, "sealed elsewhere")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.DB().Exec("UPDATE api_keys SET sealed = ? WHERE id = ?", other.Seal(rec.ID, foreign), rec.ID).Error; err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		logged := service.New(service.Options{Store: sealedStore, Sessions: signer, Logger: slog.New(slog.NewJSONHandler(&log, nil))})
		got, err = logged.OpenInboxSession(ctx, service.InboxSessionRequest{ApplicationIdentifier: appA, SubscriberHash: subscriberHash(foreign, "ada"),
			Subscriber: models.Subscriber{SubscriberID: "ada"}})
		if models.ErrorCode(err) != models.EUNAVAILABLE || got != nil || strings.Contains(err.Error(), foreign) {
			t.Errorf("a key no secret opens: %v, %v; want unavailable and no session", got, err)
		}
		if !strings.Contains(log.String(), `"level":"ERROR","msg":"subscriberHash cannot be checked`) || !strings.Contains(log.String(), rec.ID) {
			t.Errorf("the refusal is not logged with the key's id:\n%s", log.String())
		}
		if _, err := logged.OpenInboxSession(ctx, service.InboxSessionRequest{ApplicationIdentifier: appA, SubscriberHash: subscriberHash(keyA, "ada"),
			Subscriber: models.Subscriber{SubscriberID: "ada"}}); err != nil {
			t.Errorf("a key the secret opens, beside one it does not: %v", err)
		}
	}, store.WithKeySealer(sealer))
}
