package service

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"messages/models"
	"messages/models/store"
)

// A change of all of a subscriber's messages is large when they have many: 100,000
// messages take longer than a request may (docs/reliability.md, "Bulk changes"). It is
// therefore kept as a job (store.StateJob) and run apart from the request that asked for
// it: the request waits for it until shortly before its deadline and answers what it
// did when it finished by then, or else that it was accepted and carries on. A job this
// instance stops working on (it stops, or a batch fails because the database went away)
// is claimed by a sweep, here or on another instance, once its lease has passed.

// Defaults of StateJobOptions.
const (
	DefaultStateJobLease      = 30 * time.Second
	DefaultStateJobSweep      = time.Second
	DefaultStateJobConcurrent = 4
)

// StateJobOptions say how jobs of bulk changes run; zero fields take the defaults.
type StateJobOptions struct {
	// Lease is how long an instance holds a job it does not renew (each batch renews
	// it): how late, at most, another instance carries on a job whose instance died.
	Lease time.Duration
	// Sweep is how often an instance looks for jobs no instance holds.
	Sweep time.Duration
	// Concurrent bounds the jobs a sweep has claimed that run at once on this instance;
	// the jobs its own requests started are bounded by the requests.
	Concurrent int
}

// stateJobs runs this instance's jobs.
type stateJobs struct {
	store  *store.Store
	o      StateJobOptions
	logger *slog.Logger
	// owner names this instance in the leases it holds.
	owner string

	mu sync.Mutex
	// base is the context jobs run in: the instance's life, from RunStateJobs; until it
	// runs, jobs run until done.
	base    context.Context
	stopped bool // run has returned or is waiting for the jobs: start starts none
	running sync.WaitGroup
	// active are the jobs running here, by id: a sweep that claims one again (its lease
	// passed while a batch was failing) leaves it to the run it has.
	active map[string]bool
	swept  atomic.Int64 // jobs claimed by sweeps, running
	wake   chan struct{}
}

func newStateJobs(st *store.Store, o StateJobOptions, logger *slog.Logger, now time.Time) *stateJobs {
	if o.Lease <= 0 {
		o.Lease = DefaultStateJobLease
	}
	if o.Sweep <= 0 {
		o.Sweep = DefaultStateJobSweep
	}
	if o.Concurrent <= 0 {
		o.Concurrent = DefaultStateJobConcurrent
	}
	return &stateJobs{store: st, o: o, logger: logger, owner: models.NewID(now), base: context.Background(), active: map[string]bool{},
		wake: make(chan struct{}, 1)}
}

// jobRun is a job running on this instance.
type jobRun struct {
	done    chan struct{}
	changed atomic.Int64
	err     error // set before done is closed
}

// start runs the claimed job apart from any request, until it is done or stops; nil
// when it runs here already.
func (j *stateJobs) start(job *store.StateJob, failed func()) *jobRun {
	run := &jobRun{done: make(chan struct{})}
	run.changed.Store(job.Changed)
	j.mu.Lock()
	if j.active[job.ID] {
		j.mu.Unlock()
		return nil
	}
	if j.stopped {
		// The instance is stopping: the job is left to its lease, for the next one.
		j.mu.Unlock()
		run.err = context.Canceled
		close(run.done)
		return run
	}
	j.active[job.ID] = true
	ctx := j.base
	j.running.Add(1)
	j.mu.Unlock()
	go func() {
		defer j.running.Done()
		defer close(run.done)
		run.err = j.runUntilStopped(ctx, job, run, failed)
		j.mu.Lock()
		delete(j.active, job.ID)
		j.mu.Unlock()
		j.ended(ctx, job, run.err)
	}()
	return run
}

// runUntilStopped runs the job until it is done, ctx ends or another instance has it: a
// batch that fails (the database went away) is tried again after a pause, growing to
// the lease, while the lease may still be this instance's. The first failure is also
// told to failed, so that a request waiting for the job answers at once.
func (j *stateJobs) runUntilStopped(ctx context.Context, job *store.StateJob, run *jobRun, failed func()) error {
	pause := 100 * time.Millisecond
	for {
		err := j.store.RunStateJob(ctx, job, j.owner, j.o.Lease, run.changed.Store)
		if err == nil || ctx.Err() != nil || errors.Is(err, store.ErrStateJobLost) {
			return err
		}
		if errors.Is(err, store.ErrStateJobInvalid) {
			j.logger.Error("a bulk change that cannot be run was deleted", "job", job.ID, "error", err)
			return err
		}
		if failed != nil {
			failed()
			failed = nil
		}
		j.logger.Warn("a batch of a bulk change failed; trying again", "job", job.ID, "changed", job.Changed,
			"retryIn", pause.String(), "error", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, j.o.Lease)
	}
}

