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
	mu        sync.Mutex
	max       int
	window    time.Duration
	now       func() time.Time
	addrs     map[string]*failures
	lastSweep time.Time
}

// maxTracked bounds the addresses the limiter remembers: a scan from many addresses costs at
// most this many entries, and each refused key O(1) amortised (a sweep at most once a second,
// then one eviction), never a walk of the whole map under the lock every login waits on.
const maxTracked = 10000

type failures struct {
	start time.Time
	n     int
}

func newAuthLimiter(max int, window time.Duration, now func() time.Time) *authLimiter {
	return &authLimiter{max: max, window: window, now: now, addrs: map[string]*failures{}}
}

// host is what failures are counted by: the address without its port, and for IPv6 its /64
// (one host holds a whole /64 and could otherwise get max guesses from each of its 2^64
// addresses).
func host(a net.Addr) string {
	if a == nil {
		return ""
	}
	h, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	if ip := net.ParseIP(h); ip != nil && ip.To4() == nil {
		return (&net.IPNet{IP: ip.Mask(net.CIDRMask(64, 128)), Mask: net.CIDRMask(64, 128)}).String()
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
		if len(l.addrs) >= maxTracked && !l.makeRoom() {
			return false // every remembered address is refused already: this one isn't counted
		}
		f = &failures{start: l.now()}
		l.addrs[addr] = f
	}
	f.n++
	return f.n == l.max
}

// makeRoom frees one entry when the limiter is full: ended windows first (a sweep, at most
// once a second), else one address that is not refused yet. false when every entry is a
// refused address (they stay refused until their window ends).
func (l *authLimiter) makeRoom() bool {
	if now := l.now(); now.Sub(l.lastSweep) >= time.Second {
		l.lastSweep = now
		l.sweep()
		if len(l.addrs) < maxTracked {
			return true
		}
	}
	for a, f := range l.addrs {
		if f.n < l.max {
			delete(l.addrs, a)
			return true
		}
	}
	return false
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
