package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/triage-dev/triage/model"
)

// Job is a jobs row a worker has claimed.
type Job struct {
	ID      string
	Type    string
	Payload string
	// Attempts counts the claims of this job, this one included.
	Attempts int
	// ClaimedAt is the claim's time, as written to claimedAt.
	ClaimedAt string
}

// Claim takes the oldest pending job for worker (the seed's claim → work → terminal status,
// without a lock service): one statement that locks the row with FOR UPDATE SKIP LOCKED, so
// workers claiming at once each get their own job and none waits for another, and marks it
// claimed by worker at now, counting the attempt. ok is false when no job is pending.
func (s *Store) Claim(ctx context.Context, worker string) (job Job, ok bool, err error) {
	if s.readOnly {
		return Job{}, false, fmt.Errorf("claim a job: %w", ErrReadOnly)
	}
	now := model.FormatTime(s.now())
	const q = `
WITH next AS (
    SELECT id FROM jobs
    WHERE lower(btrim(status)) IN ('', 'pending')
    ORDER BY row_no
    LIMIT 1
    FOR UPDATE SKIP LOCKED
)
UPDATE jobs j SET status = 'claimed', claimedby = $1, claimedat = $2, updatedat = $2,
    attempts = CASE WHEN btrim(j.attempts) ~ '^[0-9]{1,9}$' THEN (btrim(j.attempts)::int + 1)::text ELSE '1' END
FROM next WHERE j.id = next.id
RETURNING j.id, j.type, j.payload, j.attempts::int, j.claimedat`
	err = s.pool.QueryRow(ctx, q, worker, now).Scan(&job.ID, &job.Type, &job.Payload, &job.Attempts, &job.ClaimedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Job{}, false, nil
	}
	if err != nil {
		return Job{}, false, fmt.Errorf("claim a job from %s: %w", s.url, err)
	}
	return job, true, nil
}

// ErrClaimLost is a Finish whose claim is no longer the worker's: the job was requeued
// (stale) and perhaps claimed again. Its result was not recorded; the job runs again.
var ErrClaimLost = errors.New("the claim is no longer this worker's (requeued as stale): the result was not recorded")

// Finish records a claimed job's end: done when workErr is nil, else error (a sticky error,
// for a person to look at) with workErr's text. It writes only while the claim is still
// worker's (status claimed, claimedBy worker, claimedAt as claimed): otherwise ErrClaimLost.
func (s *Store) Finish(ctx context.Context, worker string, job Job, workErr error) error {
	if s.readOnly {
		return fmt.Errorf("finish job %s: %w", job.ID, ErrReadOnly)
	}
	status, lastErr := model.StatusDone, ""
	if workErr != nil {
		status, lastErr = model.StatusError, workErr.Error()
	}
	tag, err := s.pool.Exec(ctx, `
UPDATE jobs SET status = $1, lasterror = $2, updatedat = $3
WHERE id = $4 AND lower(btrim(status)) = 'claimed' AND claimedby = $5 AND claimedat = $6 AND btrim(attempts) = $7`,
		status, lastErr, model.FormatTime(s.now()), job.ID, worker, job.ClaimedAt, strconv.Itoa(job.Attempts))
	if err != nil {
		return fmt.Errorf("finish job %s in %s: %w", job.ID, s.url, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("finish job %s: %w", job.ID, ErrClaimLost)
	}
	return nil
}

// RequeueStale returns every claim older than staleAfter to pending, releasing it (claimedBy
// and claimedAt blanked), in one statement, and says how many. A claim whose time can't be
// read is left for a person.
func (s *Store) RequeueStale(ctx context.Context, staleAfter time.Duration) (int64, error) {
	if s.readOnly {
		return 0, fmt.Errorf("requeue stale claims: %w", ErrReadOnly)
	}
	now := s.now()
	tag, err := s.pool.Exec(ctx, `
UPDATE jobs SET status = 'pending', claimedby = '', claimedat = '', updatedat = $1
WHERE lower(btrim(status)) = 'claimed' AND triage_time(claimedat) < $2`,
		model.FormatTime(now), now.Add(-staleAfter))
	if err != nil {
		return 0, fmt.Errorf("requeue stale claims in %s: %w", s.url, err)
	}
	return tag.RowsAffected(), nil
}
