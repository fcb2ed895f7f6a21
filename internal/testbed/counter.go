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

// Settle waits for a write after an event (failing tb if none comes within Wait), then for
// the writer to go quiet: quiet periods of the given length with no write.
func (w *ByteCounter) Settle(tb testing.TB, quiet time.Duration) {
	tb.Helper()
	select {
	case <-w.writes:
	case <-time.After(Wait):
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
