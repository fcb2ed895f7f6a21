package backoff

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"
)

func TestCeil(t *testing.T) {
	cases := []struct{ base, capD time.Duration }{
		{500 * time.Millisecond, 10 * time.Second},
		{time.Second, 30 * time.Second},
		{time.Hour, time.Minute}, // base beyond cap: every ceiling is the cap
	}
	for _, tc := range cases {
		for n := 0; n <= 70; n++ {
			want := time.Duration(math.Min(float64(tc.capD), float64(tc.base)*math.Pow(2, float64(max(n, 1)-1))))
			if got := Ceil(n, tc.base, tc.capD); got != want {
				t.Fatalf("Ceil(%d, %v, %v) = %v, want %v", n, tc.base, tc.capD, got, want)
			}
		}
	}
	if got := Ceil(100, time.Second, math.MaxInt64); got <= 0 {
		t.Errorf("Ceil overflowed: %v", got)
	}
	if got := Ceil(3, 0, time.Second); got != time.Second {
		t.Errorf("zero base: %v, want the cap", got)
	}
}

func TestFullJitter(t *testing.T) {
	ceil := 8 * time.Second
	for u, want := range map[float64]time.Duration{0: 0, 0.5: 4 * time.Second, 1: ceil, -1: 0, 2: ceil, math.NaN(): 0} {
		if got := FullJitter(ceil, u); got != want {
			t.Errorf("FullJitter(%v, %v) = %v, want %v", ceil, u, got, want)
		}
	}
	if FullJitter(0, 0.5) != 0 || FullJitter(-time.Second, 0.5) != 0 {
		t.Error("a non-positive ceiling must give no wait")
	}
}

func TestSleepStopsAtCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep = %v, want context.Canceled", err)
	}
	if time.Since(start) > time.Second {
		t.Error("Sleep ignored the cancel")
	}
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Errorf("Sleep = %v", err)
	}
}
