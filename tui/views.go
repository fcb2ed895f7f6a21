// Saved views and the command line, as gh-dash's sections and k9s's `:` have them.
//
// A tab's views are named filters from the config (`[[tabs.inbox.views]]`, name and filter).
// When the active tab has any, a line under the tab bar names them: "all" (no filter) and
// each view, the one whose filter is the tab's in brackets; `]` and `[` switch to the next
// and the previous one. A filter typed over a view is the tab's filter like any other: no view
// is then bracketed.
//
// `:` opens the command line on the footer's last line: `:inbox`, `:failed_calls`, `:jobs`
// (a tab by its name, its role, or its number), `:view NAME` (`:v NAME`), `:filter TEXT`,
// `:help`, `:q` (`:quit`). tab completes (again: the next candidate), enter runs, esc closes.

package tui

import (
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/model"
)

// viewAll is the name of a tab without a filter in the view bar and in `:view`.
const viewAll = "all"

// views are the tab's saved views, "all" first.
func (ts *tabState) views() []model.View {
	if len(ts.cfg.Views) == 0 {
		return nil
	}
	return append([]model.View{{Name: viewAll}}, ts.cfg.Views...)
}

// activeView is the index in views() of the view whose filter is the tab's, -1 for none.
func (ts *tabState) activeView() int {
	q := ts.filterQuery()
	for i, v := range ts.views() {
		if strings.TrimSpace(v.Filter) == q {
			return i
		}
	}
	return -1
}

// showView puts the tab on view i of views().
func (t *tabSet) showView(ts *tabState, i int) {
	vs := ts.views()
	if i < 0 || i >= len(vs) {
		return
	}
	ts.applyFilter(vs[i].Filter)
	ts.scrollTo(t.tableH)
}

// stepView goes to the next (d = 1) or previous (d = -1) view of the active tab, wrapping;
// from a filter that is no view, the next is the first view after "all", the previous the
// last.
func (t *tabSet) stepView(d int) (said string) {
	ts := t.current()
	if ts == nil || ts.data == nil {
		return ""
	}
	vs := ts.views()
	if len(vs) == 0 {
		return "this tab has no saved views: add [[tabs." + string(ts.cfg.Role) + ".views]] with a name and a filter to the config"
	}
	i := ts.activeView()
	switch {
	case i < 0 && d > 0:
		i = 1
	case i < 0:
		i = len(vs) - 1
	default:
		i = ((i+d)%len(vs) + len(vs)) % len(vs)
	}
	t.showView(ts, i)
	return ""
}

// viewBarLines is the line under the tab bar naming the active tab's views, the active one
// bracketed; none when the tab has no views.
func (t *tabSet) viewBarLines(c *common, w int) []string {
	ts := t.current()
	if ts == nil || ts.data == nil {
		return nil
	}
	vs := ts.views()
	if len(vs) == 0 {
		return nil
	}
	st := c.styles
	active := ts.activeView()
	parts := make([]string, len(vs))
	for i, v := range vs {
		name := truncate(cellLine(v.Name), 20)
		if i == active {
			parts[i] = st.paint(st.Bold, "["+name+"]")
		} else {
			parts[i] = " " + name + " "
		}
	}
	line := " views:" + strings.Join(parts, "")
	if hint := pairKeys(c.keys.PrevView, c.keys.NextView); hint != "" {
		line += st.paint(st.Muted, "  "+hint+" switch")
	}
	return []string{fitStyled(line, w)}
}

// cmdLine is the command line (`:`): open or not, and the text typed; completion's
// candidates while tab cycles through them.
type cmdLine struct {
	c      *common
	tabs   *tabSet // what completion offers (tabSet.commandCandidates)
	open   bool
	input  lineInput
	cycle  []string // the candidates tab cycles through, for the text typed before the first tab
	cycled int
}

// runCommandAction: the command line's text, to run.
type runCommandAction struct{ text string }

func (runCommandAction) isAction() {}

