package store

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"

	"messages/models"
	"messages/models/keyseal"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// ApplicationIdentifier returns the environment's public application identifier, giving
// it one the first time: 12 characters, 72 random bits. Instances giving one out at once
// agree on the first written.
func (s *Store) ApplicationIdentifier(ctx context.Context, environmentID string) (string, error) {
	env, err := s.Environment(ctx, environmentID)
	if err != nil {
		return "", err
	}
	if env.ApplicationIdentifier != nil {
		return *env.ApplicationIdentifier, nil
	}
	var b [9]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
	id := base64.RawURLEncoding.EncodeToString(b[:])
	if err := s.conn(ctx).Model(&models.Environment{}).
		Where("id = ? AND application_identifier IS NULL", environmentID).
		Update("application_identifier", id).Error; err != nil {
		return "", err
	}
	if env, err = s.Environment(ctx, environmentID); err != nil {
		return "", err
	}
	if env.ApplicationIdentifier == nil {
		return "", errors.New("the environment's application identifier was not kept")
	}
	return *env.ApplicationIdentifier, nil
}

// EnvironmentByApplication returns the environment an application identifier names, or
// not found.
func (s *Store) EnvironmentByApplication(ctx context.Context, applicationIdentifier string) (*models.Environment, error) {
	var envs []models.Environment
	if err := s.conn(ctx).Where("application_identifier = ?", applicationIdentifier).Limit(1).Find(&envs).Error; err != nil {
		return nil, err
	}
	if len(envs) == 0 {
		return nil, errNotFound("application")
	}
	return &envs[0], nil
}

// SubscriberHashKey is an active API key of an environment, in clear, with its id: what
// a subscriber hash is checked against.
type SubscriberHashKey struct {
	ID, Key string
}

// SubscriberHashKeys returns the environment's active API keys that can be opened: those
// sealed under a secret of the store's sealer. Keys made without one are left out.
func (s *Store) SubscriberHashKeys(ctx context.Context, environmentID string) ([]SubscriberHashKey, error) {
	var keys []models.APIKey
	if err := s.conn(ctx).Where("environment_id = ? AND revoked_at IS NULL AND sealed IS NOT NULL", environmentID).
		Order("created_at DESC, id DESC").Find(&keys).Error; err != nil {
		return nil, err
	}
	out := make([]SubscriberHashKey, 0, len(keys))
	for _, k := range keys {
		if key, err := s.o.sealer.Open(k.ID, k.Sealed); err == nil {
			out = append(out, SubscriberHashKey{ID: k.ID, Key: key})
		}
	}
	return out, nil
}

// SealAPIKey stores key, in clear, sealed for its row: for a key made before a secret was
// set whose clear value the operator still has (the development server's demo key). The
// key must match the row's hash.
func (s *Store) SealAPIKey(ctx context.Context, key string) error {
	if !s.o.sealer.Enabled() {
		return errors.New("no API key secret is set to seal with")
	}
	var rec models.APIKey
	err := s.conn(ctx).Where("hash = ? AND revoked_at IS NULL", HashAPIKey(key)).Take(&rec).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return errNotFound("API key")
	}
	if err != nil || s.o.sealer.Current(rec.Sealed) {
		return err
	}
	return s.conn(ctx).Model(&rec).Update("sealed", s.o.sealer.Seal(rec.ID, key)).Error
}

// ResealAPIKeys seals again, under the sealer's first secret, every active key sealed
// under another of its secrets, and returns how many it resealed and how many sealed
// keys no secret opens (sealed under a secret no longer given).
func (s *Store) ResealAPIKeys(ctx context.Context) (resealed, unopened int, err error) {
	var keys []models.APIKey
	if err := s.conn(ctx).Where("revoked_at IS NULL AND sealed IS NOT NULL").Find(&keys).Error; err != nil {
		return 0, 0, err
	}
	for _, k := range keys {
		if s.o.sealer.Current(k.Sealed) {
			continue
		}
		key, err := s.o.sealer.Open(k.ID, k.Sealed)
		if errors.Is(err, keyseal.ErrCannotOpen) {
			unopened++
			continue
		}
		if err := s.conn(ctx).Model(&k).Update("sealed", s.o.sealer.Seal(k.ID, key)).Error; err != nil {
			return resealed, unopened, err
		}
		resealed++
	}
	return resealed, unopened, nil
}

// EnsureSubscriber creates the subscriber p describes (its SubscriberID and profile) in
// the environment unless one with that subscriberId exists, which is kept as it is, as
// the platform's inbox session does for a subscriber it has not seen.
func (s *Store) EnsureSubscriber(ctx context.Context, env *models.Environment, p models.Subscriber) error {
	now := models.NewTime(s.Now())
	p.ID, p.EnvironmentID, p.OrganizationID = models.NewID(s.Now()), env.ID, env.OrganizationID
	p.CreatedAt, p.UpdatedAt, p.Version, p.Deleted = now, now, 0, false
	return s.conn(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&p).Error
}
