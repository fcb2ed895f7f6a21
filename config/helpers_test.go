package config

import (
	"strings"
	"testing"
)

// lineProblem is a problem a test expects: on its line, saying frag.
type lineProblem struct {
	line int
	frag string
}

// hasProblem reports whether probs holds a problem on line whose message says frag (an
// error, not a warning, when errorsOnly).
func hasProblem(probs []Problem, line int, frag string, errorsOnly bool) bool {
	for _, p := range probs {
		if p.Line == line && strings.Contains(p.Msg, frag) && !(errorsOnly && p.Warning) {
			return true
		}
	}
	return false
}

// wantProblems fails for each expected problem that probs lacks and, when exact, if probs
// holds any other.
func wantProblems(t *testing.T, probs []Problem, exact bool, want ...lineProblem) {
	t.Helper()
	for _, w := range want {
		if !hasProblem(probs, w.line, w.frag, false) {
			t.Errorf("no problem on line %d saying %q; got %v", w.line, w.frag, probs)
		}
	}
	if exact && len(probs) != len(want) {
		t.Errorf("%d problems, want %d: %v", len(probs), len(want), probs)
	}
}
