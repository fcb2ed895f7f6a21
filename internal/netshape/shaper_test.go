package netshape

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"
)

// A chunk arrives after its serialisation at the link's rate and the one-way latency, and
// waits for the chunks before it: 50 Mbit/s is 6.25 MB/s, so 62,500 bytes take 10 ms.
func TestSchedule(t *testing.T) {
	t0 := time.Unix(0, 0)
	rate := 50e6 / 8
	at, free := schedule(t0, time.Time{}, 62_500, rate, 40*time.Millisecond)
	if free != t0.Add(10*time.Millisecond) || at != t0.Add(50*time.Millisecond) {
		t.Fatalf("first chunk: at %v free %v", at.Sub(t0), free.Sub(t0))
	}
	// Read 1 ms later, it queues behind the first.
	at, free = schedule(t0.Add(time.Millisecond), free, 62_500, rate, 40*time.Millisecond)
	if free != t0.Add(20*time.Millisecond) || at != t0.Add(60*time.Millisecond) {
		t.Fatalf("second chunk: at %v free %v", at.Sub(t0), free.Sub(t0))
	}
	// After the link went idle, only the latency and its own size count.
	at, _ = schedule(t0.Add(time.Second), free, 625, rate, 40*time.Millisecond)
	if at != t0.Add(time.Second+100*time.Microsecond+40*time.Millisecond) {
		t.Fatalf("idle link: at %v", at.Sub(t0))
	}
	// Unlimited: latency alone.
	if at, _ := schedule(t0, time.Time{}, 1<<20, 0, 0); at != t0 {
		t.Fatalf("unshaped: %v", at.Sub(t0))
	}
}

// The proxy carries both directions byte for byte (unshaped here: the shaping is schedule's)
// and counts them.
func TestShaperCarriesAndCounts(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		c, err := echo.Accept()
		if err != nil {
			return
		}
		_, _ = io.Copy(c, c)
		c.Close()
	}()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s := &Shaper{}
	go func() { _ = s.Serve(l, echo.Addr().String()) }()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	msg := bytes.Repeat([]byte("triage "), 100_000)
	go func() {
		_, _ = c.Write(msg)
		_ = c.(*net.TCPConn).CloseWrite()
	}()
	got, err := io.ReadAll(c)
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("echo through the proxy: %d bytes, %v", len(got), err)
	}
	c.Close()
	if up, down := s.Bytes(); up != int64(len(msg)) || down != int64(len(msg)) {
		t.Errorf("counted %d up, %d down; want %d each", up, down, len(msg))
	}
}

// A round trip is a client speaking again after it heard the server: three exchanges on one
// connection are three.
func TestShaperCountsRoundTrips(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		c, err := echo.Accept()
		if err != nil {
			return
		}
		_, _ = io.Copy(c, c)
		c.Close()
	}()
	s := &Shaper{}
	addr, stop, err := Start(s, echo.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 3 {
		msg := []byte("ping")
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(c, got); err != nil {
			t.Fatal(err)
		}
		if n := s.RoundTrips(); n != int64(i+1) {
			t.Fatalf("after %d exchanges: %d round trips", i+1, n)
		}
	}
}
