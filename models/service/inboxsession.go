package service

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"messages/models"
	"messages/models/session"
)

// InboxSessionRequest is how the platform's inbox clients open a session from a browser,
// with no API key: the environment's public application identifier, the subscriber, and
// the subscriberHash the integrator's backend computed, hex HMAC-SHA256 of the
// subscriberId keyed with one of the environment's API keys.
type InboxSessionRequest struct {
	ApplicationIdentifier string
	SubscriberHash        string
	// Subscriber is the subscriber's id and, for one not yet known, its profile.
	Subscriber models.Subscriber
}

// InboxSession is an opened inbox session: a session token, as CreateSession issues, and
// the subscriber's in-app counts by state at that moment.
type InboxSession struct {
	Session
	Counts models.StateCounts
}

// OpenInboxSession verifies r's subscriberHash against each active API key of the
// environment r names and, when one matches, issues a session token for the subscriber
// as that key would (revoking the key ends it), valid for session.MaxTTL, creating the
// subscriber if the environment does not know it yet. Any mismatch is the same
// unauthorized answer, unless some of the environment's keys are sealed under a secret
// the server is not configured with: then the hash may be right and the server cannot
// tell, which is a fault of its configuration, logged and answered as unavailable.
func (s *Service) OpenInboxSession(ctx context.Context, r InboxSessionRequest) (*InboxSession, error) {
	sub := r.Subscriber.SubscriberID
	if err := checkText("subscriberId", sub); err != nil {
		return nil, err
	}
	if sub == "" {
		return nil, models.Invalid("subscriberId", nil, "subscriber.subscriberId is required")
	}
	if r.ApplicationIdentifier == "" || len(r.ApplicationIdentifier) > 64 {
		return nil, models.Invalid("applicationIdentifier", nil, "applicationIdentifier is required: the environment's, as `apikey create` prints it")
	}
	if s.sessions == nil {
		return nil, models.Errorf(models.EUNAVAILABLE, "subscriber sessions are not configured on this server")
	}
	refused := models.Errorf(models.EUNAUTHORIZED, "subscriberHash does not match: it must be the hex HMAC-SHA256 of the subscriberId keyed with an API key of this application's environment")
	given, err := hex.DecodeString(strings.ToLower(r.SubscriberHash))
	if err != nil || len(given) != sha256.Size {
		return nil, refused
	}
	env, err := s.store.EnvironmentByApplication(ctx, r.ApplicationIdentifier)
	if models.ErrorCode(err) == models.ENOTFOUND {
		return nil, models.Errorf(models.EUNAUTHORIZED, "applicationIdentifier is not known to this server")
	}
	if err != nil {
		return nil, err
	}
	keys, unopenable, err := s.store.SubscriberHashKeys(ctx, env.ID)
	if err != nil {
		return nil, err
	}
	var keyID string
	for _, k := range keys {
		mac := hmac.New(sha256.New, []byte(k.Key))
		mac.Write([]byte(sub))
		if hmac.Equal(mac.Sum(nil), given) {
			keyID = k.ID
			break
		}
	}
	if keyID == "" && len(unopenable) > 0 {
		s.logger.ErrorContext(ctx, "subscriberHash cannot be checked: API keys of the environment are sealed under a secret this server is not configured with (API_KEY_SECRET, API_KEY_SECRET_PREVIOUS)",
			"environmentId", env.ID, "unopenable", len(unopenable), "keyIds", strings.Join(unopenable[:min(len(unopenable), 10)], ","))
		return nil, models.Errorf(models.EUNAVAILABLE, "subscriberHash cannot be checked: this server is not configured with the secret that this application's API keys are sealed under; its operator must correct the configuration (the server's log says how)")
	}
	if keyID == "" {
		return nil, refused
	}
	if err := s.store.EnsureSubscriber(ctx, env, r.Subscriber); err != nil {
		return nil, err
	}
	caller := models.Caller{KeyID: keyID, EnvironmentID: env.ID, OrganizationID: env.OrganizationID}
	// The inbox client opens its session once, when it starts, and never renews it: it is
	// issued for the longest a session lasts, so a page left open for a day keeps working.
	token, expiresAt, err := s.sessions.Issue(caller, sub, session.MaxTTL)
	if err != nil {
		return nil, err
	}
	inApp := models.ChannelInApp
	counts, err := s.store.CountStates(ctx, env.ID, &sub, &inApp)
	if err != nil {
		return nil, err
	}
	return &InboxSession{Session: Session{Token: token, SubscriberID: sub, ExpiresAt: models.NewTime(expiresAt)}, Counts: counts}, nil
}
