package postgres

import (
	"context"
	"errors"
	"fmt"
)

// Work is a worker's whole turn at the queue (the seed's claim → work → terminal status,
// without a lock service): it claims the oldest pending job for worker (Claim: FOR UPDATE SKIP
// LOCKED, so workers calling at once each get their own job), runs fn on it, and records fn's
// result (Finish: done when fn returns nil, else error with fn's text, for a person to look at).
// ran is false, with no error, when no job was pending.
//
// err is about the queue, not the job: a claim or a finish that failed, or ErrClaimLost when
// the claim was requeued as stale while fn ran (its result is not recorded; the job runs again,
// perhaps already has). fn's own error is recorded in the job's row, not returned. If fn
// panics the claim stays until RequeueStale returns it, as a crashed worker's does. fn gets
// ctx; a worker that must not be cut short mid-job passes a context that outlives its signal.
func (s *Store) Work(ctx context.Context, worker string, fn func(context.Context, Job) error) (ran bool, err error) {
	job, ok, err := s.Claim(ctx, worker)
	if err != nil || !ok {
		return false, err
	}
	workErr := fn(ctx, job)
	if err := s.Finish(ctx, worker, job, workErr); err != nil {
		return true, fmt.Errorf("worker %s: %w", worker, err)
	}
	return true, nil
}

// WorkAll is Work in a loop until no job is pending: n counts the jobs fn ran (lost claims
// included). A lost claim doesn't stop it (the job is another worker's now); it stops at the
// first other queue error, or when ctx ends. A long-running worker calls it whenever it is
// told of new jobs (Watch), or on its own schedule.
//
// A worker's loop: take every pending job, one at a time, each recorded done or error as the
// work says. Run as many such workers as you like, anywhere: no two get the same job.
//
//	st, err := postgres.Open(ctx, os.Getenv("TRIAGE_DATABASE_URL"), postgres.Options{})
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer st.Close()
//	host, _ := os.Hostname()
//	n, err := st.WorkAll(ctx, host, func(ctx context.Context, job postgres.Job) error {
//		log.Printf("running %s (%s), attempt %d", job.ID, job.Type, job.Attempts)
//		return nil // an error is recorded in the job's row: status error, its text in lastError
//	})
func (s *Store) WorkAll(ctx context.Context, worker string, fn func(context.Context, Job) error) (n int, err error) {
	for ctx.Err() == nil {
		ran, err := s.Work(ctx, worker, fn)
		if ran {
			n++
		}
		if err != nil && !errors.Is(err, ErrClaimLost) {
			return n, err
		}
		if !ran {
			return n, nil
		}
	}
	return n, ctx.Err()
}
