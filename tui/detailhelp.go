// The detail view's own help: the footer's hints and the `?` screen list the keys that work
// there (the pager, fields, rows, the actions on this record), not the table's.

package tui

import (
	"slices"

	"charm.land/bubbles/v2/key"
	"github.com/triage-dev/triage/model"
)

// detailRole is the role of the tab the detail view shows ("" when it is gone).
func (m *Model) detailRole() model.Role {
	if m.detail == nil {
		return ""
	}
	if ts := m.tabs.named(m.detail.tab); ts != nil {
		return ts.cfg.Role
	}
	return ""
}

// detailShortHelp is the footer of the detail view, most used first: back, scroll a line,
// a page, the next and previous row, copy, status, then the tab's own actions.
func (m *Model) detailShortHelp(back string) []key.Binding {
	k := m.c.keys
	pair := func(a, b key.Binding, desc string) key.Binding {
		x, y := letterKey(a), letterKey(b)
		if x == "" || y == "" {
			return bindingHelp(x+y, desc)
		}
		return bindingHelp(x+"/"+y, desc)
	}
	hs := []key.Binding{k.Help, bindingHelp(back, "back"), bindingHelp(k.scrollHint(), "scroll"),
		pair(k.PagerDown, k.PagerUp, "page"), pair(k.NextRow, k.PrevRow, "next/prev row"),
		withDesc(k.Copy, "copy field"), k.SetStatus}
	switch m.detailRole() {
	case model.RoleInbox:
		hs = append(hs, withDesc(k.Reply, "reply"))
	case model.RoleDeadLetter:
		hs = append(hs, withDesc(k.Replay, "replay"), withDesc(k.ClearError, "clear error"), withDesc(k.Discard, "discard"))
	case model.RoleQueue:
		hs = append(hs, withDesc(k.ClearError, "clear error"))
	}
	hs = append(hs, pair(k.NextField, k.PrevField, "field"), k.Undo, withDesc(k.CopyLink, "copy link"))
	return slices.DeleteFunc(hs, func(b key.Binding) bool { return !m.c.offers(b) })
}

// helpGroups are the groups the `?` screen lists: the detail view's when it is open, else
// the table's.
func (m *Model) helpGroups() []helpGroup {
	if m.detail != nil {
		return m.c.offered(m.c.keys.detailHelp(m.detailRole()))
	}
	role := model.Role("")
	if ts := m.tabs.current(); ts != nil && ts.data != nil {
		role = ts.cfg.Role
	}
	return m.c.offered(m.c.keys.tableHelp(role))
}

// offered is groups with only the bindings this person is offered (common.offers): the help
// lists what they can do, like the footer.
func (c *common) offered(groups []helpGroup) []helpGroup {
	var out []helpGroup
	for _, g := range groups {
		var bs []key.Binding
		for _, b := range g.bindings {
			if c.offers(b) {
				bs = append(bs, b)
			}
		}
		switch {
		case len(bs) == len(g.bindings):
			out = append(out, g)
		case len(bs) > 0:
			out = append(out, group(g.title, nil, bs...))
		}
	}
	return out
}

// helpTitle heads the `?` screen: which view its keys are for.
func (m *Model) helpTitle() string {
	if m.detail != nil {
		return "Detail keys"
	}
	if ts := m.tabs.current(); ts != nil && ts.data != nil {
		return "Keys on " + cellLine(ts.name())
	}
	return "Keys"
}

// detailHelp groups the keys of the detail view of a tab of role r: only the actions that
// work on that tab are listed. Descriptions are short (12 cells) so two columns fit 60x15.
func (k KeyMap) detailHelp(r model.Role) []helpGroup {
	change := []key.Binding{k.SetStatus}
	switch r {
	case model.RoleInbox:
		change = append(change, withDesc(k.Reply, "mailto reply"))
	case model.RoleDeadLetter:
		change = append(change, withDesc(k.ClearError, "clear error"), withDesc(k.Discard, "discard"))
	case model.RoleQueue:
		change = append(change, withDesc(k.ClearError, "clear error"))
	}
	change = append(change, withDesc(k.Undo, "undo change"))
	groups := []helpGroup{
		group("Scroll", []helpEntry{
			joined("line down/up", k.Down, k.Up), entryOf(k.PagerDown), entryOf(k.PagerUp),
			joined("half page", k.HalfDown, k.HalfUp), joined("top / bottom", k.Top, k.Bottom),
		}, k.Down, k.Up, k.PagerDown, k.PagerUp, k.HalfDown, k.HalfUp, k.Top, k.Bottom),
		group("Fields and rows", []helpEntry{
			{entryKey(k.NextField), "next field"}, {entryKey(k.PrevField), "prev field"},
			{entryKey(k.NextRow), "next row"}, {entryKey(k.PrevRow), "prev row"},
			{entryKey(k.Copy), "copy field"}, {entryKey(k.CopyLink), "copy link"},
		}, k.NextField, k.PrevField, k.NextRow, k.PrevRow, k.Copy, k.CopyLink),
		group("Change this row", nil, change...),
	}
	if r == model.RoleDeadLetter {
		groups = append(groups, group("Replay", nil, withDesc(k.Replay, "replay row"), withDesc(k.Cancel, "cancel run"), withDesc(k.Progress, "progress")))
	}
	back := bindingHelp(hintKeys(k.backKeys()...), "back")
	return append(groups, group("App", nil, back, k.Refresh, withDesc(k.Help, "close help")))
}
