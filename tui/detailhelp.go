// The detail view's own help: the footer's hints and the `?` screen list the keys that work
// there (the pager, fields, rows, the actions on this record), not the table's.

package tui

import (
	"slices"

	"charm.land/bubbles/v2/key"
	"github.com/triage-dev/triage/model"
)

// roleOf is the role of the tab detail view d shows ("" when it is gone, or d is nil).
func (t *tabSet) roleOf(d *detail) model.Role {
	if d == nil {
		return ""
	}
	if ts := t.named(d.tab); ts != nil {
		return ts.cfg.Role
	}
	return ""
}

// detailShortHelp is the footer of the detail view, most used first: back, scroll a line,
// a page, search, the next and previous row, copy, status, then the actions of its tab's
// role; while a search is kept, n/N for its matches come first.
func detailShortHelp(c *common, role model.Role, back string) []key.Binding {
	k := c.keys
	pair := func(a, b key.Binding, desc string) key.Binding {
		x, y := letterKey(a), letterKey(b)
		if x == "" || y == "" {
			return bindingHelp(x+y, desc)
		}
		return bindingHelp(x+"/"+y, desc)
	}
	hs := []key.Binding{k.Help, bindingHelp(back, "back"), bindingHelp(k.scrollHint(), "scroll"),
		pair(k.PagerDown, k.PagerUp, "page"), withDesc(k.Search, "search"), pair(k.NextRow, k.PrevRow, "next/prev row"),
		withDesc(k.Copy, "copy field"), k.SetStatus}
	switch role {
	case model.RoleInbox:
		hs = append(hs, withDesc(k.Reply, "reply"))
	case model.RoleDeadLetter:
		hs = append(hs, withDesc(k.Replay, "replay"), withDesc(k.ClearError, "clear error"), withDesc(k.Discard, "discard"))
	case model.RoleQueue:
		hs = append(hs, withDesc(k.ClearError, "clear error"))
	}
	hs = append(hs, pair(k.NextField, k.PrevField, "field"), k.Undo, withDesc(k.CopyLink, "copy link"))
	return slices.DeleteFunc(hs, func(b key.Binding) bool { return !c.offers(b) })
}

// help is what the `?` screen lists, and its heading: the keys of detail view d when it is
// open, else the active tab's table's.
func (t *tabSet) help(c *common, d *detail) (groups []helpGroup, title string) {
	if d != nil {
		return c.offered(c.keys.detailHelp(t.roleOf(d))), "Detail keys"
	}
	if ts := t.current(); ts != nil && ts.data != nil {
		return c.offered(c.keys.tableHelp(ts.cfg.Role)), "Keys on " + cellLine(ts.name())
	}
	return c.offered(c.keys.tableHelp("")), "Keys"
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
		group("Search", nil, k.Search, k.SearchNext, k.SearchPrev),
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
