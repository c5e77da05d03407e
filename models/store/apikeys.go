package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"messages/models"
	"messages/models/keyseal"
	"slices"

	"gorm.io/gorm"
)

// HashAPIKey returns the stored form of a key.
func HashAPIKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// newAPIKey returns 256 random bits as 64 hex digits.
func newAPIKey() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// EnsureEnvironment creates the environment if it does not exist yet and returns it.
// organizationID is used only on creation; empty means a new organization id.
func (s *Store) EnsureEnvironment(ctx context.Context, id, organizationID, name string) (*models.Environment, error) {
	if !models.IsID(id) {
		return nil, models.Invalid("environmentId", id, "environment id must be 24 lowercase hex digits")
	}
	if organizationID == "" {
		organizationID = models.NewID(s.Now())
	} else if !models.IsID(organizationID) {
		return nil, models.Invalid("organizationId", organizationID, "organization id must be 24 lowercase hex digits")
	}
	env := models.Environment{ID: id, OrganizationID: organizationID, Name: name, CreatedAt: s.Now().UTC()}
	db := s.conn(ctx)
	err := db.Where("id = ?", id).Attrs(env).FirstOrCreate(&env).Error
	if err != nil {
		return nil, err
	}
	return &env, nil
}

// Environment returns an environment, or a not-found error.
func (s *Store) Environment(ctx context.Context, id string) (*models.Environment, error) {
	if !models.IsID(id) {
		return nil, errNotFound("environment")
	}
	var envs []models.Environment
	if err := s.conn(ctx).Where("id = ?", id).Limit(1).Find(&envs).Error; err != nil {
		return nil, err
	}
	if len(envs) == 0 {
		return nil, errNotFound("environment")
	}
	return &envs[0], nil
}

// CreateAPIKey mints a key for an existing environment and returns it in clear, the only
// time it is ever seen: only its hash is stored, and its sealed form when the store's
// sealer has a current secret. A sealer with only a previous secret refuses
// (keyseal.ErrNoCurrentSecret): the key would be sealed under a secret being retired.
func (s *Store) CreateAPIKey(ctx context.Context, environmentID, name string) (string, *models.APIKey, error) {
	if s.o.sealer.Opens() && !s.o.sealer.Enabled() {
		return "", nil, keyseal.ErrNoCurrentSecret
	}
	var env models.Environment
	err := s.conn(ctx).Where("id = ?", environmentID).Take(&env).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", nil, errNotFound("environment")
	}
	if err != nil {
		return "", nil, err
	}
	key, err := newAPIKey()
	if err != nil {
		return "", nil, err
	}
	rec := &models.APIKey{
		ID:            models.NewID(s.Now()),
		EnvironmentID: env.ID,
		Name:          name,
		Hash:          HashAPIKey(key),
		Hint:          key[len(key)-4:],
		CreatedAt:     s.Now().UTC(),
	}
	rec.Sealed = s.o.sealer.Seal(rec.ID, key)
	db := s.conn(ctx)
	if rec.Sealed == nil {
		db = db.Omit("Sealed") // NULL: SQLite's driver would store nil as an empty blob
	}
	if err := db.Create(rec).Error; err != nil {
		return "", nil, err
	}
	return key, rec, nil
}

// ListAPIKeys returns the keys of one environment, or of all when environmentID is empty,
// oldest first.
func (s *Store) ListAPIKeys(ctx context.Context, environmentID string) ([]models.APIKey, error) {
	var keys []models.APIKey
	q := s.conn(ctx).Order("created_at, id")
	if environmentID != "" {
		q = q.Where("environment_id = ?", environmentID)
	}
	return keys, q.Find(&keys).Error
}

