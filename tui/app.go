// Package tui is triage's terminal UI: a bubbletea program over the sheet's tabs (Inbox,
// failed_calls, Jobs) built for k9s / neomutt habits, 80x24 over SSH, tmux and NO_COLOR.
//
// Shape: Model is the root and the only thing returning a tea.View (it alone sets terminal
// modes). Components (the table of a tab, the detail view, dialogs, toasts) take a shared
// *common context and return strings. Every Store call runs in a tea.Cmd and answers with a
// typed message (invariant 10); every piece of sheet text goes through model.Sanitize or
// SanitizeLine before it is measured or drawn (invariant 9).
//
// Rows are shown newest first in the inbox and dead-letter tabs (by timestamp, stable) and in
// sheet order in the queue tab. Each tab keeps its own cursor, filter and marks; bulk actions
// apply to the marked rows the current filter shows, else to the cursor row.
//
// Dead letters are replayed through Options.Replayer (replay.go: confirm with a dry run,
// progress, cancel, report, the halt banner) and discarded with D; the queue's stale claims
// are requeued with Q (queue.go). y and o copy through OSC 52, wrapped for tmux and GNU
// screen (clipboard.go). The environment (tea.EnvMsg) and the color profile decide how plain
// the screen is: NO_COLOR or a profile without colors draws markers instead of colors,
// TERM=dumb also draws ASCII.
package tui

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/triage-dev/triage/model"
)

// Store is what the UI needs from the Sheets store (sheets.Store satisfies it).
type Store interface {
	Load(ctx context.Context) (*model.Workbook, error)
	Apply(ctx context.Context, edits []model.Edit) (model.ApplyResult, error)
	ReadOnly() bool
}

// Options configures the UI.
type Options struct {
	// Store loads and writes the sheet.
	Store Store
	// SpreadsheetID is shown until the workbook (and its title) has loaded.
	SpreadsheetID string
	// KeyMap is DefaultKeyMap() unless overridden (a zero KeyMap means the default).
	KeyMap KeyMap
	// Refresh is the auto-refresh interval; 0 turns it off.
	Refresh time.Duration
	// NoColor renders without any color or other styling (NO_COLOR set to any non-empty
	// value); cursor, marks and problems are then shown as `>`, `*` and `!`.
	NoColor bool
	// Now is the clock (default time.Now); tests pin it.
	Now func() time.Time
	// Banner is an optional one-line note shown in the header (e.g. "demo").
	Banner string
	// Replayer replays dead letters from the TUI (R, A). Nil: those keys say which
	// `triage replay` command would do it.
	Replayer Replayer
	// Initial, when set, is a workbook already loaded from Store; the first screen shows it
	// instead of loading again.
	Initial *model.Workbook
	// Mouse turns on mouse reporting, for wheel scrolling in terminals that don't turn the
	// wheel into arrow keys. Off by default: with it on, selecting text needs shift. Nothing
	// needs the mouse either way.
	Mouse bool
}

// Minimum usable terminal size; below it the UI says so instead of drawing a broken layout.
const (
	minWidth  = 60
	minHeight = 15
)

// Model is the root model of the TUI. It implements tea.Model.
type Model struct {
	c      *common
	store  Store
	opts   Options
	ctx    context.Context
	cancel context.CancelFunc

	title    string
	tabs     []*tabState
	active   int
	missing  []model.TabConfig
	brokenOK map[string]bool // broken tabs already toasted, so a refresh doesn't repeat it
	loadedAt time.Time
	hasData  bool

	loading       bool
	loadSeq       int
	loadGen       int   // dataGen when the in-flight load started
	loadErr       error // the last load failure, nil after a good load
	dataGen       int   // bumped whenever rows change locally (a write landed)
	writing       bool
	inflight      *writeOp // the write being sent, while writing
	refreshQueued bool
	// quitAfterWrite: q (or ctrl+c) came while a write was in flight; quit once its result
	// is in (and shown, if it didn't all land). A second ctrl+c quits at once.
	quitAfterWrite bool

	filtering   bool
	input       lineInput
	showPreview bool
	preview     previewCache
	detail      *detail
	dialog      dialog
	pending     pendingAction
	showHelp    bool
	helpOffset  int // scroll of the help screen, when it is taller than the terminal
	toasts      toasts
	undo        []writeOp
	spinner     spinner.Model

	// The spreadsheet's ID as loaded (for sheet links), else Options.SpreadsheetID.
	spreadsheetID string

	// Replay (replay.go): the plan awaiting confirmation, the run (in progress, or finished
	// and shown until closed), and the halt banner, which stays until dismissed.
	planSeq       int
	planning      bool
	pendingReplay *replayPlannedMsg
	runSeq        int
	run           *replayRun
	showRun       bool
	runListH      int
	halt          *ReplayHalt
	quitAfterRun  bool
	runReload     bool      // the load in flight is the reload after a run: say when it lands
	staleTick     time.Time // when the queue tabs' stale counts were last recomputed

	// Memoised lines that rarely change but cost lipgloss renders each frame; keyed by
	// everything they depend on.
	helpLine, tabLine memo
	tabsGen           int // bumped whenever tabs, names or counts change

	// Layout, recomputed at the end of every Update so View only draws.
	bodyH, tableW, tableH, previewW, previewH int
	previewRight                              bool
}

