package model

import (
	"testing"
	"time"
)

// TestAge: one compact unit, whole units counted, the TUI's steps (seconds, minutes, hours
// under two days, days).
func TestAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                                     "0s",
		45 * time.Second:                      "45s",
		59*time.Second + 999*time.Millisecond: "59s",
		time.Minute:                           "1m",
		30 * time.Minute:                      "30m",
		time.Hour:                             "1h",
		99 * time.Minute:                      "1h",
		-99 * time.Minute:                     "1h",
		47*time.Hour + 59*time.Minute:         "47h",
		48 * time.Hour:                        "2d",
		51 * time.Hour:                        "2d",
		400 * 24 * time.Hour:                  "400d",
	} {
		if got := Age(d); got != want {
			t.Errorf("Age(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestShortDuration: exact, compact, and read back by time.ParseDuration as the same duration.
func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                          "0s",
		45 * time.Second:           "45s",
		90 * time.Second:           "1m30s",
		30 * time.Minute:           "30m",
		90 * time.Minute:           "1h30m",
		2 * time.Hour:              "2h",
		72 * time.Hour:             "72h",
		time.Hour + 30*time.Second: "1h0m30s",
		1500 * time.Millisecond:    "1.5s",
	} {
		got := ShortDuration(d)
		if got != want {
			t.Errorf("ShortDuration(%v) = %q, want %q", d, got, want)
		}
		if back, err := time.ParseDuration(got); err != nil || back != d {
			t.Errorf("ShortDuration(%v) = %q reads back as %v, %v", d, got, back, err)
		}
	}
}
