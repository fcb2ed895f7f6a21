package tui

import (
	"testing"
)

// `/` reopens on the filter shown with a space after it: what is typed is one more term, so
// `status:new` then `"call me"` filters by both, where it was glued into status:new"call me".
func TestFilterReopensReadyForAnotherTerm(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 100, 30)
	keys(m, "/")
	typeText(m, "status:new")
	keys(m, "enter")
	if got := m.tabs.current().filter.query; got != "status:new" {
		t.Fatalf("filter %q", got)
	}
	keys(m, "/")
	if got := m.prompt.input.Value(); got != "status:new " {
		t.Errorf("the prompt reopens on %q, want the filter and a space", got)
	}
	typeText(m, `"call me"`)
	keys(m, "enter")
	if got := m.tabs.current().filter.query; got != `status:new "call me"` {
		t.Errorf("filter %q, want both terms", got)
	}
	// Reopened and kept as it is, the filter is unchanged (no trailing space kept).
	keys(m, "/", "enter")
	if got := m.tabs.current().filter.query; got != `status:new "call me"` {
		t.Errorf("reopened and kept: filter %q", got)
	}
}
