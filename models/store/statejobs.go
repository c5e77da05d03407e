package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"messages/models"
)

// A change of all a subscriber's messages can outlast its request: at 100,000 messages
// the batches take longer than a request may (docs/reliability.md has the figures). So
// such a change is kept in state_jobs (migration 11) while it runs. Each batch is one
// transaction that renews the job's lease, changes up to stateBatch messages and adds
// them to the job's count; the last batch deletes the job in the same transaction. An
// instance that stops, or loses the database, stops renewing; once the lease has passed
// any instance claims the job and carries it on from where the committed batches left
// it (a batch writes only messages not yet in the state, so nothing is done twice). The
// triggers keep the counters and changed_at the events, batch by batch, as for any write.

// StateJob is a bulk state change in progress, a row of state_jobs.
type StateJob struct {
	ID            string
	EnvironmentID string
	// SubscriberID is the external id, as the change named it.
	SubscriberID string
	// Spec is the change and the messages it applies to (stateJobSpec, as JSON).
	Spec string
	// Changed is how many messages the committed batches changed.
	Changed int64
	// Attempts is how many times an instance has taken the job on.
	Attempts int
	// Owner is the instance working on the job while LeaseUntil (the database's clock)
	// is ahead.
	Owner      string
	LeaseUntil models.Stamp `gorm:"->"`
	CreatedAt  models.Stamp `gorm:"->"`
}

// TableName is state_jobs.
func (StateJob) TableName() string { return "state_jobs" }

// stateJobSpec is what a job changes, kept as its Spec.
type stateJobSpec struct {
	Channel     *models.ChannelType `json:"channel,omitempty"`
	Filter      models.StateFilter  `json:"filter"`
	TemplateIDs []string            `json:"templateIds,omitempty"`
	// TransactionID narrows the change to one transaction's messages.
	TransactionID string             `json:"transactionId,omitempty"`
	Change        models.StateChange `json:"change"`
	// Delete makes the job delete the messages instead of changing them (delete.go).
	Delete bool `json:"delete,omitempty"`
	// At is when the change was asked for: the time it stamps (lastReadDate and the
	// others), however late a batch runs.
	At models.Time `json:"at"`
}

// ErrStateJobLost is what RunStateJob returns when another instance has claimed the job:
// this one's lease had passed.
var ErrStateJobLost = errors.New("state job: lease lost to another instance")

// ErrStateJobInvalid is what RunStateJob returns, wrapped, for a job whose spec does not
// decode (written by something else than CreateStateJob): it is deleted, never run.
var ErrStateJobInvalid = errors.New("state job: spec does not decode")

// CreateStateJob keeps the change of all of t's messages as a job. When ctx carries no
// transaction and no older job of the subscriber is still waiting or running, the job is
// claimed for owner for lease, and claimed reports it: the caller runs it (RunStateJob)
// at once. Otherwise it waits to be claimed (ClaimStateJobs) once its transaction has
// committed and the subscriber's older jobs are done, so that a subscriber's changes
// apply in the order they were asked for.
func (s *Store) CreateStateJob(ctx context.Context, environmentID string, t models.StateTarget, c models.StateChange, owner string, lease time.Duration) (job *StateJob, claimed bool, err error) {
	return s.createJob(ctx, environmentID, t.SubscriberID, stateJobSpec{Channel: t.Channel, Filter: t.Filter, TemplateIDs: t.TemplateIDs,
		TransactionID: t.TransactionID, Change: c, At: models.NewTime(s.Now())}, owner, lease)
}

// CreateDeleteJob keeps the delete of all of the messages of t's subscriber that t's
// channel, filter and templates match as a job, as CreateStateJob keeps a change: in
// line with the subscriber's changes, in the order they were asked for.
func (s *Store) CreateDeleteJob(ctx context.Context, environmentID string, t models.DeleteTarget, owner string, lease time.Duration) (job *StateJob, claimed bool, err error) {
	if t.SubscriberID == nil || !t.ByFilter() {
		return nil, false, errors.New("state job: a delete job takes a subscriber's messages by filter")
	}
	return s.createJob(ctx, environmentID, *t.SubscriberID,
		stateJobSpec{Channel: t.Channel, Filter: t.Filter, TemplateIDs: t.TemplateIDs, Delete: true, At: models.NewTime(s.Now())}, owner, lease)
}

