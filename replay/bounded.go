package replay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/triage-dev/triage/internal/backoff"
	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
)

// A bounded run is what an unattended replay needs (`triage replay --max-time 55m --limit 500`
// from cron): it must be over before the next one starts or a supervisor kills it, and a
// backlog is worked through a slice at a time. Both bounds stop a run the way a cancel does:
// nothing in flight is lost and nothing is sent twice, because every row keeps its key and
// every outcome that came back is written back; what a run leaves is the next run's.

// WriteBackAllowance is the time a run with a deadline keeps at its end, besides the time
// its requests in flight may still take, for writing their outcomes back and releasing its
// leases (see StopMargin). A write round takes seconds; a minute also covers the store's
// retries of a transient error and a wait for the Sheets per-minute quota.
const WriteBackAllowance = time.Minute

// ErrTimeUp is the cause of a run's context once the time it was given is nearly up
// (RunOptions.Deadline): nothing new is sent after it.
var ErrTimeUp = errors.New("the run's time was nearly up")

// StopMargin is how long before its deadline (RunOptions.Deadline) a run of recs stops
// starting sends: the longest per-attempt timeout among the configured sources of recs (a
// request started just before the stop point is answered or times out within it), plus
// WriteBackAllowance. Rows whose source is not configured are never sent and don't count; of
// none, the margin is DefaultTimeout's.
func StopMargin(t *model.Table, recs []*model.Record, sources map[string]*Source) time.Duration {
	longest := time.Duration(0)
	seen := map[string]bool{}
	for _, r := range recs {
		if r == nil || t == nil {
			continue
		}
		name := rowSource(t, r)
		if seen[name] {
			continue
		}
		seen[name] = true
		if src := sources[name]; src != nil {
			longest = max(longest, src.timeout())
		}
	}
	if longest == 0 {
		longest = DefaultTimeout
	}
	return longest + WriteBackAllowance
}

// timeBudget is a run's deadline on its client's clock: the point from which no send starts.
type timeBudget struct {
	now    func() time.Time
	stopAt time.Time // zero: no deadline
}

// up reports whether no send may start any more.
func (b timeBudget) up() bool {
	return !b.stopAt.IsZero() && !b.now().Before(b.stopAt)
}

// watch stops the run (stop(ErrTimeUp)) at the stop point, so that waits (a backoff, a
// source's rate, a slot) that would outlast it end there instead of holding the run past its
// deadline. It sleeps on the process's timers and asks the clock when it wakes: on a clock
// that does not follow them (a test's), only the check before each request (see Run) stops
// the run. It returns when ctx ends.
func (b timeBudget) watch(ctx context.Context, stop func(error)) {
	for {
		left := b.stopAt.Sub(b.now())
		if left <= 0 {
			stop(ErrTimeUp)
			return
		}
		if backoff.Sleep(ctx, left) != nil {
			return
		}
	}
}

// limitJobs keeps the n oldest of jobs (RunOptions.Limit), in that order, by their rows'
// timestamps: ties by sheet row, and rows without a readable timestamp (their age is unknown)
// after every dated one. The rest are left out, each with its reason, oldest first. n ≤ 0
// keeps every job, in plan order.
func limitJobs(jobs []Job, n int) (kept []Job, left []model.Refusal) {
	if n <= 0 || len(jobs) <= n {
		if n > 0 {
			jobs = oldestFirst(jobs)
		}
		return jobs, nil
	}
	sorted := oldestFirst(jobs)
	for _, j := range sorted[n:] {
		left = append(left, model.Refusal{ID: j.ID, Row: j.Row,
			Reason: fmt.Sprintf("row %d: left out by the limit of %s (the oldest go first); the next run replays it", j.Row, words.Count(n, "row", "rows"))})
	}
	return sorted[:n], left
}

// oldestFirst is a copy of jobs sorted by their rows' timestamps (see limitJobs).
func oldestFirst(jobs []Job) []Job {
	sorted := slices.Clone(jobs)
	slices.SortStableFunc(sorted, func(a, b Job) int {
		switch az, bz := a.Time.IsZero(), b.Time.IsZero(); {
		case az && !bz:
			return 1
		case bz && !az:
			return -1
		}
		return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.Row, b.Row))
	})
	return sorted
}