var _ tea.Model = (*Model)(nil)

// New builds the root model.
func New(opts Options) *Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	km := opts.KeyMap
	if km.isZero() {
		km = DefaultKeyMap()
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &common{
		keys:    &km,
		now:     opts.Now,
		noColor: opts.NoColor,
		banner:  opts.Banner,
		width:   80,
		height:  24,
	}
	if opts.Store != nil {
		c.readOnly = opts.Store.ReadOnly()
	}
	// Dark until the terminal answers tea.RequestBackgroundColor: most terminals are.
	c.setBackground(true)
	m := &Model{c: c, store: opts.Store, opts: opts, ctx: ctx, cancel: cancel, brokenOK: map[string]bool{}, spreadsheetID: opts.SpreadsheetID}
	m.spinner = spinner.New(spinner.WithSpinner(spinner.MiniDot))
	m.loading = true
	m.loadSeq = 1
	m.relayout()
	return m
}

// isZero reports whether no action has any key (an Options literal without a KeyMap).
func (k *KeyMap) isZero() bool {
	for _, a := range k.actions() {
		if len(a.b.Keys()) > 0 || a.b.Help().Desc != "" {
			return false
		}
	}
	return true
}

// Init starts the first load, asks the terminal for its background color and starts the
// clocks.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{tea.RequestBackgroundColor, m.spinner.Tick, clockTick()}
	if m.opts.Initial != nil {
		m.loadGen = m.dataGen
		cmds = append(cmds, preloadedCmd(m.opts.Initial, m.loadSeq))
	} else if m.store != nil {
		m.loadGen = m.dataGen
		cmds = append(cmds, loadCmd(m.ctx, m.store, m.loadSeq))
	}
	if m.opts.Refresh > 0 {
		cmds = append(cmds, refreshTick(m.opts.Refresh))
	}
	return tea.Batch(cmds...)
}

// Update handles a message. It never blocks: anything slow is returned as a Cmd.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	m.relayout()
	return m, cmd
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.c.width, m.c.height = msg.Width, msg.Height
		return nil
	case tea.BackgroundColorMsg:
		m.c.setBackground(msg.IsDark())
		m.restyled()
		return nil
	case tea.EnvMsg:
		// The terminal's environment (over SSH, the client's): TERM=dumb draws plain ASCII,
		// NO_COLOR (any non-empty value) draws without color, TMUX and TERM pick the clipboard
		// sequence.
		m.c.term = termInfo{term: msg.Getenv("TERM")}
		_, m.c.term.tmux = msg.LookupEnv("TMUX")
		ascii := m.c.term.dumb()
		plain := ascii || msg.Getenv("NO_COLOR") != ""
		if ascii != m.c.ascii || plain != m.c.envPlain {
			m.c.ascii, m.c.envPlain = ascii, plain
			m.c.restyle()
			m.restyled()
		}
		return nil
	case tea.ColorProfileMsg:
		// Without colors the cursor row and marks would be invisible: draw the markers.
		plain := msg.Profile == colorprofile.NoTTY || msg.Profile == colorprofile.ASCII
		if plain != m.c.profilePlain {
			m.c.profilePlain = plain
			m.c.restyle()
			m.restyled()
		}
		return nil
	case loadedMsg:
		return m.onLoaded(msg)
	case appliedMsg:
		return m.onApplied(msg)
	case replayPlannedMsg:
		return m.onReplayPlanned(msg)
	case replayProgressMsg:
		return m.onReplayProgress(msg)
	case replayDoneMsg:
		return m.onReplayDone(msg)
	case refreshTickMsg:
		next := refreshTick(m.opts.Refresh)
		if m.loading || m.writing || m.planning || m.running() || m.store == nil {
			// A write in flight would be overwritten by a read that started before it;
			// skip this round rather than queue up behind it. A replay reloads when it ends.
			return next
		}
		return tea.Batch(next, m.startLoad())
	case clockMsg:
		if now := m.c.now(); now.Sub(m.staleTick) >= staleRecount {
			m.staleTick = now
			m.recountStale()
		}
		return clockTick()
	case toastExpiredMsg:
		m.toasts.expire(msg.id)
		return nil
	case spinner.TickMsg:
		if !m.loading && !m.writing && !m.running() {
			return nil // let the tick chain die while idle: no redraws, no bytes
		}
		var cmd tea.Cmd
		m.spinner, cmd = m.spinner.Update(msg)
		return cmd
	case tea.MouseWheelMsg:
		return m.onWheel(msg)
	case tea.PasteMsg:
		if m.filtering {
			return m.updateInput(msg)
		}
		return nil
	case tea.KeyPressMsg:
		return m.onKey(msg)
	}
	return nil
}

