package store

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"slices"

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

// activeSealed is the condition of an active API key that is sealed. A key made without
// a secret is stored with no sealed value: NULL, or an empty one where SQLite stored Go's
// nil slice as an empty blob.
const activeSealed = "revoked_at IS NULL AND sealed IS NOT NULL AND LENGTH(sealed) > 0"

// SubscriberHashKey is an active API key of an environment, in clear, with its id: what
// a subscriber hash is checked against.
type SubscriberHashKey struct {
	ID, Key string
}

// SubscriberHashKeys returns the environment's active API keys that can be opened: those
// sealed under a secret of the store's sealer. Keys made without one are left out; the
// ids of sealed keys that no secret opens are returned apart, so that a hash no key
// matches can be told from one that keys the server cannot open might have matched.
func (s *Store) SubscriberHashKeys(ctx context.Context, environmentID string) (keys []SubscriberHashKey, unopenable []string, err error) {
	var rows []models.APIKey
	if err := s.conn(ctx).Where("environment_id = ? AND "+activeSealed, environmentID).
		Order("created_at DESC, id DESC").Find(&rows).Error; err != nil {
		return nil, nil, err
	}
	keys = make([]SubscriberHashKey, 0, len(rows))
	for _, k := range rows {
		if key, err := s.o.sealer.Open(k.ID, k.Sealed); err == nil {
			keys = append(keys, SubscriberHashKey{ID: k.ID, Key: key})
		} else {
			unopenable = append(unopenable, k.ID)
		}
	}
	return keys, unopenable, nil
}

// SealedKeys is how the store's sealer fares with the active sealed API keys of every
// environment: how many there are, and the ids of those no secret of it opens.
type SealedKeys struct {
	Sealed     int
	Unopenable []string
}

// CheckSealedKeys opens every active sealed API key with the store's sealer, as a server
// does at start to find out whether its secrets are the ones the keys were sealed under.
func (s *Store) CheckSealedKeys(ctx context.Context) (SealedKeys, error) {
	var rows []models.APIKey
	if err := s.conn(ctx).Select("id", "sealed").Where(activeSealed).
		Order("id").Find(&rows).Error; err != nil {
		return SealedKeys{}, err
	}
	out := SealedKeys{Sealed: len(rows)}
	for _, k := range rows {
		if _, err := s.o.sealer.Open(k.ID, k.Sealed); err != nil {
			out.Unopenable = append(out.Unopenable, k.ID)
		}
	}
	return out, nil
}

// ForgetUnopenableSeals stores as hashes only the active keys no secret of the store's
// sealer opens, and returns how many: for a secret that is lost, so that the server can
// start again. Those keys still authenticate; subscriber hashes keyed with them cannot
// be checked any more.
func (s *Store) ForgetUnopenableSeals(ctx context.Context) (int, error) {
	check, err := s.CheckSealedKeys(ctx)
	if err != nil || len(check.Unopenable) == 0 {
		return 0, err
	}
	forgotten := 0
	for chunk := range slices.Chunk(check.Unopenable, revokedKeysChunk) {
		res := s.conn(ctx).Model(&models.APIKey{}).Where("id IN ?", chunk).Update("sealed", nil)
		if res.Error != nil {
			return forgotten, res.Error
		}
		forgotten += int(res.RowsAffected)
	}
	return forgotten, nil
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
// keys no secret opens (sealed under a secret no longer given). Without a current
// secret it reseals nothing (keyseal.ErrNoCurrentSecret).
func (s *Store) ResealAPIKeys(ctx context.Context) (resealed, unopened int, err error) {
	if !s.o.sealer.Enabled() {
		return 0, 0, keyseal.ErrNoCurrentSecret
	}
	var keys []models.APIKey
	if err := s.conn(ctx).Where(activeSealed).Find(&keys).Error; err != nil {
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
