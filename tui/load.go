// Loading: the first load, refreshes, and installing a loaded workbook while carrying each
// tab's view state (cursor, filter, marks) over.

package tui

import (
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
)

// startLoad sends a load (first load, retry, refresh).
func (m *Model) startLoad() tea.Cmd {
	if m.store == nil {
		return nil
	}
	m.load.seq++
	m.load.loading = true
	m.load.gen = m.load.dataGen
	return tea.Batch(m.load.loadCmd(m.life.ctx, m.store, m.tabs.filtering()), m.spinner.Tick)
}

// refresh is the `r` key.
func (m *Model) refresh() tea.Cmd {
	switch {
	case m.replay.running():
		return m.toasts.sayf(toastInfo, "a replay is running; the table reloads when it ends")
	case m.replay.planning:
		return m.toasts.sayf(toastInfo, "%s", planningNote)
	case m.load.loading:
		return m.toasts.sayf(toastInfo, "already loading…")
	case m.writes.writing:
		m.writes.refreshQueued = true
		return m.toasts.sayf(toastInfo, "refreshing when the write finishes…")
	}
	return m.startLoad()
}

// onLoaded installs a loaded workbook, carrying each tab's view state over.
func (m *Model) onLoaded(msg loadedMsg) tea.Cmd {
	if msg.seq != m.load.seq {
		return nil // an older load; a newer one is in flight
	}
	m.load.loading = false
	m.load.feed, m.load.progress = nil, loadProgress{}
	if m.load.gen != m.load.dataGen {
		// A write landed while this read was in flight: its data predates the write and
		// would undo the optimistic update on screen. Read again.
		return m.startLoad()
	}
	return m.install(msg)
}

// install puts a good load's workbook (or a hub's push) in place, carrying each tab's view
// state over; a failed one keeps the data on screen and says why.
func (m *Model) install(msg loadedMsg) tea.Cmd {
	if msg.err != nil {
		m.load.err = msg.err
		if !m.load.hasData {
			return nil // the error view shows it, with r to retry
		}
		return m.toasts.sayf(toastError, "refresh failed (showing the data from %s): %v", ago(m.c.now(), m.load.at), msg.err)
	}
	m.hub.pushed = nil // older than this
	m.load.err = nil
	m.writes.lastErr = nil
	wb := msg.wb
	m.book.title = wb.Title
	if wb.SpreadsheetID != "" {
		m.book.id = wb.SpreadsheetID
	}
	m.load.at = wb.Loaded
	if m.load.at.IsZero() {
		m.load.at = m.c.now()
	}
	m.tabs.missing = wb.Missing

	tabs := loadedTabs(msg)
	activeName := ""
	if ts := m.tabs.current(); ts != nil {
		activeName = ts.name()
	}
	newMsgs, cmds := m.adoptTabs(tabs)
	m.tabs.list = tabs
	m.tabs.gen++
	m.tabs.active = 0
	for i, ts := range tabs {
		if activeName != "" && strings.EqualFold(ts.name(), activeName) {
			m.tabs.active = i
		}
	}
	if m.load.hasData && newMsgs > 0 {
		cmds = append(cmds, m.toasts.sayf(toastInfo, "%d new %s", newMsgs, words.Plural(newMsgs, "message", "messages")))
	}
	m.load.hasData = true
	m.preview.cache = previewCache{}
	m.syncDetail()
	m.tabs.staleTick = m.c.now()
	m.tabs.recountStale(m.c.now())
	if m.replay.runReload {
		m.replay.runReload = false
		cmds = append(cmds, m.toasts.sayf(toastInfo, "reloaded: the rows show the statuses the replay wrote back"))
	}
	return tea.Batch(cmds...)
}

// loadedTabs are the tabs of a load, broken ones included, in DESIGN's role order.
func loadedTabs(msg loadedMsg) []*tabState {
	var tabs []*tabState
	for i, t := range msg.wb.Tabs {
		tabs = append(tabs, newTabState(t.Config, msg.tabs[i], nil))
	}
	for _, b := range msg.wb.Broken {
		tabs = append(tabs, newTabState(b.Config, nil, b.Err))
	}
	sort.SliceStable(tabs, func(a, b int) bool { return roleRank(tabs[a].cfg.Role) < roleRank(tabs[b].cfg.Role) })
	return tabs
}

// adoptTabs carries each tab's view state over from the tab of the same name, counts the
// inbox messages that are new since the last load, and toasts a broken tab once.
func (m *Model) adoptTabs(tabs []*tabState) (newMsgs int, cmds []tea.Cmd) {
	for _, ts := range tabs {
		old := m.tabs.named(ts.name())
		newMsgs += newMessages(old, ts)
		ts.adopt(old, max(1, m.geo.tableH))
		if ts.err != nil && !m.tabs.brokenOK[ts.name()] {
			m.tabs.brokenOK[ts.name()] = true
			cmds = append(cmds, m.toasts.sayf(toastError, "%v", ts.err))
		}
		if ts.data != nil && len(ts.cfg.TableColumns) > 0 && !m.tabs.brokenOK["table "+ts.name()] {
			// Names the config's table list has that the sheet has no column for: said once.
			if unknown := unknownNames(ts); len(unknown) > 0 {
				m.tabs.brokenOK["table "+ts.name()] = true
				cmds = append(cmds, m.toasts.sayf(toastError, "%s: the config's table lists columns the sheet doesn't have, left out: %s", cellLine(ts.name()), cellLine(strings.Join(unknown, ", "))))
			}
		}
	}
	return newMsgs, cmds
}

// unknownNames are the names ts's table list ([tabs.ROLE] table) has that neither a column of
// its role nor one of its sheet's headers is.
func unknownNames(ts *tabState) []string {
	role := roleColumns(&model.Table{Config: model.TabConfig{Role: ts.cfg.Role}, Header: ts.data.table.Header})
	_, unknown := chosenColumns(ts.data.table, role, ts.cfg.TableColumns)
	return unknown
}

// newMessages counts the inbox rows of ts whose ID the previous load of the tab (old) didn't
// have.
func newMessages(old, ts *tabState) int {
	if old == nil || old.data == nil || ts.data == nil || ts.cfg.Role != model.RoleInbox {
		return 0
	}
	n := 0
	for id := range ts.data.byID {
		if _, seen := old.data.byID[id]; !seen {
			n++
		}
	}
	return n
}

// roleRank orders tabs as DESIGN lists the roles.
func roleRank(r model.Role) int {
	for i, x := range model.Roles {
		if x == r {
			return i
		}
	}
	return len(model.Roles)
}

// syncDetail points an open detail view at the current version of its record (after a write
// or a refresh), keeping its focus and scroll; a record that vanished stays as it was.
func (m *Model) syncDetail() {
	d := m.detail
	if d == nil || d.rec.ID == "" {
		return
	}
	ts := m.tabs.named(d.tab)
	if ts == nil || ts.data == nil {
		return
	}
	ri, ok := ts.data.byID[d.rec.ID]
	if !ok {
		d.gone = true // the keys that act on it say so rather than touch another row
		return
	}
	nd := newDetail(m.c, ts.data.table, &ts.data.table.Records[ri])
	nd.focus = min(d.focus, len(nd.fields)-1)
	y := d.vp.YOffset()
	nd.setSize(d.width, d.vp.Height()+1)
	nd.vp.SetYOffset(y)
	m.detail = nd
}
