package tui

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/triage-dev/triage/model"
)

// ShortHelp is the footer's key hints for where the user is: it changes with the mode (table,
// filter, detail) and the tab (clear-error only where sticky errors exist).
func (m *Model) ShortHelp() []key.Binding {
	k := m.c.keys
	back := hintKeys(k.backKeys()...)
	scroll := bindingHelp(k.scrollHint(), "scroll")
	switch {
	case m.help.open:
		return []key.Binding{bindingHelp(hintKeys(slices.Concat(k.Back.Keys(), k.Clear.Keys(), k.Help.Keys())...), "close help"), scroll}
	case m.prompt.open:
		return []key.Binding{withDesc(k.FilterKeep, "keep filter"), withDesc(k.FilterCancel, "clear"),
			bindingHelp(pairKeys(k.FilterPrev, k.FilterNext), "move"), bindingHelp(m.tabs.filterPlaceholder(), "syntax")}
	case m.replay.showRun && m.replay.run != nil && !m.replay.run.finished:
		return append(m.replay.run.resultHint(), withDesc(k.Cancel, "cancel (in-flight calls finish)"), bindingHelp(back, "back (the run goes on)"), scroll)
	case m.replay.showRun && m.replay.run != nil:
		return append(m.replay.run.resultHint(), bindingHelp(hintKeys(append(k.RunClose.Keys(), k.backKeys()...)...), "back to the table"), scroll)
	case m.watch.watching() && !m.watch.run.finished:
		// Another person's run (watch.go): their run goes on whatever this session does; x
		// only for who may cancel it.
		hs := []key.Binding{bindingHelp(back, "back (it goes on)"), scroll}
		if m.c.offers(k.Cancel) && m.watch.refusal == "" {
			hs = append([]key.Binding{withDesc(k.Cancel, "cancel "+cellLine(m.watch.run.who)+"'s run (asks first)")}, hs...)
		}
		return hs
	case m.watch.watching():
		return []key.Binding{bindingHelp(hintKeys(append(k.RunClose.Keys(), k.backKeys()...)...), "back to the table"), scroll}
	case m.groups != nil:
		return []key.Binding{withDesc(k.GroupsFilter, "filter to group"), bindingHelp(hintKeys(slices.Concat(k.Back.Keys(), k.Clear.Keys())...), "back"), k.Help, scroll}
	case m.compose != nil:
		return []key.Binding{withDesc(k.ComposeSend, "end, then send"), withDesc(k.Back, "leave (draft kept)")}
	case m.detail != nil && m.detail.search.typing:
		return []key.Binding{withDesc(k.FilterKeep, "keep search"), withDesc(k.FilterCancel, "drop search")}
	case m.detail != nil:
		hs := detailShortHelp(m.c, m.tabs.roleOf(m.detail), back)
		if m.detail.search.query != "" {
			hs = append([]key.Binding{bindingHelp(hintKeys(slices.Concat(k.SearchNext.Keys(), k.SearchPrev.Keys())...), "next/prev match")}, hs...)
		}
		return hs
	}
	role := model.Role("")
	if ts := m.tabs.current(); ts != nil && ts.data != nil {
		role = ts.cfg.Role
	}
	return tableShortHelp(m.c, role, m.replay.running(), m.replay.bannerShown(m.tabs.activeName()))
}

