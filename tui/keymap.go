package tui

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
	"github.com/triage-dev/triage/model"
)

// KeyMap holds every key of the TUI, grouped by area, each rebindable from the config's [keys]
// (ApplyKeys). The product's defaults are keymap.go's table at the module root, from which
// keytable.go (DefaultKeyMap and the action names) is generated. No key is matched
// anywhere else by its name: a dialog's y/n, the picker's enter and the filter prompt's
// editing keys are bindings here too, so rebinding and the `?` help cover every key
// (TestNoKeyLiteralsOutsideTheKeyMap holds the code to it). Only typed text (the filter's
// query, a picker's quick-choice label) is read as text, and the picker's labels are the
// digits and letters none of its bindings use (pickerLabels).
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
	Sort    key.Binding
	Clear   key.Binding
	Groups  key.Binding // dead letters: rows waiting for replay by source × kind of error
	// NextView and PrevView switch the tab's saved views (views.go); Command opens the
	// command line (`:`).
	NextView key.Binding
	PrevView key.Binding
	Command  key.Binding
	// Wide shows every column of the sheet with its cells whole (widetable.go);
	// ScrollLeft and ScrollRight move it sideways.
	Wide        key.Binding
	ScrollLeft  key.Binding
	ScrollRight key.Binding

	// Selection.
	Mark      key.Binding
	MarkAll   key.Binding
	UnmarkAll key.Binding

	// Actions that change the sheet (or the clipboard).
	SetStatus  key.Binding
	ClearError key.Binding
	Discard    key.Binding // dead letters: status → discarded
	Requeue    key.Binding // queue: stale claims back to pending
	Replay     key.Binding // dead letters: the marked rows, else the cursor row
	ReplayAll  key.Binding // dead letters: every row the filter shows
	Undo       key.Binding

	// EditPayload opens a dead letter's payload in $VISUAL/$EDITOR, then writes it (after a
	// diff and a confirm) and offers to replay it.
	EditPayload key.Binding

	// Copying (OSC 52: works over SSH, in tmux with set-clipboard on, and in GNU screen).
	Copy     key.Binding
	CopyLink key.Binding

	// A replay in progress: cancel it; show its progress view again after going back to the
	// table (the run goes on meanwhile).
	Cancel   key.Binding
	Progress key.Binding

	// Application.
	Refresh key.Binding
	Help    key.Binding
	Quit    key.Binding
	// Suspend puts triage in the background (ctrl+z, then `fg` in the shell), as any
	// terminal program does; a replay or write in flight goes on meanwhile.
	Suspend key.Binding

	// The detail view's pager (as in less and neomutt): a page, the focused field (what Copy
	// copies), the next or previous row of the table. These keys mean something else in the
	// table (space marks, tab switches tabs): they are matched in the detail view only.
	PagerDown key.Binding
	PagerUp   key.Binding
	NextField key.Binding
	PrevField key.Binding
	NextRow   key.Binding
	PrevRow   key.Binding
	// Search searches the detail view's text (less's /); SearchNext and SearchPrev go to the
	// next and the previous match, as less's n and N do.
	Search     key.Binding
	SearchNext key.Binding
	SearchPrev key.Binding

	// Reply copies a mailto: link answering an inbox message (OSC 52), then offers to set
	// the row to replied.
	Reply key.Binding

	// ComposeSend ends a reply written in the TUI's composer (over triage serve): the
	// question to send it comes next.
	ComposeSend key.Binding
	// Back leaves whatever is open over the table (the help, the detail view, the progress
	// view, the group view, a picker, a dialog), whatever clear and quit are bound to.
	Back key.Binding
	// Interrupt quits at once, wherever the user is; during a replay it cancels the run
	// first (then quits once the calls in flight are written back; again quits at once). It
	// is matched before anything else, so no other action may share its keys.
	Interrupt key.Binding

	// A confirm dialog: go ahead (the default is no), no, and show or hide its list (a
	// replay's dry run).
	ConfirmYes  key.Binding
	ConfirmNo   key.Binding
	ConfirmList key.Binding

	// The status and sort pickers: choose the option under the cursor (a digit or letter
	// label chooses its option directly).
	PickerChoose key.Binding

	// The group view (dead letters by source × kind of error): filter the table to a group.
	GroupsFilter key.Binding

	// The progress view of a finished replay: back to the table.
	RunClose key.Binding

	// The filter prompt: keep the filter, clear it, move the table's cursor while typing.
	FilterKeep   key.Binding
	FilterCancel key.Binding
	FilterPrev   key.Binding
	FilterNext   key.Binding

	// Editing the filter's line (emacs-style, as readline and most prompts have them).
	// InputComplete completes the command line's text (again: the next candidate).
	InputComplete   key.Binding
	InputDeleteBack key.Binding
	InputDelete     key.Binding
	InputLeft       key.Binding
	InputRight      key.Binding
	InputHome       key.Binding
	InputEnd        key.Binding
	InputKillBefore key.Binding
	InputKillAfter  key.Binding
	InputDeleteWord key.Binding
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