// activeTab is the selected tab, or nil before the first load.
func (m *Model) activeTab() *tabState {
	if m.active < 0 || m.active >= len(m.tabs) {
		return nil
	}
	return m.tabs[m.active]
}

// tabNamed finds a tab by its sheet name.
func (m *Model) tabNamed(name string) *tabState {
	for _, ts := range m.tabs {
		if strings.EqualFold(ts.name(), name) {
			return ts
		}
	}
	return nil
}

// restyled drops every rendering cached with the old styles.
func (m *Model) restyled() {
	m.helpLine, m.tabLine = memo{}, memo{}
	m.preview = previewCache{}
	if m.c.ascii {
		m.spinner.Spinner = spinner.Line
	}
	if m.detail != nil {
		m.detail.render()
	}
}

func (m *Model) toast(level toastLevel, format string, args ...any) tea.Cmd {
	return m.toasts.push(level, fmt.Sprintf(format, args...))
}

func (m *Model) quit() tea.Cmd {
	m.cancel() // in-flight loads and writes stop waiting
	return tea.Quit
}

// startLoad sends a load (first load, retry, refresh).
func (m *Model) startLoad() tea.Cmd {
	if m.store == nil {
		return nil
	}
	m.loadSeq++
	m.loading = true
	m.loadGen = m.dataGen
	return tea.Batch(loadCmd(m.ctx, m.store, m.loadSeq), m.spinner.Tick)
}

// refresh is the `r` key.
func (m *Model) refresh() tea.Cmd {
	switch {
	case m.running():
		return m.toast(toastInfo, "a replay is running; the table reloads when it ends")
	case m.planning:
		return m.toast(toastInfo, "%s", planningNote)
	case m.loading:
		return m.toast(toastInfo, "already loading…")
	case m.writing:
		m.refreshQueued = true
		return m.toast(toastInfo, "refreshing when the write finishes…")
	}
	return m.startLoad()
}

