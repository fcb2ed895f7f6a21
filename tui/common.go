package tui

import (
	"strings"
	"time"

	"github.com/triage-dev/triage/model"
)

// common is the context every component shares: styles, keys, the terminal size and the
// session's settings. It is passed by pointer, never global, so two models (tests run many)
// never see each other's state.
type common struct {
	styles   *Styles
	keys     *KeyMap
	width    int
	height   int
	bodyH    int // the body's height (between header and footer), for dialogs that scroll
	now      func() time.Time
	readOnly bool
	// role is the person's role over triage serve ("" on one's own machine) and remote marks
	// a session served over SSH: with readOnly they decide what is offered (offers).
	role   model.Access
	remote bool
	// user and identity are Options.User and Options.Identity, for naming the person in a
	// refusal (roleRefusal).
	user, identity string
	noColor        bool // Options.NoColor
	// No styling for another reason: the environment (TERM=dumb, NO_COLOR in tea.EnvMsg) or a
	// color profile without colors (where the cursor row would be invisible without markers).
	envPlain, profilePlain bool
	ascii                  bool // TERM=dumb: ASCII borders and glyphs
	dark                   bool
	banner                 string
	term                   termInfo
	readOnlyWhy            string // Options.ReadOnlyWhy (readOnlyNote)
	editor                 string // $VISUAL or $EDITOR from the program's environment (edit.go)
}

// setBackground rebuilds the styles for a light or dark terminal.
func (c *common) setBackground(dark bool) {
	c.dark = dark
	c.restyle()
}

// restyle rebuilds the styles from the current settings.
func (c *common) restyle() {
	c.styles = newStylesFor(c.dark, c.noColor || c.envPlain || c.profilePlain, c.ascii)
}

// termInfo is what the environment says about the terminal (tea.EnvMsg): it decides how the
// clipboard sequence is wrapped and whether the screen is drawn in plain ASCII.
type termInfo struct {
	term string // $TERM
	tmux bool   // $TMUX is set: inside tmux, whatever TERM says
}

// screen reports whether the terminal is GNU screen (not tmux, which also sets TERM=screen*).
func (t termInfo) screen() bool { return !t.tmux && strings.HasPrefix(t.term, "screen") }

// dumb reports whether the terminal claims no capabilities at all.
func (t termInfo) dumb() bool { return t.term == "dumb" }

// memo is one cached rendering and the key it was rendered for.
type memo struct {
	key  string
	text string
}

// get returns the cached text for key, rendering it on a miss.
func (c *memo) get(key string, render func() string) string {
	if c.key != key || c.text == "" {
		c.key, c.text = key, render()
	}
	return c.text
}