// Update edits the line: enter runs it, esc closes it, tab completes from the tabs'
// candidates (the next one at each press), anything else edits the text.
func (p cmdLine) Update(msg tea.Msg) (cmdLine, action) {
	k := p.c.keys
	if km, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(km, k.FilterKeep):
			p.open = false
			return p, runCommandAction{strings.TrimSpace(p.input.Value())}
		case key.Matches(km, k.FilterCancel):
			p.open = false
			return p, nil
		case key.Matches(km, k.InputComplete):
			if p.cycle == nil {
				typed := strings.ToLower(p.input.Value())
				for _, cand := range p.tabs.commandCandidates() {
					if strings.HasPrefix(strings.ToLower(cand), typed) {
						p.cycle = append(p.cycle, cand)
					}
				}
				p.cycled = -1
			}
			if len(p.cycle) > 0 {
				p.cycled = (p.cycled + 1) % len(p.cycle)
				p.input.SetValue(p.cycle[p.cycled])
			}
			return p, nil
		}
	}
	p.cycle = nil
	p.input, _ = p.input.Update(msg)
	return p, nil
}

// line is the command line's line in the footer.
func (p cmdLine) line(w int) string {
	st := p.c.styles
	text, _ := p.input.View(max(1, w-filterPromptWidth-1))
	if text == "" {
		text = st.paint(st.Muted, "a tab (inbox, 2, …), view NAME, filter TEXT, help, q · tab completes")
	}
	return fitStyled(" "+st.paint(st.FilterPrompt, ":")+" "+text, w)
}

// commandCandidates are what `:` completes to: the tabs (by name and by role), the active
// tab's views, and the other commands.
func (t *tabSet) commandCandidates() []string {
	var out []string
	for _, ts := range t.list {
		out = append(out, ts.name())
	}
	for _, r := range model.Roles {
		if !slices.ContainsFunc(out, func(s string) bool { return strings.EqualFold(s, string(r)) }) {
			out = append(out, string(r))
		}
	}
	if ts := t.current(); ts != nil {
		for _, v := range ts.views() {
			out = append(out, "view "+v.Name)
		}
	}
	return append(out, "filter ", "help", "quit")
}

// runCommand carries out a command line.
func (m *Model) runCommand(text string) tea.Cmd {
	if text == "" {
		return nil
	}
	verb, arg, _ := strings.Cut(text, " ")
	arg = strings.TrimSpace(arg)
	switch strings.ToLower(verb) {
	case "q", "quit", "q!":
		return m.requestQuit()
	case "help", "h", "?":
		m.help.open, m.help.offset = true, 0
		return nil
	case "view", "v":
		return m.commandView(arg)
	case "filter", "f":
		ts := m.tabs.current()
		if ts == nil || ts.data == nil {
			return nil
		}
		ts.applyFilter(arg)
		ts.scrollTo(m.tabs.tableH)
		return nil
	}
	// A tab: its name, its role or its number.
	for i, ts := range m.tabs.list {
		if strings.EqualFold(ts.name(), text) || strings.EqualFold(string(ts.cfg.Role), text) || text == strconv.Itoa(i+1) {
			m.switchTab(i)
			return nil
		}
	}
	return m.toasts.sayf(toastError, "unknown command %q: a tab (%s), view NAME, filter TEXT, help or q", truncate(cellLine(text), 30), strings.Join(m.tabNames(), ", "))
}

// commandView is `:view NAME`: the active tab's view of that name ("all": no filter).
func (m *Model) commandView(name string) tea.Cmd {
	ts := m.tabs.current()
	if ts == nil || ts.data == nil {
		return nil
	}
	vs := ts.views()
	for i, v := range vs {
		if strings.EqualFold(v.Name, name) {
			m.tabs.showView(ts, i)
			return nil
		}
	}
	if len(vs) == 0 {
		return m.toasts.sayf(toastInfo, "%s", "this tab has no saved views: add [[tabs."+string(ts.cfg.Role)+".views]] with a name and a filter to the config")
	}
	var names []string
	for _, v := range vs {
		names = append(names, v.Name)
	}
	return m.toasts.sayf(toastError, "no view %q on %s: %s", truncate(cellLine(name), 20), cellLine(ts.name()), cellLine(strings.Join(names, ", ")))
}

// tabNames are the tabs' names, for a message.
func (m *Model) tabNames() []string {
	var out []string
	for _, ts := range m.tabs.list {
		out = append(out, cellLine(ts.name()))
	}
	return out
}

// switchTab puts tab i on screen, as its number key does.
func (m *Model) switchTab(i int) {
	if i != m.tabs.active && i >= 0 && i < len(m.tabs.list) {
		m.tabs.active = i
		m.onAction(tabChangedAction{})
	}
}

// saidInfo toasts s, when there is something to say.
func (m *Model) saidInfo(s string) tea.Cmd {
	if s == "" {
		return nil
	}
	return m.toasts.sayf(toastInfo, "%s", s)
}