// tableShortHelp is the table's footer hints: the most used keys first, since the footer keeps
// what fits (fitHints; `?` is always kept, last), and j/k need no hint. While a replay runs
// behind the table, how to look at it and stop it come first; a halt on the banner says how to
// dismiss it. role is the active tab's ("" for none or a broken one).
func tableShortHelp(c *common, role model.Role, running, halted bool) []key.Binding {
	k := c.keys
	var hs []key.Binding
	if running {
		hs = append(hs, withDesc(k.Progress, "replay progress"), withDesc(k.Cancel, "cancel replay"))
	}
	if halted {
		hs = append(hs, withDesc(k.Clear, "dismiss halt"))
	}
	hs = append(hs, withDesc(k.Detail, "open"), k.Filter)
	// What the tab is for comes before the keys every tab has: at 80 columns the footer keeps
	// the first six or seven.
	switch role {
	case model.RoleDeadLetter:
		hs = append(hs, withDesc(k.Replay, "replay"), withDesc(k.ReplayAll, "replay all"), withDesc(k.Groups, "groups"), withDesc(k.EditPayload, "edit"))
	case model.RoleQueue:
		hs = append(hs, withDesc(k.Requeue, "requeue"), withDesc(k.ClearError, "clear error"))
	case model.RoleInbox:
		hs = append(hs, withDesc(k.Reply, "reply"))
	}
	hs = append(hs, k.Mark, withDesc(k.SetStatus, "status"), withDesc(k.Undo, "undo"))
	if role == model.RoleDeadLetter {
		hs = append(hs, withDesc(k.ClearError, "clear error"), withDesc(k.Discard, "discard"))
	}
	hs = append(hs, withDesc(k.Copy, "copy"), k.Refresh, k.Quit, withDesc(k.Sort, "sort"), k.Preview, k.NextTab, k.Help)
	// Read-only (--readonly), or a role over triage serve that doesn't allow it: the footer's
	// room goes to what this person can do; the store refuses the rest anyway.
	return slices.DeleteFunc(hs, func(b key.Binding) bool { return !c.offers(b) })
}

// needs is the role the action of binding b needs (DESIGN §9): a triager's to change rows
// (set a status, clear a sticky error, discard, undo), an operator's to send calls or stop
// them and to change what a replay sends (replay, requeue, edit a payload, cancel a run); ""
// for the rest (read, filter, copy). A binding is told by its keys, as the footer's hints
// are.
func (c *common) needs(b key.Binding) model.Access {
	k := c.keys
	switch {
	case bindingIn(b, k.Replay, k.ReplayAll, k.Requeue, k.EditPayload, k.Cancel):
		return model.AccessOperator
	case bindingIn(b, k.SetStatus, k.ClearError, k.Discard, k.Undo):
		return model.AccessTriager
	}
	return ""
}

// bindingIn reports whether b is one of ws (the same binding, or the same keys).
func bindingIn(b key.Binding, ws ...key.Binding) bool {
	for _, w := range ws {
		if sameBinding(w, b) || (len(b.Keys()) > 0 && slices.Equal(b.Keys(), w.Keys())) {
			return true
		}
	}
	return false
}

// offers reports whether hints and help offer b: not a change when the store is read-only,
// nothing beyond the person's role over triage serve, and neither E nor ctrl+z over triage
// serve (they would run on the shared host).
func (c *common) offers(b key.Binding) bool {
	need := c.needs(b)
	switch {
	case need != "" && c.readOnly:
		return false
	case need != "" && !roleAllows(c.role, need):
		return false
	case c.remote && bindingIn(b, c.keys.EditPayload, c.keys.Suspend):
		return false
	}
	return true
}

// roleAllows reports whether role have may do what role need may; "" (no role: triage on
// one's own machine) may do anything.
func roleAllows(have, need model.Access) bool {
	return have == "" || need == "" || slices.Index(model.Accesses, have) >= slices.Index(model.Accesses, need)
}

// rolesThatCan names the roles that may do what need may: "a triager or an operator".
func rolesThatCan(need model.Access) string {
	var names []string
	for _, a := range model.Accesses[max(0, slices.Index(model.Accesses, need)):] {
		article := "a "
		if strings.ContainsRune("aeiou", rune(a[0])) {
			article = "an "
		}
		names = append(names, article+string(a))
	}
	return strings.Join(names, " or ")
}

// FullHelp is every binding of the view that is open, grouped by area (the `?` overlay).
func (m *Model) FullHelp() [][]key.Binding {
	groups, _ := m.tabs.help(m.c, m.detail)
	out := make([][]key.Binding, len(groups))
	for i, g := range groups {
		out[i] = g.bindings
	}
	return out
}

// bindingHelp is a hint that isn't one binding ("esc/q back"); without keys (everything it
// names was unbound) it is disabled, so the footer leaves it out.
func bindingHelp(keys, desc string) key.Binding {
	if keys == "" {
		return key.NewBinding(key.WithDisabled())
	}
	return key.NewBinding(key.WithKeys(keys), key.WithHelp(keys, desc))
}

