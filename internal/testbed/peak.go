package testbed

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
)

// Peak is an HTTP handler that measures how many requests are in flight at once. Each
// request is held until want of them are in flight together (or Wait has passed since
// NewPeak, when they never are), then passed to the next handler: a client that fills its
// concurrency bound reaches want; one that doesn't still finishes.
type Peak struct {
	want     int
	next     http.Handler
	reached  chan struct{}
	once     sync.Once
	giveUp   context.Context
	inFlight atomic.Int32
	peak     atomic.Int32
}

// NewPeak holds requests for next until want are in flight; cancel releases it.
func NewPeak(want int, next http.Handler) (p *Peak, cancel func()) {
	ctx, cancel := context.WithTimeout(context.Background(), Wait)
	return &Peak{want: want, next: next, reached: make(chan struct{}), giveUp: ctx}, cancel
}

func (p *Peak) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer p.inFlight.Add(-1)
	n := p.inFlight.Add(1)
	for old := p.peak.Load(); n > old && !p.peak.CompareAndSwap(old, n); old = p.peak.Load() {
	}
	if int(n) >= p.want {
		p.once.Do(func() { close(p.reached) })
	}
	select {
	case <-p.reached:
	case <-p.giveUp.Done():
	}
	p.next.ServeHTTP(w, r)
}

// Max is the most requests that were in flight at once.
func (p *Peak) Max() int { return int(p.peak.Load()) }

// Reached reports whether want requests were ever in flight together.
func (p *Peak) Reached() bool {
	select {
	case <-p.reached:
		return true
	default:
		return false
	}
}