// ended logs a job that stopped before it was done and, when this instance is
// stopping, gives up its lease so that another carries it on at once. A job done wakes
// the sweep, which claims the subscriber's next job, if any.
func (j *stateJobs) ended(ctx context.Context, job *store.StateJob, err error) {
	switch {
	case err == nil:
		select {
		case j.wake <- struct{}{}:
		default:
		}
	case ctx.Err() != nil:
		release, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if err := j.store.ReleaseStateJob(release, job, j.owner); err != nil {
			j.logger.Warn("a bulk change was left to its lease", "job", job.ID, "error", err)
		}
	case errors.Is(err, store.ErrStateJobLost):
		j.logger.Info("a bulk change was carried on by another instance", "job", job.ID)
	}
}

// run sweeps until ctx ends, then waits for the jobs running here to stop.
func (j *stateJobs) run(ctx context.Context) {
	j.mu.Lock()
	j.base = ctx
	j.mu.Unlock()
	t := time.NewTicker(j.o.Sweep)
	defer t.Stop()
	for {
		j.sweep(ctx)
		select {
		case <-ctx.Done():
			j.mu.Lock()
			j.stopped = true
			j.mu.Unlock()
			j.running.Wait()
			return
		case <-t.C:
		case <-j.wake:
		}
	}
}

// sweep claims the jobs no instance holds, as many as may run, and runs them.
func (j *stateJobs) sweep(ctx context.Context) {
	free := j.o.Concurrent - int(j.swept.Load())
	if free <= 0 {
		return
	}
	jobs, err := j.store.ClaimStateJobs(ctx, j.owner, j.o.Lease, free)
	if err != nil && ctx.Err() == nil {
		j.logger.Warn("claiming bulk changes failed", "error", err)
	}
	for _, job := range jobs {
		if job.Attempts > 1 {
			j.logger.Info("carrying on a bulk change", "job", job.ID, "changed", job.Changed, "attempt", job.Attempts)
		}
		run := j.start(job, nil)
		if run == nil {
			continue
		}
		j.swept.Add(1)
		go func() {
			<-run.done
			j.swept.Add(-1)
		}()
	}
}

// RunStateJobs carries on, until ctx ends, the bulk changes no instance holds: those
// left by an instance that stopped, those waiting for a subscriber's earlier change, and
// those of requests that held a transaction. It returns once the jobs running on this
// instance have stopped, their leases given up for another instance to take.
func (s *Service) RunStateJobs(ctx context.Context) { s.jobs.run(ctx) }

// changeAll applies c to every one of t's messages as a job (see above), and answers
// what it did by shortly before ctx's deadline.
func (s *Service) changeAll(ctx context.Context, environmentID string, t models.StateTarget, c models.StateChange) (*models.StateChanged, error) {
	job, claimed, err := s.store.CreateStateJob(ctx, environmentID, t, c, s.jobs.owner, s.jobs.o.Lease)
	if err != nil {
		// Nothing was written: the change is not accepted.
		return nil, err
	}
	changed, jobID := s.await(ctx, job, claimed)
	return &models.StateChanged{Changed: changed, JobID: jobID}, nil
}

// deleteAll deletes every one of t's messages as a job, as changeAll changes them.
func (s *Service) deleteAll(ctx context.Context, environmentID string, t models.DeleteTarget) (*models.Deleted, error) {
	job, claimed, err := s.store.CreateDeleteJob(ctx, environmentID, t, s.jobs.owner, s.jobs.o.Lease)
	if err != nil {
		return nil, err
	}
	deleted, jobID := s.await(ctx, job, claimed)
	return &models.Deleted{Deleted: deleted, JobID: jobID}, nil
}

// await runs the job created for a request when it was claimed, and waits for it until
// shortly before ctx's deadline: it answers how many messages the job wrote by then and,
// when it was not done, its id, for it carries on (or waits for the subscriber's earlier
// jobs) after the answer.
func (s *Service) await(ctx context.Context, job *store.StateJob, claimed bool) (written int, jobID string) {
	if !claimed {
		return 0, job.ID
	}
	failed := make(chan struct{})
	run := s.jobs.start(job, func() { close(failed) })
	if run == nil {
		return 0, job.ID
	}
	answer, stop := answerBy(ctx)
	defer stop()
	select {
	case <-run.done:
		if run.err == nil {
			return int(run.changed.Load()), ""
		}
	case <-failed:
	case <-answer:
	}
	// Accepted, and kept: whatever stopped it here, an instance carries it on.
	return int(run.changed.Load()), job.ID
}

// answerBy is a channel closed when a request must stop waiting to answer in time: a
// tenth of what is left of its deadline before it (at least 50 ms), or when it ends.
func answerBy(ctx context.Context) (<-chan struct{}, func()) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return ctx.Done(), func() {}
	}
	left := time.Until(deadline)
	ctx, cancel := context.WithTimeout(ctx, left-max(left/10, 50*time.Millisecond))
	return ctx.Done(), cancel
}