// KeyProblem is one problem with the config's [keys] table. Key is the config key it is about
// ("keys.quit" for an action, "keys" for keys shared by actions), for the caller to name its line.
type KeyProblem struct {
	Key string
	Msg string
}

// ApplyKeys returns the default bindings (DefaultKeyMap) with the config's [keys] overrides
// applied, and every problem with them: an unknown action (one problem each, naming the valid
// actions), and each key shared by actions live in the same view or bound with the reserved
// interrupt key (Conflicts). It is the one validator of [keys]: `triage config check` and every
// start of the TUI call it, so they accept exactly the same tables (DESIGN invariant 12). The
// rules are written down with the product's key table, in keymap.go at the module root.
func ApplyKeys(overrides map[string][]string) (KeyMap, []KeyProblem) {
	km := DefaultKeyMap()
	actions := make([]string, 0, len(overrides))
	for a := range overrides {
		actions = append(actions, a)
	}
	sort.Strings(actions)
	var probs []KeyProblem
	for _, a := range actions {
		if err := km.Rebind(a, overrides[a]); err != nil {
			probs = append(probs, KeyProblem{Key: "keys." + a, Msg: err.Error()})
		}
	}
	for _, c := range km.Conflicts() {
		probs = append(probs, KeyProblem{Key: "keys", Msg: c})
	}
	return km, probs
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

// helpGroup is a titled group of bindings for the full help. entries is how the group is
// shown: related bindings share a line ("↑/k ↓/j  up / down") so the whole help fits 80x24.
type helpGroup struct {
	title    string
	bindings []key.Binding
	entries  []helpEntry
}

// helpEntry is one line of the full help.
type helpEntry struct{ key, desc string }

// entryKey is a binding's keys as the help shows them ("-" when unbound).
func entryKey(b key.Binding) string {
	if k := b.Help().Key; k != "" && b.Enabled() {
		return k
	}
	return "-"
}

func entryOf(b key.Binding) helpEntry { return helpEntry{entryKey(b), b.Help().Desc} }

// joined shows several bindings on one line.
func joined(desc string, bs ...key.Binding) helpEntry {
	ks := make([]string, len(bs))
	for i, b := range bs {
		ks[i] = entryKey(b)
	}
	return helpEntry{strings.Join(ks, " "), desc}
}

func group(title string, entries []helpEntry, bindings ...key.Binding) helpGroup {
	if entries == nil {
		for _, b := range bindings {
			entries = append(entries, entryOf(b))
		}
	}
	return helpGroup{title: title, bindings: bindings, entries: entries}
}

// KeyGroup is one area of the TUI's keys as its help (`?`) lists them.
type KeyGroup struct {
	Title   string
	Entries []KeyEntry
}

// KeyEntry is one line of a KeyGroup: the keys, and what they do.
type KeyEntry struct{ Keys, Desc string }

// HelpGroups is every key of km by area, as the `?` screen lists them on a table with every
// tab's actions: what the man page prints.
func HelpGroups(km KeyMap) []KeyGroup {
	var out []KeyGroup
	for _, g := range km.fullHelp() {
		kg := KeyGroup{Title: g.title}
		for _, e := range g.entries {
			kg.Entries = append(kg.Entries, KeyEntry{Keys: e.key, Desc: e.desc})
		}
		out = append(out, kg)
	}
	return out
}

// fullHelp groups every binding by area for the `?` overlay.
func (k KeyMap) fullHelp() []helpGroup {
	return []helpGroup{
		group("Navigate", []helpEntry{
			joined("up / down", k.Up, k.Down), joined("top / bottom", k.Top, k.Bottom),
			joined("half page down / up", k.HalfDown, k.HalfUp), joined("page down / up", k.PageDown, k.PageUp),
		}, k.Up, k.Down, k.Top, k.Bottom, k.HalfDown, k.HalfUp, k.PageDown, k.PageUp),
		group("View", nil, k.Detail, k.Preview, k.Filter, k.Sort, k.Clear, k.Groups, k.NextView, k.PrevView, k.Command, k.Wide, k.ScrollLeft, k.ScrollRight),
		group("Select", nil, k.Mark, k.MarkAll, k.UnmarkAll),
		group("Change", nil, k.SetStatus, k.ClearError, k.Discard, k.Requeue, k.Undo),
		group("Tabs", []helpEntry{
			joined("next / previous tab", k.NextTab, k.PrevTab), joined("tab 1 / 2 / 3", k.Tab1, k.Tab2, k.Tab3),
		}, k.NextTab, k.PrevTab, k.Tab1, k.Tab2, k.Tab3),
		group("Replay", []helpEntry{entryOf(k.Replay), entryOf(k.ReplayAll), entryOf(k.EditPayload), joined("cancel / show replay", k.Cancel, k.Progress)},
			k.Replay, k.ReplayAll, k.EditPayload, k.Cancel, k.Progress),
		group("Copy", nil, k.Copy, k.CopyLink, k.Reply),
		group("App", nil, k.Refresh, k.Help, k.Quit, k.Suspend, k.Interrupt),
		// Last: the keys of the views and dialogs over the table, which their own key lines
		// also name; at 80x24 the help scrolls to them.
		group("Dialogs and views", []helpEntry{
			entryOf(k.Back), joined("confirm: yes / no", k.ConfirmYes, k.ConfirmNo), entryOf(k.ConfirmList),
			entryOf(k.PickerChoose), entryOf(k.GroupsFilter), entryOf(k.RunClose), entryOf(k.ComposeSend),
		}, k.Back, k.ConfirmYes, k.ConfirmNo, k.ConfirmList, k.PickerChoose, k.GroupsFilter, k.RunClose, k.ComposeSend),
		// Not keys: what the table's markers mean (colour shows the cursor and the marks;
		// without colour the markers do).
		group("Markers", []helpEntry{
			{">", "the cursor row (no colour)"}, {"*", "a marked row (no colour)"},
			{"!", "a row with a problem (no colour)"}, {"~", "after a key: minted, not yet written"},
		}),
		group("Filter prompt", []helpEntry{
			joined("keep / clear filter", k.FilterKeep, k.FilterCancel), joined("move while typing", k.FilterPrev, k.FilterNext),
			entryOf(k.InputDeleteBack), entryOf(k.InputDelete), entryOf(k.InputDeleteWord),
			joined("cursor left / right", k.InputLeft, k.InputRight), joined("start / end of line", k.InputHome, k.InputEnd),
			joined("delete to start / end", k.InputKillBefore, k.InputKillAfter), entryOf(k.InputComplete),
		}, k.FilterKeep, k.FilterCancel, k.FilterPrev, k.FilterNext, k.InputDeleteBack, k.InputDelete, k.InputDeleteWord,
			k.InputLeft, k.InputRight, k.InputHome, k.InputEnd, k.InputKillBefore, k.InputKillAfter, k.InputComplete),
	}
}

// tableHelp is the `?` screen of the table of a tab of role r: the keys that work there. The
// other tabs' own actions (replay on the inbox, requeue on dead letters) are left out, so
// the screen answers "what can I do here" and fits 80x24; role "" (no tab yet) lists all.
func (k KeyMap) tableHelp(r model.Role) []helpGroup {
	if r == "" {
		return k.fullHelp()
	}
	all := k.fullHelp()
	// Bindings that belong to one role (or two): dropped from the other tabs' help.
	only := map[*key.Binding][]model.Role{
		&k.ClearError: {model.RoleDeadLetter, model.RoleQueue},
		&k.Discard:    {model.RoleDeadLetter}, &k.Requeue: {model.RoleQueue},
		&k.Replay: {model.RoleDeadLetter}, &k.ReplayAll: {model.RoleDeadLetter}, &k.EditPayload: {model.RoleDeadLetter},
		&k.Cancel: {model.RoleDeadLetter}, &k.Progress: {model.RoleDeadLetter}, &k.Groups: {model.RoleDeadLetter},
		&k.Reply: {model.RoleInbox},
	}
	keep := func(b key.Binding) bool {
		for p, roles := range only {
			if sameBinding(*p, b) {
				return slices.Contains(roles, r)
			}
		}
		return true
	}
	var out []helpGroup
	for _, g := range all {
		var bs []key.Binding
		for _, b := range g.bindings {
			if keep(b) {
				bs = append(bs, b)
			}
		}
		if len(bs) == 0 {
			continue
		}
		if len(bs) == len(g.bindings) {
			out = append(out, g)
			continue
		}
		out = append(out, group(g.title, nil, bs...))
	}
	return out
}

// sameBinding reports whether two bindings are the same action (same keys and help).
func sameBinding(a, b key.Binding) bool {
	return a.Help() == b.Help() && slices.Equal(a.Keys(), b.Keys())
}

// reservedBy are the actions that may share the interrupt key (ctrl+c): quitting and
// cancelling a run are what it does anyway. Any other action on it could never be reached.
var reservedBy = []string{"quit", "cancel"}

// scope is the set of actions live at the same time in one view. alike are actions that do
// the same thing there (back, clear and quit all leave the detail view), so sharing a key
// among them is no conflict.
type scope struct {
	actions []string
	alike   []string
}

var (
	nav     = []string{"up", "down", "top", "bottom", "half_down", "half_up", "page_down", "page_up"}
	anyView = []string{"interrupt", "suspend"} // matched before any view's own keys

	// dialogOnly are the actions of a view or dialog over the table: the table doesn't answer them.
	dialogOnly = []string{
		"pager_page_down", "pager_page_up", "next_field", "prev_field", "next_row", "prev_row",
		"search", "search_next", "search_prev", "back",
		"confirm_yes", "confirm_no", "confirm_list", "picker_choose", "groups_filter", "run_close", "compose_send",
		"filter_keep", "filter_cancel", "filter_prev", "filter_next",
		"input_delete_back", "input_delete", "input_left", "input_right", "input_home", "input_end",
		"input_kill_before", "input_kill_after", "input_delete_word", "input_complete",
	}

	// viewScopes are the views and dialogs over the table, each with the actions it answers.
	viewScopes = []scope{
		{ // the detail view
			actions: slices.Concat(anyView, []string{"up", "down", "top", "bottom", "half_down", "half_up",
				"pager_page_down", "pager_page_up", "next_field", "prev_field", "next_row", "prev_row",
				"search", "search_next", "search_prev", "back", "clear", "help", "quit", "copy", "copy_link", "set_status", "clear_error", "discard",
				"replay", "edit_payload", "cancel", "replay_progress", "undo", "refresh", "reply"}),
			alike: []string{"back", "clear", "quit"},
		},
		{ // the full help
			actions: slices.Concat(anyView, nav, []string{"back", "clear", "quit", "help"}),
			alike:   []string{"back", "clear", "quit", "help"},
		},
		{ // a confirm
			actions: slices.Concat(anyView, nav, []string{"confirm_yes", "confirm_no", "confirm_list", "back"}),
			alike:   []string{"confirm_no", "back"},
		},
		{ // a picker (status, sort column)
			actions: slices.Concat(anyView, []string{"up", "down", "top", "bottom", "picker_choose", "back", "clear", "quit"}),
			alike:   []string{"back", "clear", "quit"},
		},
		{ // the group view
			actions: slices.Concat(anyView, nav, []string{"groups_filter", "back", "clear", "quit", "groups", "help", "refresh"}),
			alike:   []string{"back", "clear", "quit", "groups"},
		},
		{ // a replay's progress view (one's own run or a watched one)
			actions: slices.Concat(anyView, nav, []string{"help", "cancel", "back", "clear", "quit", "replay_progress",
				"run_close", "refresh", "replay", "replay_all"}),
			alike: []string{"back", "clear", "quit", "replay_progress", "run_close"},
		},
		{ // the reply composer (its text area's own keys edit the text)
			actions: slices.Concat(anyView, []string{"compose_send", "back"}),
		},
		{ // the filter prompt and the command line
			actions: slices.Concat(anyView, []string{"filter_keep", "filter_cancel", "filter_prev", "filter_next",
				"input_delete_back", "input_delete", "input_left", "input_right", "input_home", "input_end",
				"input_kill_before", "input_kill_after", "input_delete_word", "input_complete"}),
		},
	}
)

// scopes are the sets of actions live at the same time: the table's, then each view's over it.
// A key may mean one action per scope (space marks a row in the table and pages the detail; y
// copies in the table and says yes in a confirm).
func (k *KeyMap) scopes() []scope {
	table := scope{}
	for _, a := range k.actions() {
		if !slices.Contains(dialogOnly, a.name) {
			table.actions = append(table.actions, a.name)
		}
	}
	return append([]scope{table}, viewScopes...)
}

// Conflicts lists the keys that would be silently shadowed: a key bound to two or more actions
// live in the same view (the table, the detail view, the help, a confirm, a picker, the group
// view, the progress view, the filter prompt), or the interrupt key (ctrl+c) bound to an
// action it can never reach. Each entry names the key and the actions, e.g.
//
//	key "r" is bound to both refresh and replay
//
// Entries are sorted by key; nil means no conflict. Call it after applying config overrides.
func (k KeyMap) Conflicts() []string {
	var out []string
	seen := map[string]bool{}
	all := k.actions()
	for _, sc := range k.scopes() {
		var live []namedBinding // in actions' order, so a message names them as the table does
		for _, a := range all {
			if slices.Contains(sc.actions, a.name) {
				live = append(live, a)
			}
		}
		for _, c := range conflictsIn(live, sc.alike) {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	sort.Strings(out)
	return out
}

// conflictsIn is Conflicts within one scope.
func conflictsIn(actions []namedBinding, alike []string) []string {
	byKey := map[string][]string{}
	for _, a := range actions {
		if !a.b.Enabled() {
			continue
		}
		seen := map[string]bool{}
		for _, key := range a.b.Keys() {
			key = strings.TrimSpace(key)
			if key == "" || seen[key] {
				continue
			}
			seen[key] = true
			byKey[key] = append(byKey[key], a.name)
		}
	}
	keys := make([]string, 0, len(byKey))
	for key := range byKey {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	var out []string
	for _, key := range keys {
		names := byKey[key]
		if slices.Contains(names, "interrupt") {
			var shadowed []string
			for _, n := range names {
				if n != "interrupt" && !slices.Contains(reservedBy, n) {
					shadowed = append(shadowed, n)
				}
			}
			if len(shadowed) > 0 {
				out = append(out, fmt.Sprintf("key %q is reserved (it always quits, or cancels a running replay): it can't be bound to %s", key, andList(shadowed)))
			}
			continue
		}
		meanings := map[string]bool{}
		for _, n := range names {
			if slices.Contains(alike, n) {
				n = alike[0]
			}
			meanings[n] = true
		}
		if len(meanings) > 1 {
			both := ""
			if len(names) == 2 {
				both = "both "
			}
			out = append(out, fmt.Sprintf("key %q is bound to %s%s", key, both, andList(names)))
		}
	}
	return out
}

// Validate reports Conflicts as one error (nil when there are none), for a config check.
func (k KeyMap) Validate() error {
	c := k.Conflicts()
	if len(c) == 0 {
		return nil
	}
	return fmt.Errorf("conflicting key bindings: %s", strings.Join(c, "; "))
}

// andList is "a", "a and b", "a, b and c".
func andList(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// hintKeys is the keys a hint names, as the help shows them ("esc/q"), deduplicated, in order,
// without ctrl+c (handled before any binding, it never means "back").
func hintKeys(keys ...string) string {
	var out []string
	seen := map[string]bool{}
	for _, s := range keys {
		if s == "" || s == "ctrl+c" || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	return helpKeys(out)
}

// firstKey is the key a hint names for a binding: its first key as the help shows it ("↓"),
// or "" when it has none.
// keySays is "u undoes" for a bound key, "" for an unbound one: every hint names the key the
// user's config bound, and says nothing of an action they turned off.
func keySays(b key.Binding, verb string) string {
	if k := firstKey(b); k != "" {
		return k + " " + verb
	}
	return ""
}

// withHint appends "; hint" (or sep and the hint) when the hint isn't empty.
func withHint(s, sep, hint string) string {
	if hint == "" {
		return s
	}
	return s + sep + hint
}

func firstKey(b key.Binding) string {
	if !b.Enabled() {
		return ""
	}
	for _, s := range b.Keys() {
		if s != "" && s != "ctrl+c" {
			return helpKeys([]string{s})
		}
	}
	return ""
}

// letterKey prefers a binding's non-arrow key for a terse hint ("j" over "↓"), else its
// first key.
func letterKey(b key.Binding) string {
	if !b.Enabled() {
		return ""
	}
	for _, s := range b.Keys() {
		switch s {
		case "", "up", "down", "left", "right", "ctrl+c":
			continue
		}
		return helpKeys([]string{s})
	}
	return firstKey(b)
}

// backKeys are the keys that go back from a view (the detail, the progress view, the help):
// back (esc) always does, and so do the clear and quit bindings (q is "back" there, not "quit").
func (k *KeyMap) backKeys() []string {
	var keys []string
	if k.Back.Enabled() {
		keys = append(keys, k.Back.Keys()...)
	}
	if k.Clear.Enabled() {
		keys = append(keys, k.Clear.Keys()...)
	}
	if k.Quit.Enabled() {
		keys = append(keys, k.Quit.Keys()...)
	}
	return keys
}

// scrollHint is the up/down pair a hint names ("j/k").
func (k *KeyMap) scrollHint() string {
	d, u := letterKey(k.Down), letterKey(k.Up)
	switch {
	case d == "" && u == "":
		return ""
	case d == "" || u == "":
		return d + u
	}
	return d + "/" + u
}

// pairKeys is two bindings' keys as one hint ("↑/↓"), or one of them when the other is unbound.
func pairKeys(a, b key.Binding) string {
	x, y := firstKey(a), firstKey(b)
	if x == "" || y == "" {
		return x + y
	}
	return x + "/" + y
}

// quitKey is the key a message names for quitting: quit's, else the interrupt key (ctrl+c).
func (k *KeyMap) quitKey() string {
	if q := firstKey(k.Quit); q != "" {
		return q
	}
	if k.Interrupt.Enabled() && len(k.Interrupt.Keys()) > 0 {
		return helpKeys(k.Interrupt.Keys()[:1])
	}
	return "ctrl+c"
}

// noKeys is how a confirm names its "no": the help's key for confirm_no ("N"), then the
// other keys that also answer no, by name ("no (enter/esc)"); the plain letters (n, q) go
// unsaid, as the [y/N] already says them.
func (k *KeyMap) noKeys() (string, string) {
	main := ""
	if k.ConfirmNo.Enabled() {
		main = k.ConfirmNo.Help().Key
	}
	shown := map[string]bool{}
	for _, s := range strings.Split(main, "/") {
		shown[s] = true
	}
	var also []string
	for _, b := range []key.Binding{k.ConfirmNo, k.Back} {
		if !b.Enabled() {
			continue
		}
		for _, s := range b.Keys() {
			if len([]rune(s)) > 1 && !shown[s] {
				shown[s] = true
				also = append(also, s)
			}
		}
	}
	switch {
	case main == "" && len(also) == 0:
		return "", ""
	case main == "":
		return hintKeys(also...), "no"
	case len(also) == 0:
		return main, "no"
	}
	return main, "no (" + hintKeys(also...) + ")"
}
