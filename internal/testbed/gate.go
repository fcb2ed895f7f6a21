package testbed

import (
	"net/http"
	"sync"
)

// Gate holds HTTP requests before they reach a handler until released (all, or n at a time
// with Let): a test sees calls in flight for as long as it needs, instead of racing a latency.
type Gate struct {
	mu     sync.Mutex
	held   chan struct{} // nil: open
	in     chan struct{}
	tokens chan struct{}
}

// NewGate is an open gate.
func NewGate() *Gate {
	return &Gate{in: make(chan struct{}, 16), tokens: make(chan struct{}, 16)}
}

// Arrived is signalled (without blocking: up to 16 are kept) by each call reaching the gate.
func (g *Gate) Arrived() <-chan struct{} { return g.in }

// Hold shuts the gate: calls arriving from now on wait.
func (g *Gate) Hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held == nil {
		g.held = make(chan struct{})
	}
}

// Release opens the gate and lets every held call through.
func (g *Gate) Release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held != nil {
		close(g.held)
		g.held = nil
	}
}

// Let lets n held calls through; the gate stays shut for the rest.
func (g *Gate) Let(n int) {
	for range n {
		g.tokens <- struct{}{}
	}
}

// Wrap puts the gate in front of h.
func (g *Gate) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		held := g.held
		g.mu.Unlock()
		select {
		case g.in <- struct{}{}:
		default:
		}
		if held != nil {
			select {
			case <-held:
			case <-g.tokens:
			case <-r.Context().Done():
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}
