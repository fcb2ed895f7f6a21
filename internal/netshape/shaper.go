// Package netshape is a TCP proxy that makes loopback look like a real network: a round trip
// added to every exchange, a bandwidth, and a count of the bytes and of the round trips a
// client waited for. Benchmarks measure a store or a client through it (a database write-back
// at 2 ms or 20 ms round trips, triage against Google's Node client), and tests count the
// round trips a command costs.
package netshape

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Shaper is a TCP proxy that makes loopback look like a real network: every chunk is held for
// half the round-trip time in each direction, and each direction is a link of Rate bytes per
// second (a chunk waits for the one before it to finish "sending"). It counts the bytes it
// carries each way.
type Shaper struct {
	// RTT is the round-trip time added (half each way); 0 adds none.
	RTT time.Duration
	// Rate is each direction's bandwidth in bytes per second; 0 is unlimited.
	Rate float64
	// Dial, when set, connects to the upstream instead of TCP to Serve's address (a server
	// on a Unix socket).
	Dial func() (net.Conn, error)

	up, down atomic.Int64 // bytes client → server, server → client
	turns    atomic.Int64 // round trips: a client's sending after it heard the server (or first)
	conns    sync.WaitGroup
}

// Bytes returns the bytes carried so far: up (client to server) and down.
func (s *Shaper) Bytes() (up, down int64) { return s.up.Load(), s.down.Load() }

// RoundTrips returns how many times a client spoke after it had heard from the server (or
// for the first time on a connection), summed over every connection: the round trips it
// waited for, which is what a network's latency multiplies. A pipelined batch is one.
func (s *Shaper) RoundTrips() int64 { return s.turns.Load() }

// Start serves a shaper on a loopback port in front of upstream (host:port) until the
// returned stop is called, and returns the address to dial.
func Start(s *Shaper, upstream string) (addr string, stop func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Serve(l, upstream)
	}()
	return l.Addr().String(), func() { l.Close(); <-done }, nil
}

// Serve accepts on l and connects each client to upstream, until l is closed.
func (s *Shaper) Serve(l net.Listener, upstream string) error {
	for {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		s.conns.Go(func() { s.handle(c, upstream) })
	}
}

func (s *Shaper) handle(c net.Conn, upstream string) {
	defer c.Close()
	dial := s.Dial
	if dial == nil {
		dial = func() (net.Conn, error) { return net.Dial("tcp", upstream) }
	}
	u, err := dial()
	if err != nil {
		return
	}
	defer u.Close()
	var wg sync.WaitGroup
	var last atomic.Int32 // the direction that spoke last: 0 none, 1 up, 2 down
	wg.Go(func() {
		s.pipe(u, c, &s.up, func() {
			if last.Swap(1) != 1 {
				s.turns.Add(1)
			}
		})
		closeWrite(u)
	})
	wg.Go(func() { s.pipe(c, u, &s.down, func() { last.Store(2) }); closeWrite(c) })
	wg.Wait()
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}

// chunk is bytes in flight and when they arrive at the other end.
type chunk struct {
	b  []byte
	at time.Time
}

// pipe carries src to dst through the shaped link, counting bytes in n; heard is called as
// each chunk is read, before it is delayed.
func (s *Shaper) pipe(dst io.Writer, src io.Reader, n *atomic.Int64, heard func()) {
	q := make(chan chunk, 4096)
	go func() {
		defer close(q)
		var free time.Time // when the link is done sending what it was given
		for {
			buf := make([]byte, 32<<10)
			k, err := src.Read(buf)
			if k > 0 {
				heard()
				var at time.Time
				at, free = schedule(time.Now(), free, k, s.Rate, s.RTT/2)
				q <- chunk{b: buf[:k], at: at}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		if d := time.Until(c.at); d > 0 {
			time.Sleep(d)
		}
		if _, err := dst.Write(c.b); err != nil {
			for range q { // drain so the reader ends
			}
			return
		}
		n.Add(int64(len(c.b)))
	}
}

// schedule is when n bytes read at now arrive at the far end of a link of rate bytes per
// second (0: unlimited) and oneWay latency, the link being busy until free; it returns that
// time and when the link is free again.
func schedule(now, free time.Time, n int, rate float64, oneWay time.Duration) (at, nextFree time.Time) {
	start := now
	if free.After(start) {
		start = free
	}
	nextFree = start
	if rate > 0 {
		nextFree = start.Add(time.Duration(float64(n) / rate * float64(time.Second)))
	}
	return nextFree.Add(oneWay), nextFree
}
