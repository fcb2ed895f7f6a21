// Package backoff is the retry arithmetic shared by the Sheets store, the PostgreSQL store and
// the replay client: one full-jitter schedule, written once. Pure, apart from Sleep's timer.
package backoff

import (
	"context"
	"time"
)

// Ceil is the ceiling of the full-jitter wait before attempt n+1 after n failed
// attempts: min(capD, base·2^(n-1)), without overflow. n < 1 counts as 1; a non-positive
// base gives capD.
func Ceil(n int, base, capD time.Duration) time.Duration {
	d := base
	for i := 1; i < n && d > 0 && d < capD; i++ {
		d *= 2
	}
	if d > capD || d <= 0 {
		return capD
	}
	return d
}

// FullJitter is the wait drawn from [0, ceil] by u, a number uniform in [0, 1) (a u outside
// [0, 1] is clamped): uniform over the whole band, the "full jitter" of exponential backoff.
func FullJitter(ceil time.Duration, u float64) time.Duration {
	if ceil <= 0 || u <= 0 || u != u {
		return 0
	}
	if u >= 1 {
		return ceil
	}
	return time.Duration(u * float64(ceil))
}

// Sleep waits d or until ctx is done, whichever comes first, and returns ctx.Err() if ctx
// ended the wait (or was already done when d ≤ 0).
func Sleep(ctx context.Context, d time.Duration) error {
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
