package tui

import (
	"fmt"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
)

// KeyMap holds every rebindable key of the TUI, grouped by area. Dialog-local keys (y/n in a
// confirm, enter in a picker, typing into the filter) are not here: they mean the same thing
// everywhere and rebinding them would make dialogs unanswerable.
type KeyMap struct {
	// Navigation within the table (and the detail view, the help and the picker).
	Up       key.Binding
	Down     key.Binding
	Top      key.Binding
	Bottom   key.Binding
	HalfDown key.Binding
	HalfUp   key.Binding
	PageDown key.Binding
	PageUp   key.Binding

	// Tabs.
	NextTab key.Binding
	PrevTab key.Binding
	Tab1    key.Binding
	Tab2    key.Binding
	Tab3    key.Binding

	// Views.
	Detail  key.Binding
	Preview key.Binding
	Filter  key.Binding
	Clear   key.Binding

	// Selection.
	Mark      key.Binding
	MarkAll   key.Binding
	UnmarkAll key.Binding

	// Actions that change the sheet (or the clipboard).
	SetStatus  key.Binding
	ClearError key.Binding
	Replay     key.Binding
	Copy       key.Binding
	Undo       key.Binding

	// Application.
	Refresh key.Binding
	Help    key.Binding
	Quit    key.Binding
}

// DefaultKeyMap returns the bindings of DESIGN §6.
func DefaultKeyMap() KeyMap {
	b := func(help, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return KeyMap{
		Up:       b("↑/k", "up", "up", "k"),
		Down:     b("↓/j", "down", "down", "j"),
		Top:      b("g/home", "top", "g", "home"),
		Bottom:   b("G/end", "bottom", "G", "end"),
		HalfDown: b("ctrl+d", "half page down", "ctrl+d"),
		HalfUp:   b("ctrl+u", "half page up", "ctrl+u"),
		PageDown: b("pgdn", "page down", "pgdown"),
		PageUp:   b("pgup", "page up", "pgup"),

		NextTab: b("tab", "next tab", "tab"),
		PrevTab: b("shift+tab", "previous tab", "shift+tab"),
		Tab1:    b("1", "first tab", "1"),
		Tab2:    b("2", "second tab", "2"),
		Tab3:    b("3", "third tab", "3"),

		Detail:  b("enter", "detail", "enter"),
		Preview: b("p", "preview", "p"),
		Filter:  b("/", "filter", "/"),
		Clear:   b("esc", "clear / back", "esc"),

		Mark:      b("space", "mark", "space"),
		MarkAll:   b("*", "mark all shown", "*"),
		UnmarkAll: b("V", "unmark all", "V"),

		SetStatus:  b("s", "set status", "s"),
		ClearError: b("e", "clear sticky error", "e"),
		Replay:     b("R", "replay", "R"),
		Copy:       b("y", "copy ID / field", "y"),
		Undo:       b("u", "undo last change", "u"),

		Refresh: b("r", "refresh", "r"),
		Help:    b("?", "help", "?"),
		Quit:    b("q", "quit", "q", "ctrl+c"),
	}
}

// actions maps config action names to bindings, in the order Actions lists them. It is the
// single source of the names, so Rebind, Actions and the full help can't drift apart.
func (k *KeyMap) actions() []namedBinding {
	return []namedBinding{
		{"up", &k.Up}, {"down", &k.Down}, {"top", &k.Top}, {"bottom", &k.Bottom},
		{"half_down", &k.HalfDown}, {"half_up", &k.HalfUp}, {"page_down", &k.PageDown}, {"page_up", &k.PageUp},
		{"next_tab", &k.NextTab}, {"prev_tab", &k.PrevTab}, {"tab_1", &k.Tab1}, {"tab_2", &k.Tab2}, {"tab_3", &k.Tab3},
		{"detail", &k.Detail}, {"preview", &k.Preview}, {"filter", &k.Filter}, {"clear", &k.Clear},
		{"mark", &k.Mark}, {"mark_all", &k.MarkAll}, {"unmark_all", &k.UnmarkAll},
		{"set_status", &k.SetStatus}, {"clear_error", &k.ClearError}, {"replay", &k.Replay},
		{"copy", &k.Copy}, {"undo", &k.Undo},
		{"refresh", &k.Refresh}, {"help", &k.Help}, {"quit", &k.Quit},
	}
}

type namedBinding struct {
	name string
	b    *key.Binding
}

// Actions lists the action names Rebind accepts, in display order.
func (k KeyMap) Actions() []string {
	acts := k.actions()
	out := make([]string, len(acts))
	for i, a := range acts {
		out[i] = a.name
	}
	return out
}

// Rebind replaces the keys of an action (config overrides). Key names are bubbletea's
// ("ctrl+d", "shift+tab", "space", "pgdown", "G"). An empty list unbinds the action. An
// unknown action is an error naming it and listing the valid ones, so a typo in the config
// is reported rather than silently ignored.
func (k *KeyMap) Rebind(action string, keys []string) error {
	name := strings.ToLower(strings.TrimSpace(action))
	for _, a := range k.actions() {
		if a.name != name {
			continue
		}
		var clean []string
		for _, s := range keys {
			if s = strings.TrimSpace(s); s != "" {
				clean = append(clean, s)
			}
		}
		desc := a.b.Help().Desc
		if len(clean) == 0 {
			a.b.Unbind()
			a.b.SetHelp("", desc)
			return nil
		}
		a.b.SetKeys(clean...)
		a.b.SetEnabled(true)
		a.b.SetHelp(helpKeys(clean), desc)
		return nil
	}
	valid := k.Actions()
	sort.Strings(valid)
	return fmt.Errorf("unknown key action %q; valid actions: %s", action, strings.Join(valid, ", "))
}

// helpKeys renders key names the way the default help does (arrows as glyphs).
func helpKeys(keys []string) string {
	pretty := map[string]string{"up": "↑", "down": "↓", "left": "←", "right": "→", "pgdown": "pgdn"}
	out := make([]string, len(keys))
	for i, s := range keys {
		if p, ok := pretty[s]; ok {
			s = p
		}
		out[i] = s
	}
	return strings.Join(out, "/")
}

// helpGroup is a titled group of bindings for the full help.
type helpGroup struct {
	title    string
	bindings []key.Binding
}

// fullHelp groups every binding by area for the `?` overlay.
func (k KeyMap) fullHelp() []helpGroup {
	return []helpGroup{
		{"Navigate", []key.Binding{k.Up, k.Down, k.Top, k.Bottom, k.HalfDown, k.HalfUp, k.PageDown, k.PageUp}},
		{"Tabs", []key.Binding{k.NextTab, k.PrevTab, k.Tab1, k.Tab2, k.Tab3}},
		{"View", []key.Binding{k.Detail, k.Preview, k.Filter, k.Clear}},
		{"Select", []key.Binding{k.Mark, k.MarkAll, k.UnmarkAll}},
		{"Change", []key.Binding{k.SetStatus, k.ClearError, k.Replay, k.Undo, k.Copy}},
		{"App", []key.Binding{k.Refresh, k.Help, k.Quit}},
	}
}