// onLoaded installs a loaded workbook, carrying each tab's view state over.
func (m *Model) onLoaded(msg loadedMsg) tea.Cmd {
	if msg.seq != m.loadSeq {
		return nil // an older load; a newer one is in flight
	}
	m.loading = false
	if m.loadGen != m.dataGen {
		// A write landed while this read was in flight: its data predates the write and
		// would undo the optimistic update on screen. Read again.
		return m.startLoad()
	}
	if msg.err != nil {
		m.loadErr = msg.err
		if !m.hasData {
			return nil // the error view shows it, with r to retry
		}
		return m.toast(toastError, "refresh failed (showing the data from %s): %v", ago(m.c.now(), m.loadedAt), msg.err)
	}
	m.loadErr = nil
	wb := msg.wb
	m.title = wb.Title
	if wb.SpreadsheetID != "" {
		m.spreadsheetID = wb.SpreadsheetID
	}
	m.loadedAt = wb.Loaded
	if m.loadedAt.IsZero() {
		m.loadedAt = m.c.now()
	}
	m.missing = wb.Missing

	var tabs []*tabState
	for i, t := range wb.Tabs {
		tabs = append(tabs, newTabState(t.Config, msg.tabs[i], nil))
	}
	for _, b := range wb.Broken {
		tabs = append(tabs, newTabState(b.Config, nil, b.Err))
	}
	sort.SliceStable(tabs, func(a, b int) bool { return roleRank(tabs[a].cfg.Role) < roleRank(tabs[b].cfg.Role) })

	var cmds []tea.Cmd
	activeName := ""
	if ts := m.activeTab(); ts != nil {
		activeName = ts.name()
	}
	newMsgs := 0
	for _, ts := range tabs {
		old := m.tabNamed(ts.name())
		if old != nil && old.data != nil && ts.data != nil {
			if ts.cfg.Role == model.RoleInbox {
				for id := range ts.data.byID {
					if _, seen := old.data.byID[id]; !seen {
						newMsgs++
					}
				}
			}
		}
		ts.adopt(old, max(1, m.tableH))
		if ts.err != nil && !m.brokenOK[ts.name()] {
			m.brokenOK[ts.name()] = true
			cmds = append(cmds, m.toast(toastError, "%v", ts.err))
		}
	}
	m.tabs = tabs
	m.tabsGen++
	m.active = 0
	for i, ts := range tabs {
		if activeName != "" && strings.EqualFold(ts.name(), activeName) {
			m.active = i
		}
	}
	if m.hasData && newMsgs > 0 {
		cmds = append(cmds, m.toast(toastInfo, "%d new %s", newMsgs, plural(newMsgs, "message", "messages")))
	}
	m.hasData = true
	m.preview = previewCache{}
	m.syncDetail()
	m.staleTick = m.c.now()
	m.recountStale()
	if m.runReload {
		m.runReload = false
		cmds = append(cmds, m.toast(toastInfo, "reloaded: the rows show the statuses the replay wrote back"))
	}
	return tea.Batch(cmds...)
}

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
	ts := m.tabNamed(d.tab)
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

// onWheel scrolls with the mouse wheel, when the terminal sends it. Nothing needs a mouse.
func (m *Model) onWheel(msg tea.MouseWheelMsg) tea.Cmd {
	if m.dialog != nil {
		d, act := m.dialog.Update(msg)
		m.dialog = d
		return m.onAction(act)
	}
	if m.showHelp {
		return nil
	}
	if m.showRun && m.run != nil {
		d := 3
		if msg.Button == tea.MouseWheelUp {
			d = -3
		}
		m.run.scroll(d, m.runListH)
		return nil
	}
	if m.detail != nil {
		var cmd tea.Cmd
		m.detail, cmd = m.detail.Update(msg)
		return cmd
	}
	ts := m.activeTab()
	if ts == nil || ts.data == nil {
		return nil
	}
	switch msg.Button {
	case tea.MouseWheelDown:
		ts.move(3, m.tableH)
	case tea.MouseWheelUp:
		ts.move(-3, m.tableH)
	}
	return nil
}

// onKey routes a key to whatever has focus: a dialog, the help, the filter prompt, the
// detail view, else the table.
func (m *Model) onKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys
	if msg.String() == "ctrl+c" {
		if m.running() {
			// First ctrl+c cancels the run (calls in flight finish and are written back), the
			// second quits once that is done, the third quits at once.
			m.dialog = nil
			if !m.run.cancelling {
				m.cancelRun()
				return m.toast(toastError, "cancelling: calls in flight finish and are written back; ctrl+c again quits when they are")
			}
			return m.cancelAndQuit()
		}
		if m.writing && !m.quitAfterWrite {
			return m.requestQuit()
		}
		return m.quit()
	}
	if m.c.width < minWidth || m.c.height < minHeight || !m.hasData {
		switch {
		case key.Matches(msg, k.Quit):
			return m.requestQuit()
		case key.Matches(msg, k.Refresh) && !m.hasData && !m.loading:
			return m.startLoad()
		}
		return nil
	}
	if m.dialog != nil {
		d, act := m.dialog.Update(msg)
		m.dialog = d
		return m.onAction(act)
	}
	if m.showHelp {
		switch {
		case key.Matches(msg, k.Help, k.Clear, k.Quit) || msg.String() == "esc":
			m.showHelp = false
			m.helpOffset = 0
		case key.Matches(msg, k.Down):
			m.helpOffset++
		case key.Matches(msg, k.Up):
			m.helpOffset = max(0, m.helpOffset-1)
		case key.Matches(msg, k.PageDown, k.HalfDown):
			m.helpOffset += m.c.height / 2
		case key.Matches(msg, k.PageUp, k.HalfUp):
			m.helpOffset = max(0, m.helpOffset-m.c.height/2)
		case key.Matches(msg, k.Top):
			m.helpOffset = 0
		}
		return nil
	}
	if m.showRun && m.run != nil {
		return m.onRunKey(msg)
	}
	if m.filtering {
		return m.onFilterKey(msg)
	}
	if m.detail != nil {
		return m.onDetailKey(msg)
	}
	return m.onTableKey(msg)
}

