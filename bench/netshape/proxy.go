package main

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

	up, down atomic.Int64 // bytes client → server, server → client
	conns    sync.WaitGroup
}

// Bytes returns the bytes carried so far: up (client to server) and down.
func (s *Shaper) Bytes() (up, down int64) { return s.up.Load(), s.down.Load() }

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
	u, err := net.Dial("tcp", upstream)
	if err != nil {
		return
	}
	defer u.Close()
	var wg sync.WaitGroup
	wg.Go(func() { s.pipe(u, c, &s.up); closeWrite(u) })
	wg.Go(func() { s.pipe(c, u, &s.down); closeWrite(c) })
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

// pipe carries src to dst through the shaped link, counting bytes in n.
func (s *Shaper) pipe(dst io.Writer, src io.Reader, n *atomic.Int64) {
	q := make(chan chunk, 4096)
	go func() {
		defer close(q)
		var free time.Time // when the link is done sending what it was given
		for {
			buf := make([]byte, 32<<10)
			k, err := src.Read(buf)
			if k > 0 {
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
