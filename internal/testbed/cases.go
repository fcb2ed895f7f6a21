package testbed

import (
	"os"
	"strconv"
	"testing"
)

// CaseCount is how many cases a randomised test runs: full, or short under -short, or the
// positive number in the environment variable env when it is set (env "" reads none).
func CaseCount(full, short int, env string) int {
	if env != "" {
		if n, err := strconv.Atoi(os.Getenv(env)); err == nil && n > 0 {
			return n
		}
	}
	if testing.Short() {
		return short
	}
	return full
}

// Exercised fails the test for each of want that no case counted: a randomised test that
// never met a situation proves nothing about it. Under -short, too few cases run to promise
// that, and it checks nothing.
func Exercised(t testing.TB, counts map[string]int, want ...string) {
	t.Helper()
	if testing.Short() {
		return
	}
	for _, k := range want {
		if counts[k] == 0 {
			t.Errorf("no case exercised %q", k)
		}
	}
}