// onFilterKey edits the live filter: every keystroke re-filters (narrowing from the previous
// result where that is safe), enter keeps the filter, esc clears it.
func (m *Model) onFilterKey(msg tea.KeyPressMsg) tea.Cmd {
	ts := m.activeTab()
	switch msg.String() {
	case "enter":
		m.filtering = false
		return nil
	case "esc":
		m.filtering = false
		m.input.SetValue("")
		if ts != nil {
			ts.applyFilter("")
		}
		return nil
	case "up", "down":
		// Arrows move the cursor while typing (letters are text here).
		if ts != nil && ts.data != nil {
			d := 1
			if msg.String() == "up" {
				d = -1
			}
			ts.move(d, m.tableH)
		}
		return nil
	}
	return m.updateInput(msg)
}

func (m *Model) updateInput(msg tea.Msg) tea.Cmd {
	m.input.Update(msg)
	if ts := m.activeTab(); ts != nil && m.input.Value() != ts.filter.query {
		ts.applyFilter(m.input.Value())
		ts.scrollTo(m.tableH)
	}
	return nil
}

// onDetailKey handles the detail view: back, copy the focused field, set status of this
// record, scroll.
func (m *Model) onDetailKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys
	switch {
	case key.Matches(msg, k.Clear, k.Quit) || msg.String() == "esc":
		m.detail = nil
		return nil
	case key.Matches(msg, k.Help):
		m.showHelp = true
		return nil
	case key.Matches(msg, k.Copy):
		f, ok := m.detail.focused()
		if !ok {
			return nil
		}
		v := f.copyValue()
		if v == "" {
			return m.toast(toastInfo, "%s is empty: nothing copied", f.label)
		}
		return m.copyText(f.label, v)
	case key.Matches(msg, k.CopyLink):
		return m.copyLink(m.tabNamed(m.detail.tab), &m.detail.rec)
	case key.Matches(msg, k.NextTab):
		m.detail.setFocus(m.detail.focus + 1)
		return nil
	case key.Matches(msg, k.PrevTab):
		m.detail.setFocus(m.detail.focus - 1)
		return nil
	case key.Matches(msg, k.SetStatus):
		return m.startSetStatus(true)
	case key.Matches(msg, k.ClearError):
		return m.startClearError(true)
	case key.Matches(msg, k.Discard):
		return m.startDiscard(true)
	case key.Matches(msg, k.Replay):
		return m.startReplay(false, true)
	case key.Matches(msg, k.Cancel):
		return m.cancelRunKey()
	case key.Matches(msg, k.Progress):
		return m.showProgress()
	case key.Matches(msg, k.Undo):
		return m.startUndo()
	case key.Matches(msg, k.Refresh):
		return m.refresh()
	}
	var cmd tea.Cmd
	m.detail, cmd = m.detail.Update(msg)
	return cmd
}

