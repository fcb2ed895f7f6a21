package model

import (
	"fmt"
	"strings"
	"time"
)

// Age says how long ago (or how far ahead) something is in one compact unit, as a person
// glancing at a list reads it: "45s", "12m", "3h", "6d". It counts whole units (1h59m is
// "1h"), seconds under a minute, minutes under an hour, hours under two days, then days; the
// direction is the caller's to say ("… ago", "in …"), so a negative d reads as its size.
// These are the steps the TUI's table ages take, so a time reads the same in the TUI and
// the CLI.
func Age(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int64(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int64(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int64(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int64(d/(24*time.Hour)))
}

// ShortDuration writes a duration someone chose (a threshold such as stale_after or
// --older-than) compactly and exactly, as Go's duration flags read it back: "30m", "1h30m",
// "2h", "45s". Unlike Age it drops nothing but zero trailing units.
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
