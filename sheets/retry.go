package sheets

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// RetryPolicy bounds the retries of one Sheets API call. The store retries 429, 5xx and
// network errors (never another 4xx) with full jitter: before attempt n+1 it waits
// uniform(0, min(Cap, Base·2^(n-1))). The zero value means 5 attempts, base 500ms, cap 10s.
type RetryPolicy struct {
	// MaxAttempts is the number of sends, the first included (default 5; 1 = no retry).
	MaxAttempts int
	// Base is the first backoff ceiling (default 500ms).
	Base time.Duration
	// Cap bounds every backoff (default 10s).
	Cap time.Duration
	// Sleep waits d or until ctx is done (default: a timer). Tests pass a fake.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Default retry settings.
const (
	DefaultMaxAttempts = 5
	DefaultRetryBase   = 500 * time.Millisecond
	DefaultRetryCap    = 10 * time.Second
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
		p.Sleep = sleepCtx
	}
	return p
}

// Backoff returns the ceiling of the wait before attempt n+1 (n ≥ 1 failed attempts):
// min(Cap, Base·2^(n-1)). The actual wait is uniform in [0, Backoff(n)].
func (p RetryPolicy) Backoff(n int) time.Duration {
	p = p.withDefaults()
	if n < 1 {
		n = 1
	}
	d := p.Base
	for i := 1; i < n; i++ {
		if d >= p.Cap/2 {
			return p.Cap
		}
		d *= 2
	}
	if d > p.Cap {
		d = p.Cap
	}
	return d
}

func (p RetryPolicy) jitter(n int) time.Duration {
	ceil := p.Backoff(n)
	if ceil <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(ceil) + 1))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// call is the one helper every Sheets API request goes through: it sends fn, retries what
// is retryable within the policy, and turns the final error into the user-facing one.
func (s *Store) call(ctx context.Context, op string, fn func(ctx context.Context) error) error {
	p := s.retry
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		err := fn(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w (%v)", op, ctx.Err(), err)
		}
		if !retryable(err) || attempt >= p.MaxAttempts {
			return s.errs.classify(op, err, attempt)
		}
		if serr := p.Sleep(ctx, p.jitter(attempt)); serr != nil {
			return fmt.Errorf("%s: %w (while retrying after: %v)", op, serr, err)
		}
	}
}
