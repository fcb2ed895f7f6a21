package serve

import (
	"net"
	"sync"
	"time"
)

// authLimiter counts refused keys per remote address. After max of them within window
// (counted from the first), the address is refused outright until the window ends: a
// client guessing keys gets max guesses per window. A session that gets in clears its
// address's count, so a person whose agent offers other keys first isn't locked out. Only
// a completed login clears it: a key that passes the public-key query but then can't sign
// (anyone can offer alice's public key) clears nothing.
type authLimiter struct {
	mu     sync.Mutex
	max    int
	window time.Duration
	now    func() time.Time
	addrs  map[string]*failures
}

type failures struct {
	start time.Time
	n     int
}

func newAuthLimiter(max int, window time.Duration, now func() time.Time) *authLimiter {
	return &authLimiter{max: max, window: window, now: now, addrs: map[string]*failures{}}
}

// host is the address part of a remote address: the count is per address, not per port.
func host(a net.Addr) string {
	if a == nil {
		return ""
	}
	h, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return h
}

// current is addr's count in its window, nil when none (an ended window is dropped).
func (l *authLimiter) current(addr string) *failures {
	f := l.addrs[addr]
	if f != nil && l.now().Sub(f.start) >= l.window {
		delete(l.addrs, addr)
		return nil
	}
	return f
}

// blocked reports whether addr is refused, and until when.
func (l *authLimiter) blocked(addr string) (bool, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.current(addr)
	if f == nil || f.n < l.max {
		return false, time.Time{}
	}
	return true, f.start.Add(l.window)
}

// fail counts a refused key from addr and reports whether this one reached the limit.
func (l *authLimiter) fail(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.current(addr)
	if f == nil {
		if len(l.addrs) > 10000 {
			l.sweep()
		}
		f = &failures{start: l.now()}
		l.addrs[addr] = f
	}
	f.n++
	return f.n == l.max
}

// reset clears addr's count (a login from it succeeded).
func (l *authLimiter) reset(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.addrs, addr)
}

// sweep drops ended windows, so a scan from many addresses doesn't grow the map forever.
func (l *authLimiter) sweep() {
	for a := range l.addrs {
		l.current(a)
	}
}