// createJob keeps spec as a job of the subscriber (external id), claimed for owner when
// it may run at once (see CreateStateJob).
func (s *Store) createJob(ctx context.Context, environmentID, subscriberID string, spec stateJobSpec, owner string, lease time.Duration) (job *StateJob, claimed bool, err error) {
	text, err := json.Marshal(spec)
	if err != nil {
		return nil, false, err
	}
	job = &StateJob{ID: models.NewID(s.Now()), EnvironmentID: environmentID, SubscriberID: subscriberID, Spec: string(text)}
	detached := !inTx(ctx)
	err = s.RetryTransaction(ctx, func(ctx context.Context) error {
		claimed = false
		tx := s.conn(ctx)
		if detached {
			var waiting int64
			if err := tx.Model(&StateJob{}).Where("environment_id = ? AND subscriber_id = ?", environmentID, subscriberID).
				Count(&waiting).Error; err != nil {
				return err
			}
			claimed = waiting == 0
		}
		if !claimed {
			return tx.Exec("INSERT INTO state_jobs (id, environment_id, subscriber_id, spec) VALUES (?, ?, ?, ?)",
				job.ID, environmentID, subscriberID, job.Spec).Error
		}
		return tx.Exec("INSERT INTO state_jobs (id, environment_id, subscriber_id, spec, attempts, owner, lease_until) VALUES (?, ?, ?, ?, 1, ?, "+s.nowSQL(lease)+")",
			job.ID, environmentID, subscriberID, job.Spec, owner).Error
	})
	if err != nil {
		return nil, false, err
	}
	if claimed {
		job.Owner, job.Attempts = owner, 1
	}
	return job, claimed, nil
}

// ClaimStateJobs claims for owner, for lease, up to limit jobs that no instance holds
// (their lease has passed), each the oldest of its subscriber's, oldest first on each
// shard. On Vitess each shard is asked on its own (eachShard): a shard down holds up only
// its own tenants' jobs.
func (s *Store) ClaimStateJobs(ctx context.Context, owner string, lease time.Duration, limit int) ([]*StateJob, error) {
	var mu sync.Mutex
	var claimed []*StateJob
	err := s.eachShard(ctx, func(ctx context.Context) error {
		var due []*StateJob
		err := s.conn(ctx).Raw(`SELECT j.* FROM state_jobs j
WHERE j.lease_until < `+s.nowSQL(0)+` AND NOT EXISTS (SELECT 1 FROM state_jobs o
    WHERE o.environment_id = j.environment_id AND o.subscriber_id = j.subscriber_id
    AND (o.created_at < j.created_at OR (o.created_at = j.created_at AND o.id < j.id)))
ORDER BY j.created_at, j.id LIMIT ?`, limit).Scan(&due).Error
		if err != nil {
			return err
		}
		for _, job := range due {
			mu.Lock()
			full := len(claimed) >= limit
			mu.Unlock()
			if full {
				return nil
			}
			// Only one instance's UPDATE finds the lease passed: the others match no row.
			res := s.conn(ctx).Exec("UPDATE state_jobs SET owner = ?, attempts = attempts + 1, lease_until = "+s.nowSQL(lease)+
				" WHERE id = ? AND environment_id = ? AND lease_until < "+s.nowSQL(0), owner, job.ID, job.EnvironmentID)
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected == 1 {
				// Read back as claimed: on Galera the list above may be read on a node that
				// has not yet applied the last batch of the job's previous owner (its count
				// of changed messages), where the claim, a write, is certified after it.
				if err := s.conn(ctx).Where("id = ? AND environment_id = ?", job.ID, job.EnvironmentID).Take(job).Error; err != nil {
					return err
				}
				mu.Lock()
				claimed = append(claimed, job)
				mu.Unlock()
			}
		}
		return nil
	})
	return claimed, err
}

