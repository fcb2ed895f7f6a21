package testbed

import (
	"iter"
	"math/rand/v2"
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

// Seeds yields a randomised test's cases, seeds 0 to n-1, each with its generator
// (PCG(seed, stream): the stream is the test's own); when the environment variable seedEnv
// is set, only that seed, to reproduce one case.
func Seeds(t testing.TB, n int, stream uint64, seedEnv string) iter.Seq2[int, *rand.Rand] {
	t.Helper()
	seeds := make([]int, n)
	for i := range seeds {
		seeds[i] = i
	}
	if only := os.Getenv(seedEnv); seedEnv != "" && only != "" {
		s, err := strconv.Atoi(only)
		if err != nil {
			t.Fatalf("%s=%q: %v", seedEnv, only, err)
		}
		seeds = []int{s}
	}
	return func(yield func(int, *rand.Rand) bool) {
		for _, s := range seeds {
			if !yield(s, rand.New(rand.NewPCG(uint64(s), stream))) {
				return
			}
		}
	}
}
