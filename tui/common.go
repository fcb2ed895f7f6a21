package tui

import (
	"time"
)

// common is the context every component shares: styles, keys, the terminal size and the
// session's settings. It is passed by pointer, never global, so two models (tests run many)
// never see each other's state.
type common struct {
	styles   *Styles
	keys     *KeyMap
	width    int
	height   int
	now      func() time.Time
	readOnly bool
	noColor  bool
	dark     bool
	banner   string
}

// setBackground rebuilds the styles for a light or dark terminal.
func (c *common) setBackground(dark bool) {
	c.dark = dark
	c.styles = NewStyles(dark, c.noColor)
}