// RunStateJob works on job, claimed by owner, batch by batch until it is done (nil), ctx
// ends, another instance has claimed it (ErrStateJobLost), or a batch fails: then the
// job stays, to be claimed again once its lease has passed. Each batch renews the lease
// for lease and reports the job's count of changed messages to progress. A job whose
// spec does not decode is deleted, with the error.
func (s *Store) RunStateJob(ctx context.Context, job *StateJob, owner string, lease time.Duration, progress func(changed int64)) error {
	var spec stateJobSpec
	if err := json.Unmarshal([]byte(job.Spec), &spec); err != nil {
		err = fmt.Errorf("%w: %s: %w", ErrStateJobInvalid, job.ID, err)
		return errors.Join(err, s.db.WithContext(ctx).Exec("DELETE FROM state_jobs WHERE id = ? AND environment_id = ?", job.ID, job.EnvironmentID).Error)
	}
	defer s.noteWrite()
	t := models.StateTarget{SubscriberID: job.SubscriberID, Channel: spec.Channel, Filter: spec.Filter, TemplateIDs: spec.TemplateIDs,
		TransactionID: spec.TransactionID}
	set, args := stateSet(spec.Change, spec.At)
	after := "" // a job taken on goes over the messages from the first once more
	for {
		var changed int
		var last string
		err := s.RetryTransaction(ctx, func(ctx context.Context) error {
			// The lease first: while this transaction holds the job's row, no instance
			// claims it, and a job claimed by another since is left to that one.
			res := s.conn(ctx).Exec("UPDATE state_jobs SET lease_until = "+s.nowSQL(lease)+" WHERE id = ? AND environment_id = ? AND owner = ?", job.ID, job.EnvironmentID, owner)
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected == 0 {
				return ErrStateJobLost
			}
			var err error
			if spec.Delete {
				changed, last, err = s.deleteBatch(ctx, job.EnvironmentID, deleteFilter(models.DeleteTarget{SubscriberID: &t.SubscriberID,
					Channel: t.Channel, Filter: t.Filter, TemplateIDs: t.TemplateIDs}), after)
			} else {
				changed, last, err = s.changeBatch(ctx, job.EnvironmentID, t, set, args, spec.Change, after)
			}
			if err != nil {
				return err
			}
			if last == "" {
				return s.conn(ctx).Exec("DELETE FROM state_jobs WHERE id = ? AND environment_id = ?", job.ID, job.EnvironmentID).Error
			}
			return s.conn(ctx).Exec("UPDATE state_jobs SET changed = changed + ? WHERE id = ? AND environment_id = ?", changed, job.ID, job.EnvironmentID).Error
		})
		if err != nil {
			return err
		}
		job.Changed += int64(changed)
		if progress != nil {
			progress(job.Changed)
		}
		if last == "" {
			return nil
		}
		after = last
	}
}

// ReleaseStateJob gives up owner's lease of the job, so that any instance may claim it at
// once: what an instance does with the jobs it holds when it stops.
func (s *Store) ReleaseStateJob(ctx context.Context, job *StateJob, owner string) error {
	return s.db.WithContext(ctx).Exec("UPDATE state_jobs SET lease_until = "+s.nowSQL(-time.Hour)+" WHERE id = ? AND environment_id = ? AND owner = ?",
		job.ID, job.EnvironmentID, owner).Error
}

// StateJobs lists the jobs of an environment not done yet, oldest first.
func (s *Store) StateJobs(ctx context.Context, environmentID string) ([]*StateJob, error) {
	var jobs []*StateJob
	err := s.db.WithContext(ctx).Where("environment_id = ?", environmentID).Order("created_at, id").Find(&jobs).Error
	return jobs, err
}