func withDesc(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}

// shortLine renders the footer hints hs (Model.ShortHelp) that fit the width (fitHints). It is
// memoised on everything the line is made of: the width and every hint's key and description
// (the mode, the tab, a run or a halt all show up there); the styles reset the memo
// (restyled).
func (h *helpView) shortLine(hs []key.Binding, w int) string {
	var b strings.Builder
	b.WriteString(itoa(w))
	for _, h := range hs {
		if h.Enabled() {
			b.WriteByte(0)
			b.WriteString(h.Help().Key)
			b.WriteByte(1)
			b.WriteString(h.Help().Desc)
		}
	}
	return h.line.get(b.String(), func() string { return h.renderShortHelp(hs, w) })
}

// hintSep separates the footer's hints: two spaces rather than " · ", which leaves room at 80
// columns for two more hints (the key and its words are told apart by style, or by order).
const hintSep = "  "

// renderShortHelp draws the hints fitHints keeps, each whole: never a cut hint or a "…".
func (h *helpView) renderShortHelp(hs []key.Binding, w int) string {
	st := h.c.styles
	kept := fitHints(hs, []key.Binding{h.c.keys.Quit, h.c.keys.Help}, w-1)
	var b strings.Builder
	b.WriteByte(' ')
	for i, h := range kept {
		if i > 0 {
			b.WriteString(st.paint(st.FooterText, hintSep))
		}
		b.WriteString(st.paint(st.FooterKey, h.Help().Key))
		b.WriteString(st.paint(st.FooterText, " "+h.Help().Desc))
	}
	return fitStyled(b.String(), w)
}

// hintWidth is a hint's width on the footer ("key desc").
func hintWidth(h key.Binding) int { return textWidth(h.Help().Key) + 1 + textWidth(h.Help().Desc) }

// fitHints picks the hints that fit in w cells, whole, in their order (most used first): a
// hint that doesn't fit is left out and the shorter ones after it still get their chance.
// Hints bound to the keys of a reserved binding (quit, help) are always kept, last, in the
// order given: a newcomer always sees how to get help and how to leave.
func fitHints(hs []key.Binding, reserved []key.Binding, w int) []key.Binding {
	sep := textWidth(hintSep)
	var rest, tail []key.Binding
	used := 0
	for _, r := range reserved {
		for _, h := range hs {
			if h.Enabled() && h.Help().Key != "" && r.Enabled() && slices.Equal(h.Keys(), r.Keys()) {
				if hw := hintWidth(h) + sep; used+hw <= w+sep {
					tail = append(tail, h)
					used += hw
				}
				break
			}
		}
	}
	for _, h := range hs {
		if !h.Enabled() || h.Help().Key == "" || slices.ContainsFunc(tail, func(t key.Binding) bool { return slices.Equal(t.Keys(), h.Keys()) }) {
			continue
		}
		rest = append(rest, h)
	}
	var kept []key.Binding
	for _, h := range rest {
		need := hintWidth(h) + sep
		if used+need > w+sep {
			continue
		}
		used += need
		kept = append(kept, h)
	}
	return append(kept, tail...)
}

