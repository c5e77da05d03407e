package service

import (
	"context"
	"time"
	"unicode/utf8"

	"messages/models"
	"messages/models/session"
)

// Session is a session token and what it grants: the answer of POST /v1/inbox/session.
type Session struct {
	Token        string      `json:"token"`
	SubscriberID string      `json:"subscriberId"`
	ExpiresAt    models.Time `json:"expiresAt"`
}

// CreateSession exchanges the caller's API key for a token scoped to one subscriber of
// its environment, valid for expiresIn seconds (session.DefaultTTL when nil). A session
// cannot create sessions.
func (s *Service) CreateSession(ctx context.Context, subscriberID string, expiresIn *int) (*Session, error) {
	caller, err := models.CallerFrom(ctx)
	if err != nil {
		return nil, err
	}
	if caller.Scoped() {
		return nil, models.Errorf(models.EFORBIDDEN, "a session token cannot create sessions: use the environment's API key, from your backend")
	}
	if err := checkText("subscriberId", subscriberID); err != nil {
		return nil, err
	}
	if subscriberID == "" || utf8.RuneCountInString(subscriberID) > 255 {
		return nil, models.Invalid("subscriberId", subscriberID, "subscriberId must be 1 to 255 characters")
	}
	ttl := session.DefaultTTL
	if expiresIn != nil {
		ttl = time.Duration(*expiresIn) * time.Second
		if ttl < session.MinTTL || ttl > session.MaxTTL {
			return nil, models.Invalid("expiresIn", *expiresIn, "expiresIn must be an integer number of seconds from 60 to 86400")
		}
	}
	if s.sessions == nil {
		return nil, models.Errorf(models.EUNAVAILABLE, "subscriber sessions are not configured on this server")
	}
	token, expiresAt, err := s.sessions.Issue(caller, subscriberID, ttl)
	if err != nil {
		return nil, err
	}
	return &Session{Token: token, SubscriberID: subscriberID, ExpiresAt: models.NewTime(expiresAt)}, nil
}

// AuthenticateSession resolves a session token to its caller: verified, unexpired, and
// issued by an API key that is still valid.
func (s *Service) AuthenticateSession(ctx context.Context, token string) (models.Caller, error) {
	if s.sessions == nil {
		return models.Caller{}, models.Errorf(models.EUNAUTHORIZED, "session tokens are not accepted by this server")
	}
	claims, err := s.sessions.Verify(token)
	if err != nil {
		return models.Caller{}, err
	}
	caller, err := s.store.SessionCaller(ctx, claims.EnvironmentID, claims.KeyID, claims.Subject)
	if err != nil {
		return models.Caller{}, err
	}
	if claims.ExpiresAt != nil {
		caller.ExpiresAt = claims.ExpiresAt.Time
	}
	return caller, nil
}
