package config

import (
	"testing"
	"time"
)

// [quota]'s problems are reported on their lines; good values are read as the runtime uses
// them.
func TestQuotaSection(t *testing.T) {
	_, probs := Parse([]byte("[quota]\nper_minute = -5\nbudget = \"forever\"\n"))
	wantProblems(t, probs, true,
		lineProblem{2, "quota.per_minute is -5"},
		lineProblem{3, `quota.budget "forever" is not a duration from 1s to 1h0m0s`})
	c, probs := Parse([]byte("[quota]\nper_minute = 300\nbudget = \"5m\"\n"))
	if len(probs) != 0 || c.Quota.PerMinute != 300 || c.Quota.BudgetDuration() != 5*time.Minute {
		t.Fatalf("problems %v, quota %+v", probs, c.Quota)
	}
	if d := (QuotaSection{}).BudgetDuration(); d != 0 {
		t.Errorf("an unset budget reads %v, want 0 (the default)", d)
	}
}

// full_refresh is a duration of a second or more; unset, the store's default applies.
func TestFullRefresh(t *testing.T) {
	_, probs := Parse([]byte("full_refresh = \"0.5s\"\n"))
	wantProblems(t, probs, true, lineProblem{1, `full_refresh "0.5s" is not a duration of a second or more`})
	c, probs := Parse([]byte("full_refresh = \"10m\"\n"))
	if len(probs) != 0 || c.FullRefreshInterval() != 10*time.Minute {
		t.Fatalf("problems %v, %v", probs, c.FullRefreshInterval())
	}
	if d := (&Config{}).FullRefreshInterval(); d != 0 {
		t.Errorf("unset: %v", d)
	}
}