// RevokeAPIKey stops a key from authenticating: at once through this store, within
// AuthTTL through other instances. Revoking a revoked key is a no-op.
func (s *Store) RevokeAPIKey(ctx context.Context, id string) error {
	defer s.auth.forgetKey(id)
	res := s.conn(ctx).Model(&models.APIKey{}).Where("id = ? AND revoked_at IS NULL", id).
		Update("revoked_at", s.Now().UTC())
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		var n int64
		if err := s.conn(ctx).Model(&models.APIKey{}).Where("id = ?", id).Count(&n).Error; err != nil {
			return err
		}
		if n == 0 {
			return errNotFound("API key")
		}
	}
	return nil
}

// Authenticate returns the caller a key belongs to, or an unauthorized error for an
// unknown or revoked key. A key checked less than AuthTTL ago is not looked up again.
func (s *Store) Authenticate(ctx context.Context, key string) (models.Caller, error) {
	hash := HashAPIKey(key)
	if c, ok := s.auth.get(authKey{hash: hash}, s.Now(), s.o.authTTL); ok {
		return c, nil
	}
	var row struct {
		ID             string
		EnvironmentID  string
		OrganizationID string
	}
	err := s.conn(ctx).Table("api_keys").
		Select("api_keys.id, api_keys.environment_id, environments.organization_id").
		Joins("JOIN environments ON environments.id = api_keys.environment_id").
		Where("api_keys.hash = ? AND api_keys.revoked_at IS NULL", hash).
		Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return models.Caller{}, models.Errorf(models.EUNAUTHORIZED, "API key is not valid")
	}
	if err != nil {
		return models.Caller{}, err
	}
	c := models.Caller{KeyID: row.ID, EnvironmentID: row.EnvironmentID, OrganizationID: row.OrganizationID}
	s.auth.put(authKey{hash: hash}, c, s.Now())
	return c, nil
}

// SessionCaller returns the caller of a subscriber session issued by the API key keyID of
// environmentID, or an unauthorized error when that key was revoked (or never existed):
// revoking a key ends the sessions it issued.
func (s *Store) SessionCaller(ctx context.Context, environmentID, keyID, subscriberID string) (models.Caller, error) {
	k := authKey{environmentID: environmentID, keyID: keyID}
	if c, ok := s.auth.get(k, s.Now(), s.o.authTTL); ok {
		c.SubscriberID = subscriberID
		return c, nil
	}
	var organizationID string
	err := s.conn(ctx).Table("api_keys").
		Select("environments.organization_id").
		Joins("JOIN environments ON environments.id = api_keys.environment_id").
		Where("api_keys.environment_id = ? AND api_keys.id = ? AND api_keys.revoked_at IS NULL", environmentID, keyID).
		Take(&organizationID).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return models.Caller{}, models.Errorf(models.EUNAUTHORIZED, "session token is no longer valid: the API key that issued it was revoked")
	}
	if err != nil {
		return models.Caller{}, err
	}
	c := models.Caller{KeyID: keyID, EnvironmentID: environmentID, OrganizationID: organizationID}
	s.auth.put(k, c, s.Now())
	c.SubscriberID = subscriberID
	return c, nil
}

// revokedKeysChunk bounds the ids one statement of RevokedKeys asks about.
const revokedKeysChunk = 500

// RevokedKeys returns those of the API key ids that are no longer valid (revoked, or
// never existed), asking the primary, not the authentication cache: the watch over open
// streams calls it once a second for every key behind one, in one statement per 500.
func (s *Store) RevokedKeys(ctx context.Context, ids []string) ([]string, error) {
	var revoked []string
	for chunk := range slices.Chunk(ids, revokedKeysChunk) {
		var active []string
		err := s.conn(ctx).Table("api_keys").Where("id IN ? AND revoked_at IS NULL", chunk).Pluck("id", &active).Error
		if err != nil {
			return nil, err
		}
		valid := make(map[string]bool, len(active))
		for _, id := range active {
			valid[id] = true
		}
		for _, id := range chunk {
			if !valid[id] {
				revoked = append(revoked, id)
			}
		}
	}
	return revoked, nil
}