// onTableKey handles the table: navigation, tabs, views, marks and actions.
func (m *Model) onTableKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys
	ts := m.activeTab()
	h := m.tableH
	switch {
	case key.Matches(msg, k.Quit):
		return m.requestQuit()
	case key.Matches(msg, k.Help):
		m.showHelp = true
	case key.Matches(msg, k.NextTab):
		m.switchTab(m.active + 1)
	case key.Matches(msg, k.PrevTab):
		m.switchTab(m.active - 1 + len(m.tabs))
	case key.Matches(msg, k.Tab1):
		m.selectTab(0)
	case key.Matches(msg, k.Tab2):
		m.selectTab(1)
	case key.Matches(msg, k.Tab3):
		m.selectTab(2)
	case key.Matches(msg, k.Refresh):
		return m.refresh()
	case key.Matches(msg, k.Cancel):
		return m.cancelRunKey()
	case key.Matches(msg, k.Progress):
		return m.showProgress()
	case key.Matches(msg, k.Preview):
		m.showPreview = !m.showPreview
	case key.Matches(msg, k.Clear):
		switch {
		case m.toasts.dismissErrors():
		case m.halt != nil:
			m.halt = nil
		case ts != nil && ts.filter.query != "":
			ts.applyFilter("")
			m.input.SetValue("")
		}
	case ts == nil || ts.data == nil:
		// A broken tab: nothing below applies.
		return nil
	case key.Matches(msg, k.Down):
		ts.move(1, h)
	case key.Matches(msg, k.Up):
		ts.move(-1, h)
	case key.Matches(msg, k.Top):
		ts.setCursor(0, h)
	case key.Matches(msg, k.Bottom):
		ts.setCursor(len(ts.visible)-1, h)
	case key.Matches(msg, k.HalfDown):
		ts.move(max(1, h/2), h)
	case key.Matches(msg, k.HalfUp):
		ts.move(-max(1, h/2), h)
	case key.Matches(msg, k.PageDown):
		ts.move(max(1, h), h)
	case key.Matches(msg, k.PageUp):
		ts.move(-max(1, h), h)
	case key.Matches(msg, k.Filter):
		m.filtering = true
		m.input.SetValue(ts.filter.query)
		return nil
	case key.Matches(msg, k.Detail):
		if r, _ := ts.current(); r != nil {
			m.detail = newDetail(m.c, ts.data.table, r)
			m.relayout()
		}
	case key.Matches(msg, k.Mark):
		ts.toggleMark()
		ts.move(1, h)
	case key.Matches(msg, k.MarkAll):
		ts.markVisible()
		return m.toast(toastInfo, "%d marked", ts.nMarked)
	case key.Matches(msg, k.UnmarkAll):
		ts.unmarkAll()
	case key.Matches(msg, k.SetStatus):
		return m.startSetStatus(false)
	case key.Matches(msg, k.ClearError):
		return m.startClearError(false)
	case key.Matches(msg, k.Undo):
		return m.startUndo()
	case key.Matches(msg, k.Discard):
		return m.startDiscard(false)
	case key.Matches(msg, k.Requeue):
		return m.startRequeue()
	case key.Matches(msg, k.Copy):
		return m.copyID()
	case key.Matches(msg, k.CopyLink):
		r, _ := ts.current()
		return m.copyLink(ts, r)
	case key.Matches(msg, k.Replay):
		return m.startReplay(false, false)
	case key.Matches(msg, k.ReplayAll):
		return m.startReplay(true, false)
	}
	return nil
}

func (m *Model) switchTab(i int) {
	if len(m.tabs) == 0 {
		return
	}
	m.selectTab(i % len(m.tabs))
}

func (m *Model) selectTab(i int) {
	if i < 0 || i >= len(m.tabs) {
		return
	}
	m.active = i
}

// relayout computes the body geometry from the terminal size and what is on screen, so View
// only draws and Update's page moves use the real page height.
func (m *Model) relayout() {
	w, h := m.c.width, m.c.height
	m.bodyH = max(1, h-m.headerHeight()-m.footerHeight())
	m.c.bodyH = m.bodyH
	m.tableW, m.tableH = w, m.bodyH-1 // minus the column header
	m.previewW, m.previewH, m.previewRight = 0, 0, false
	if m.showPreview && m.detail == nil {
		if w >= previewWideAt {
			m.previewRight = true
			m.previewW = max(40, w*2/5)
			m.previewH = m.bodyH
			m.tableW = w - m.previewW - 1
		} else {
			m.previewW = w
			m.previewH = max(6, m.bodyH/2)
			m.tableH = max(1, m.bodyH-m.previewH-1-1)
		}
	}
	if ts := m.activeTab(); ts != nil && ts.data != nil {
		ts.relayout(m.tableW)
		ts.scrollTo(m.tableH)
	}
	if m.detail != nil {
		m.detail.setSize(w, m.bodyH)
	}
	if m.showHelp {
		// Clamp the help scroll here so View only reads it.
		_, rows := m.fullHelp(w, h-1)
		m.helpOffset = max(0, min(m.helpOffset, rows-(h-2)))
	} else {
		m.helpOffset = 0
	}
}
