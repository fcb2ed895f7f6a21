package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	err = s.pool.QueryRow(ctx, q, toDB(worker), now).Scan(&job.ID, &job.Type, &job.Payload, &job.Attempts, &job.ClaimedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Job{}, false, nil
	}
	if err != nil {
		return Job{}, false, fmt.Errorf("claim a job from %s: %w", s.url, err)
	}
	job.ID, job.Type, job.Payload, job.ClaimedAt = fromDB(job.ID), fromDB(job.Type), fromDB(job.Payload), fromDB(job.ClaimedAt)
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
		status, toDB(lastErr), model.FormatTime(s.now()), toDB(job.ID), toDB(worker), toDB(job.ClaimedAt), strconv.Itoa(job.Attempts))
	if err != nil {
		return fmt.Errorf("finish job %s in %s: %w", job.ID, s.url, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("finish job %s: %w", job.ID, ErrClaimLost)
	}
	return nil
}

// Requeued is a claim RequeueStale returned to pending, as it was before.
type Requeued struct {
	ID string
	// Row is the row's number as Load numbers it.
	Row int
	// ClaimedBy and ClaimedAt are the claim's cells as they were.
	ClaimedBy, ClaimedAt string
	// Age is how old the claim was at the requeue.
	Age time.Duration
	// UpdatedAt is the updatedAt the requeue wrote.
	UpdatedAt string
}

// RequeueStale returns every stale claim to pending, releasing it (claimedBy and claimedAt
// blanked, updatedAt stamped), in one statement, and says which it returned (oldest row
// first). Stale is model.Requeue's rule exactly: status claimed (any case, white space
// trimmed) and a claimedAt older than staleAfter as model.ParseTime reads it (in SQL:
// triage_cell_time, migration 4), to the microsecond; a claim whose time can't be read is left
// for a person. A worker's Finish racing the statement wins or loses whole: the row is locked
// and its staleness checked again once the worker's change committed.
func (s *Store) RequeueStale(ctx context.Context, staleAfter time.Duration) ([]Requeued, error) {
	if s.readOnly {
		return nil, fmt.Errorf("requeue stale claims: %w", ErrReadOnly)
	}
	if staleAfter <= 0 {
		staleAfter = 30 * time.Minute // model.Table.Stale's default
	}
	now := s.now()
	// Staleness is cell time < now - staleAfter (model: now.Sub(t) > staleAfter). The cutoff
	// goes to the server in microseconds, rounded up: for times in whole microseconds the
	// comparison is then the same as Go's in nanoseconds.
	cutoff := now.Add(-staleAfter).UTC()
	if cutoff.Nanosecond()%1000 != 0 {
		cutoff = cutoff.Truncate(time.Microsecond).Add(time.Microsecond)
	}
	stamp := model.FormatTime(now)
	rows, err := s.pool.Query(ctx, `
WITH stale AS (
    SELECT id, claimedby, claimedat FROM jobs
    WHERE lower(triage_trim(status) COLLATE "C") = 'claimed' AND triage_cell_time(claimedat) < $2::timestamp
    FOR UPDATE
)
UPDATE jobs j SET status = 'pending', claimedby = '', claimedat = '', updatedat = $1
FROM stale WHERE j.id = stale.id
RETURNING j.id, j.row_no, stale.claimedby, stale.claimedat`, stamp, cutoff)
	if err != nil {
		return nil, fmt.Errorf("requeue stale claims in %s: %w", s.url, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Requeued, error) {
		var q Requeued
		var rowNo int64
		if err := r.Scan(&q.ID, &rowNo, &q.ClaimedBy, &q.ClaimedAt); err != nil {
			return q, err
		}
		q.ID, q.ClaimedBy, q.ClaimedAt = fromDB(q.ID), fromDB(q.ClaimedBy), fromDB(q.ClaimedAt)
		q.Row, q.UpdatedAt = int(rowNo)+1, stamp
		if t, ok := model.ParseTime(q.ClaimedAt, time.UTC); ok {
			q.Age = now.Sub(t)
		}
		return q, nil
	})
	if err != nil {
		return nil, fmt.Errorf("requeue stale claims in %s: %w", s.url, err)
	}
	slices.SortFunc(out, func(a, b Requeued) int { return a.Row - b.Row })
	return out, nil
}
