package sheets

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/triage-dev/triage/internal/backoff"
)

// RetryPolicy bounds the retries of one Sheets API call. The store retries 429, 5xx and
// network errors (never another 4xx) with full jitter: before attempt n+1 it waits
// uniform(0, min(Cap, Base·2^(n-1))). The zero value means 5 attempts, base 500ms, cap 10s.
//
// Two operations spend the policy differently. Apply counts the failed sends of all its
// requests together (a failed write is retried by locating again, not by resending it; see
// Store.Apply). Load gives up after dialAttempts sends when its first requests can't connect
// at all (see dialAttempts).
type RetryPolicy struct {
	// MaxAttempts is the number of sends, the first included (default 5; 1 = no retry).
	MaxAttempts int
	// Base is the first backoff ceiling (default 500ms).
	Base time.Duration
	// Cap bounds every backoff (default 10s).
	Cap time.Duration
	// Sleep waits d or until ctx is done (default: a timer). Tests pass a fake.
	Sleep func(ctx context.Context, d time.Duration) error
	// RequestTimeout is the deadline of each request (default 90s; a 100,000-row read on a
	// slow link takes tens of seconds). A write that passes it may still have been applied:
	// that is an unknown outcome, settled by the write's journal entry (see Store.Apply).
	RequestTimeout time.Duration
}

// Default retry settings.
const (
	DefaultMaxAttempts    = 5
	DefaultRetryBase      = 500 * time.Millisecond
	DefaultRetryCap       = 10 * time.Second
	DefaultRequestTimeout = 90 * time.Second
)

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.Base <= 0 {
		p.Base = DefaultRetryBase
	}
	if p.Cap <= 0 {
		p.Cap = DefaultRetryCap
	}
	if p.Sleep == nil {
		p.Sleep = backoff.Sleep
	}
	if p.RequestTimeout <= 0 {
		p.RequestTimeout = DefaultRequestTimeout
	}
	return p
}

// Backoff returns the ceiling of the wait before attempt n+1 (n ≥ 1 failed attempts):
// min(Cap, Base·2^(n-1)). The actual wait is uniform in [0, Backoff(n)].
func (p RetryPolicy) Backoff(n int) time.Duration {
	p = p.withDefaults()
	return backoff.Ceil(n, p.Base, p.Cap)
}

// jitter draws the full-jitter wait under ceil.
func jitter(ceil time.Duration) time.Duration {
	return backoff.FullJitter(ceil, rand.Float64())
}

// Fast failure of a Load that can't connect at all (no network, wrong --endpoint, a dead
// proxy): while every failure of a Load's first requests is a refused connection or a
// failed DNS lookup, the requests share a budget of dialAttempts sends in all, and the one
// retry waits at most dialBackoff. A person at a jump host with no route out then gets the
// "can't reach" message in well under a second instead of after ~4 s of backoff, while a
// flaky link still gets a second try. Any other failure (429, 5xx, a reset, a timeout), or
// any answer at all, turns this off and the full RetryPolicy applies. Later requests (and
// every write) always use the full policy.
const (
	dialAttempts = 2
	dialBackoff  = 250 * time.Millisecond
)

// budget is the retry state of one logical operation: the failed sends so far, counted
// against RetryPolicy.MaxAttempts. A request sent with its own budget gets the whole policy;
// Apply shares one budget between all its requests so that its retries, including the
// relocating ones of a failed write, are bounded in total. A budget is used by one goroutine.
type budget struct {
	failed int
	// fuse, when set, is shared by the concurrent first requests of a Load (see dialAttempts).
	fuse *dialFuse
}

// dialFuse is the shared fast-failure state of a Load's first requests.
type dialFuse struct {
	mu     sync.Mutex
	failed int  // refused / DNS failures so far, across the requests sharing the fuse
	off    bool // a request got an answer or failed otherwise: no fast failure any more
}

// record notes a failed send and reports whether it falls under the fast rule, and how many
// dial failures the fuse has seen (this one included).
func (f *dialFuse) record(err error) (fast bool, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.off {
		return false, 0
	}
	if !isDialError(err) {
		f.off = true
		return false, 0
	}
	f.failed++
	return true, f.failed
}

// answered turns the fuse off: the API was reached.
func (f *dialFuse) answered() {
	f.mu.Lock()
	f.off = true
	f.mu.Unlock()
}

// call is the one helper every Sheets API request goes through: it sends fn, retries what
// is retryable within the policy, and turns the final error into the user-facing one.
func (s *Store) call(ctx context.Context, op string, fn func(ctx context.Context) error) error {
	return s.callWith(ctx, op, &budget{}, fn)
}

// callWith is call with the retry state of a larger operation (see budget).
func (s *Store) callWith(ctx context.Context, op string, b *budget, fn func(ctx context.Context) error) error {
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		rctx, cancel := s.requestContext(ctx)
		err := fn(rctx)
		cancel()
		if err == nil {
			b.answered()
			return nil
		}
		if ferr := s.backoff(ctx, op, b, err); ferr != nil {
			return ferr
		}
	}
}

// answered records a successful send: the API is reachable, so b's fuse (if any) is off.
func (b *budget) answered() {
	if b.fuse != nil {
		b.fuse.answered()
	}
}

// backoff counts a failed send against b. If the error is retryable and the budget allows
// another send it waits (full jitter) and returns nil; otherwise it returns the final,
// user-facing error.
func (s *Store) backoff(ctx context.Context, op string, b *budget, err error) error {
	b.failed++
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w (%v)", op, ctx.Err(), err)
	}
	p := s.retry
	limit, ceil := p.MaxAttempts, p.Backoff(b.failed)
	if b.fuse != nil {
		if fast, n := b.fuse.record(err); fast {
			if n >= dialAttempts {
				return s.errs.classify(op, err, b.failed)
			}
			ceil = min(ceil, dialBackoff)
		}
	}
	if !retryable(err) || b.failed >= limit {
		return s.errs.classify(op, err, b.failed)
	}
	if serr := p.Sleep(ctx, jitter(ceil)); serr != nil {
		return fmt.Errorf("%s: %w (while retrying after: %v)", op, serr, err)
	}
	return nil
}
