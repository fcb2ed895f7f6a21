package testbed

import (
	"sync/atomic"
	"testing"
	"time"
)

// ByteCounter counts what a writer is sent (a renderer's terminal, an SSH session's
// channel) and signals each write, so a benchmark can measure the bytes one keypress costs.
type ByteCounter struct {
	n      atomic.Int64
	writes chan struct{}
}

// NewByteCounter is a counter at zero.
func NewByteCounter() *ByteCounter { return &ByteCounter{writes: make(chan struct{}, 1)} }

// Write counts p.
func (w *ByteCounter) Write(p []byte) (int, error) {
	w.n.Add(int64(len(p)))
	select {
	case w.writes <- struct{}{}:
	default:
	}
	return len(p), nil
}

// N is the number of bytes written so far.
func (w *ByteCounter) N() int64 { return w.n.Load() }

// Settle waits for a write after an event (failing tb if none comes before its context ends),
// then for the writer to go quiet: quiet periods of the given length with no write (a
// benchmark's measure of when a frame is done, not a test's outcome).
func (w *ByteCounter) Settle(tb testing.TB, quiet time.Duration) {
	tb.Helper()
	select {
	case <-w.writes:
	case <-tb.Context().Done():
		tb.Fatal("nothing was written")
	}
	for {
		select {
		case <-w.writes:
		case <-time.After(quiet):
			return
		}
	}
}

// BytesPerMove reports the bytes/move metric: after the first screen and three moves down
// (each followed by Settle), b.N cursor moves, j and k by turns, each sent by press and
// followed by Settle; the bytes counted during those moves, per move.
func (w *ByteCounter) BytesPerMove(b *testing.B, quiet time.Duration, press func(key string)) {
	b.Helper()
	w.Settle(b, quiet) // the first screen
	for range 3 {
		press("j")
		w.Settle(b, quiet)
	}
	start := w.N()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := "j"
		if i%2 == 1 {
			k = "k"
		}
		press(k)
		w.Settle(b, quiet)
	}
	b.StopTimer()
	b.ReportMetric(float64(w.N()-start)/float64(b.N), "bytes/move")
}
