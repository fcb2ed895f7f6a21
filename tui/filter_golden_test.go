package tui

import "testing"

// TestGoldenMatrixFilter draws the filter prompt: empty on each tab (its own example as the
// placeholder), and with an unknown field, whose note in the status bar lists the tab's
// fields.
func TestGoldenMatrixFilter(t *testing.T) {
	for _, c := range []struct{ view, tab, query string }{
		{"filter_inbox", "1", ""},
		{"filter_deadletter", "2", ""},
		{"filter_queue", "3", ""},
		{"filter_unknown_field", "1", "is:new"},
	} {
		goldenMatrix(t, c.view, nil, func(t *testing.T, m *Model) {
			keys(m, c.tab, "/")
			typeText(m, c.query)
		})
	}
}