// fullHelp renders the `?` screen (groups under heading: tabSet.help): every group with its
// title, flowed into as many columns as fit at full width (balanced), as exactly h lines of w
// cells, and says how many rows its content has. When even that is taller than the screen
// (60x15), it scrolls with the navigation keys.
func (hv *helpView) fullHelp(groups []helpGroup, heading string, w, h int) ([]string, int) {
	st := hv.c.styles
	keyW, descW := 0, 0
	for _, g := range groups {
		for _, e := range g.entries {
			keyW = max(keyW, textWidth(e.key))
			descW = max(descW, textWidth(e.desc))
		}
	}
	keyW = min(keyW, 13)
	colW := min(keyW+2+descW, w-3)
	ncols := max(1, (w-1)/(colW+2))
	// At 60 columns two columns would cut the descriptions ("clear stick…"): one column of
	// whole lines scrolls instead, and says so.
	avail := max(1, h-1)
	total := 0
	for _, g := range groups {
		total += len(g.entries) + 2
	}
	cols := flowGroups(groups, avail)
	if len(cols) > ncols {
		// Taller than the screen even in every column that fits: use those, and scroll.
		for lim := avail + 1; ; lim++ {
			if c := flowGroups(groups, lim); len(c) <= ncols {
				cols = c
				break
			}
		}
	} else {
		// Fits: balance the columns (the shortest height that needs no more of them).
		for lim := max(1, total/len(cols)); lim < avail; lim++ {
			if c := flowGroups(groups, lim); len(c) <= len(cols) {
				cols = c
				break
			}
		}
	}
	var rendered [][]string
	rows := 0
	for _, c := range cols {
		var lines []string
		for i, gi := range c {
			if i > 0 {
				lines = append(lines, "")
			}
			lines = append(lines, st.paint(st.HelpGroup, groups[gi].title))
			for _, e := range groups[gi].entries {
				lines = append(lines, st.paint(st.HelpKey, fit(e.key, keyW))+"  "+st.paint(st.HelpDesc, truncate(e.desc, colW-keyW-2)))
			}
		}
		rendered = append(rendered, lines)
		rows = max(rows, len(lines))
	}
	off := max(0, min(hv.offset, rows-avail))
	title := st.paint(st.Section, " "+heading)
	if rows > avail {
		title += st.paint(st.Muted, fmt.Sprintf(" · lines %d-%d of %d", off+1, min(rows, off+avail), rows))
	}
	if mode := " · " + hv.mode; hv.mode != "" && textWidth(ansi.Strip(title))+textWidth(mode) <= w {
		title += st.paint(st.Muted, mode)
	}
	if note := " (any of them can be rebound in the config)"; textWidth(ansi.Strip(title))+textWidth(note) <= w {
		title += st.paint(st.Muted, note)
	}
	lines := []string{title}
	for row := off; row < off+avail; row++ {
		var b strings.Builder
		b.WriteString(" ")
		for _, c := range rendered {
			cell := ""
			if row < len(c) {
				cell = c[row]
			}
			b.WriteString(fitStyled(cell, colW))
			b.WriteString("  ")
		}
		lines = append(lines, b.String())
	}
	return padLines(lines, w, h), rows
}

// flowGroups splits groups into columns of at most limit lines (a group never splits).
func flowGroups(groups []helpGroup, limit int) [][]int {
	var cols [][]int
	used := 0
	for gi, g := range groups {
		n := len(g.entries) + 1
		if len(cols) == 0 || used+1+n > limit {
			cols = append(cols, nil)
			used = -1
		}
		cols[len(cols)-1] = append(cols[len(cols)-1], gi)
		used += 1 + n
	}
	return cols
}

// helpView is the full help (`?`) over the screen: whether it is open, and how far it is
// scrolled when it is taller than the terminal. The root opens it, draws it (fullHelp)
// and clamps its scroll to the page in relayout. It also keeps the footer's line of key hints,
// memoised.
type helpView struct {
	c      *common
	open   bool
	offset int
	// line is the footer's key hints, memoised: it rarely changes but costs lipgloss renders
	// each frame (shortLine).
	line memo
	// mode is how the auto refresh reads (autoRefresh.mode), set by the parent: the title
	// says it when there is room (the table's help only).
	mode string
}

// Update scrolls or closes the help on a key (other messages leave it as it is). It has no
// action for the root (nil): closing is its own.
func (h helpView) Update(msg tea.Msg) (helpView, action) {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return h, nil
	}
	k := h.c.keys
	switch {
	case key.Matches(km, k.Help, k.Clear, k.Quit, k.Back):
		h.open, h.offset = false, 0
	case key.Matches(km, k.Down):
		h.offset++
	case key.Matches(km, k.Up):
		h.offset = max(0, h.offset-1)
	case key.Matches(km, k.PageDown, k.HalfDown):
		h.offset += h.c.height / 2
	case key.Matches(km, k.PageUp, k.HalfUp):
		h.offset = max(0, h.offset-h.c.height/2)
	case key.Matches(km, k.Top):
		h.offset = 0
	}
	return h, nil
}
