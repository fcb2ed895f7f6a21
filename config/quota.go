package config

import (
	"fmt"
	"time"
)

// QuotaSection is `[quota]`: how triage stays under the Google Sheets API's per-minute quota
// and how long a command waits when it is reached anyway.
//
//	[quota]
//	per_minute = 60   # reads, and apart writes, a minute to stay under (Google's default per user)
//	budget = "2m"     # the most one command waits on quota answers (429) before it fails
//
// Against an emulator nothing is paced unless per_minute is set.
type QuotaSection struct {
	PerMinute int    `toml:"per_minute"`
	Budget    string `toml:"budget"`
}

// MaxQuotaBudget is the longest budget accepted: a command waiting longer looks hung.
const MaxQuotaBudget = time.Hour

// BudgetDuration is the budget as the runtime reads it (0: the default).
func (q QuotaSection) BudgetDuration() time.Duration {
	d, err := positiveDuration(q.Budget)
	if err != nil || d > MaxQuotaBudget {
		return 0
	}
	return d
}

// checkQuota returns every problem of `[quota]`, each with its key (Parse adds the line).
func (c *Config) checkQuota() []Problem {
	var probs []Problem
	add := func(key, format string, a ...any) {
		probs = append(probs, Problem{Key: "quota." + key, Line: c.lines.lineOf("quota." + key), Msg: fmt.Sprintf(format, a...)})
	}
	if q := c.Quota.PerMinute; q < 0 || q > 100_000 {
		add("per_minute", "quota.per_minute is %d: give the requests a minute your quota allows (Google's default is 60 per user), from 1", q)
	}
	if b := c.Quota.Budget; b != "" {
		if d, err := positiveDuration(b); err != nil || d > MaxQuotaBudget {
			add("budget", "quota.budget %q is not a duration from 1s to %s (e.g. \"2m\")", b, MaxQuotaBudget)
		}
	}
	return probs
}
