package tui

import "testing"

// TestGoldenMatrix holds every screen, each at every size and terminal.
func TestGoldenMatrix(t *testing.T) {
	t.Run("inbox", func(t *testing.T) {
		goldenMatrix(t, "inbox", nil, func(t *testing.T, m *Model) { keys(m, "j", "space", "k") })
	})
}
