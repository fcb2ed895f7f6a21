package emulator

import (
	"testing"
	"time"
)

func TestPoll(t *testing.T) {
	n := 0
	if !Poll(time.Second, func() bool { n++; return n == 3 }) || n != 3 {
		t.Fatalf("Poll stopped after %d checks, want 3", n)
	}
	start := time.Now()
	if Poll(30*time.Millisecond, func() bool { return false }) {
		t.Fatal("Poll reported a condition that never held")
	}
	if d := time.Since(start); d < 30*time.Millisecond || d > 30*time.Second {
		t.Errorf("Poll gave up after %v, want ~30ms", d)
	}
}
