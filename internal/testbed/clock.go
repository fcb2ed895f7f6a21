package testbed

import (
	"context"
	"sync"
	"time"
)

// Clock is a fake clock a test shares between a client and a server (the Sheets quota
// pacer and the emulator's quota minutes, a store and Drive's lagging version): Sleep moves
// it on at once, so a minute of waiting passes without the test waiting for it.
type Clock struct {
	mu    sync.Mutex
	t     time.Time
	slept time.Duration
}

// NewClock is a clock at a fixed instant.
func NewClock() *Clock { return &Clock{t: time.Date(2026, 3, 2, 4, 0, 0, 0, time.UTC)} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Sleep moves the clock on by d at once (the sleeper's wait), unless ctx is done.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.slept += d
	c.mu.Unlock()
	return ctx.Err()
}

// Add moves the clock on by d, as time passing outside any sleep.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Slept is how long every Sleep waited in all.
func (c *Clock) Slept() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slept
}
