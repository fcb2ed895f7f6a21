// Package tui is triage's terminal UI: a bubbletea program over the sheet's tabs (Inbox,
// failed_calls, Jobs) built for k9s / neomutt habits, 80x24 over SSH, tmux and NO_COLOR.
//
// Shape: Model is the root and the only thing returning a tea.View (it alone sets terminal
// modes). Components (the table of a tab, the detail view, dialogs, toasts, the replay run,
// the write queue) take a shared *common context and return strings; dialogs and the replay
// run return actions the root carries out. Every Store call runs in a tea.Cmd and answers
// with a typed message (invariant 10); every piece of sheet text goes through model.Sanitize
// or SanitizeLine before it is measured or drawn (invariant 9). The root is split by concern:
// this file (messages), keys.go, load.go, layout.go, view.go, actions.go, writes.go (the
// write queue), replay.go (planning), replayrun.go (the run), replayview.go; docs/TUI.md maps
// them.
//
// Rows are shown newest first in the inbox and dead-letter tabs (by timestamp, stable) and in
// sheet order in the queue tab. Each tab keeps its own cursor, filter and marks; bulk actions
// apply to the marked rows the current filter shows, else to the cursor row.
//
// Dead letters are replayed through Options.Replayer (confirm with a dry run, progress,
// cancel, report, the halt banner) and discarded with D; the queue's stale claims
// are requeued with Q (queue.go). y and o copy through OSC 52, wrapped for tmux and GNU
// screen (clipboard.go). The environment (tea.EnvMsg) and the color profile decide how plain
// the screen is: NO_COLOR or a profile without colors draws markers instead of colors,
// TERM=dumb also draws ASCII.
//
// The design it follows, and the section (§N) and invariant numbers its comments cite, are in
// docs/DESIGN.md.
package tui

import (
	"context"
	"strings"
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/store"
)

// Store is what the UI needs of a store (store.Editor: Load, Apply, ReadOnly); sheets.Store
// and postgres.Store satisfy it, as does serve's per-session store.
type Store = store.Editor

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
	// Environ is the terminal's environment (KEY=VALUE), as the program reports it in
	// tea.EnvMsg: TERM, NO_COLOR, TMUX, VISUAL, EDITOR. Given, it is applied in New, so the
	// first frame already draws as it says: bubbletea sends its EnvMsg from a goroutine, and
	// frames drawn before it lands would be in color on a TERM=dumb terminal.
	Environ []string
	// NoColor renders without any color or other styling (NO_COLOR set to any non-empty
	// value); cursor, marks and problems are then shown as `>`, `*` and `!`.
	NoColor bool
	// Now is the clock (default time.Now); tests pin it.
	Now func() time.Time
	// Banner is an optional one-line note shown in the header (e.g. "demo").
	Banner string
	// Demo marks the embedded demo: its spreadsheet exists nowhere, so a sheet link (o) says
	// so instead of copying a link to nothing.
	Demo bool
	// Tmux is the tmux binary to ask, when running inside tmux, whether it passes the
	// clipboard sequence on (set-clipboard, allow-passthrough), so `y` never claims a copy
	// that tmux swallowed. "" never asks. Only for a terminal of this process: a remote
	// session's tmux is not ours to run.
	Tmux string
	// Remote marks a session served over SSH (triage serve): the program runs on the shared
	// host, not on the person's machine. ctrl+z would stop the server's whole process group
	// and an editor would be a shell on the host as the service account, so neither is
	// offered; they say why instead.
	Remote bool
	// Replayer replays dead letters from the TUI (R, A). Nil: those keys say which
	// `triage replay` command would do it.
	Replayer Replayer
	// Mailer, when set, makes m a real reply: drafted in the editor, sent, the row set to
	// replied (replymail.go). Nil (no [mail] in the config): m copies a mailto: link.
	Mailer Mailer
	// Initial, when set, is a workbook already loaded from Store; the first screen shows it
	// instead of loading again.
	Initial *model.Workbook
	// Mouse turns on mouse reporting: the wheel scrolls, and a click picks a tab, sorts by a
	// column or a row (mouse.go). Off by default: with it on, selecting text needs shift.
	// Nothing needs the mouse either way.
	Mouse bool
	// Updates are workbooks pushed by a hub that loads for many TUIs at once (`triage
	// serve`): each is put in place as a load of this TUI's own would be, keeping each tab's
	// cursor, filter, marks and sort. The TUI listens for as long as the channel is open. When
	// Updates is set and Initial isn't, the first screen waits for the first push (the hub
	// sends its cached workbook at once) instead of loading.
	Updates <-chan *Prepared
	// Notices are lines from below the TUI that a person should see while they last (the
	// store waiting out the Sheets quota: "Sheets quota reached (writes per minute per user):
	// waiting 41 s"), each shown as a toast. The TUI listens for as long as the channel is open.
	Notices <-chan string
	// Identity says who is using this TUI and as what (`triage serve`: "alice · operator"),
	// shown in the header before RW/RO, shortened or left out when the terminal is narrow.
	Identity string
	// ReadOnlyWhy says why the store is read-only ("alice is a viewer"), for the toast of a
	// write key; "" says it was opened with --readonly.
	ReadOnlyWhy string
	// Access is the person's role over `triage serve` (viewer, triager, operator) and User
	// their name; "" on one's own machine, where only --readonly limits what is offered. The
	// footer, the help and every hint offer only what the role allows, and a key beyond it
	// says which role it needs ("bob is a viewer: only an operator can replay dead
	// letters"). The store and the replayer enforce the role anyway.
	Access model.Access
	User   string
}

// Minimum usable terminal size; below it the UI says so instead of drawing a broken layout.
const (
	minWidth  = 60
	minHeight = 15
)

// Model is the root model of the TUI. It implements tea.Model.
type Model struct {
	c     *common
	store Store
	opts  Options
	life  lifetime // cancelled on quit: loads and writes in flight stop waiting

	book bookInfo // the spreadsheet's title and ID
	tabs tabSet   // the tabs, the active one and the tab bar (tabs.go)

	load   loadState  // the load in flight and what the last one left (load.go)
	writes writeQueue // the write in flight, the undo stack, quit-after-write (writes.go)

	prompt  filterPrompt // the filter's line (`/`), while it is open (filter.go)
	cmd     cmdLine      // the command line (`:`), while it is open (views.go)
	preview previewPane  // the preview pane: shown or not, and its cached rendering (preview.go)
	detail  *detail
	groups  *groupsView   // the dead-letter group view, while it is open (groups.go)
	edit    payloadEditor // the payload edit in progress, between E and its write (edit.go)
	dialog  dialog
	changes changes  // the actions' targets, checks and edits (actions.go)
	help    helpView // the full help (`?`) over the screen, its scroll, the footer's hints (help.go)
	toasts  toasts
	spinner busySpinner

	hub hubState // what a hub pushed, and whether the first screen waits for it (shared.go)

	replay replayState // the plan, the run and the halt banner (replay.go, replayrun.go)
	reply  replyState  // replies being written and sent, drafts kept (replymail.go)
	// compose is the reply being written in the TUI (over triage serve: composer.go).
	compose *composer
	watch   watchState // other people's runs, and the one watched (watch.go)
	clip    clipboard  // copying, and whether tmux passes OSC 52 on (clipboard.go)
	end     endState   // told to end, and what to print once the screen is gone

	geo geometry // the body's layout, recomputed at the end of every Update (layout.go)
}

var _ tea.Model = (*Model)(nil)

// loadState is the load in flight and what the last one left.
type loadState struct {
	loading bool
	seq     int
	gen     int       // dataGen when the in-flight load started
	err     error     // the last load failure, nil after a good load
	dataGen int       // bumped whenever rows change locally (a write landed)
	at      time.Time // when the rows on screen were loaded
	hasData bool
	// feed carries the load in flight's progress (loadprogress.go); progress is its newest
	// report, for the start screen and the status line.
	feed     *progressFeed
	progress loadProgress
	// auto is the auto refresh: its schedule, the change check, idle backoff (idle.go).
	auto autoRefresh
}

// hubState is what a hub pushed.
type hubState struct {
	// pushed is the newest workbook a hub pushed while a replay held the rows.
	pushed *loadedMsg
	// waitPush: the first screen is the hub's first push, not a load of this TUI's own.
	waitPush bool
}

// endState is the program being told to end.
type endState struct {
	note   string // what to print once the screen is gone (ExitNote)
	ending bool   // told to end (ShutdownMsg): nothing new starts
}

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
	c.role, c.remote, c.user, c.identity = opts.Access, opts.Remote, opts.User, opts.Identity
	c.readOnlyWhy = opts.ReadOnlyWhy
	// Dark until the terminal answers tea.RequestBackgroundColor: most terminals are.
	c.setBackground(true)
	m := &Model{c: c, store: opts.Store, opts: opts, life: lifetime{ctx, cancel}, tabs: tabSet{c: c, brokenOK: map[string]bool{}}, book: bookInfo{id: opts.SpreadsheetID}, help: helpView{c: c}, prompt: filterPrompt{c: c, input: newLineInput(c)}, cmd: cmdLine{c: c, input: newLineInput(c)}}
	m.watch.c, m.replay.c, m.writes.c, m.changes.c = c, c, c, c
	m.reply.kept = map[string]replyMail{}
	m.clip = clipboard{c: c, ctx: ctx, tmuxBin: opts.Tmux, demo: opts.Demo}
	m.edit = payloadEditor{c: c, tabs: &m.tabs, remote: opts.Remote}
	m.cmd.tabs = &m.tabs
	m.watch.sr, _ = opts.Replayer.(SharedRuns)
	m.tabs.searcher, _ = opts.Store.(HistorySearcher)
	m.spinner.Model = spinner.New(spinner.WithSpinner(spinner.MiniDot))
	m.load.loading = true
	m.load.seq = 1
	m.load.auto = newAutoRefresh(c, opts.Refresh, opts.Store)
	if opts.Environ != nil {
		m.onTerminal(tea.EnvMsg(opts.Environ))
	}
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
		m.load.gen = m.load.dataGen
		cmds = append(cmds, preloadedCmd(m.opts.Initial, m.load.seq))
	} else if m.store != nil && m.opts.Updates == nil {
		m.load.gen = m.load.dataGen
		cmds = append(cmds, m.load.loadCmd(m.life.ctx, m.store, nil))
	}
	if m.opts.Updates != nil {
		m.hub.waitPush = m.opts.Initial == nil
		cmds = append(cmds, listenCmd(m.opts.Updates))
	}
	if cmd := m.watch.listen(); cmd != nil {
		cmds = append(cmds, cmd)
	}
	if cmd := noticeCmd(m.opts.Notices); cmd != nil {
		cmds = append(cmds, cmd)
	}
	if m.opts.Refresh > 0 {
		cmds = append(cmds, refreshTick(m.opts.Refresh))
	}
	return tea.Batch(cmds...)
}

// Update handles a message. It never blocks: anything slow is returned as a Cmd (the filter
// text a tab needs now among them: tabSet.hayCmd; the history search a filter asks for:
// tabSet.historyCmd).
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	for _, k := range m.tabs.releaseHeld() {
		cmd = tea.Batch(cmd, m.update(k))
	}
	hist := m.tabs.historyCmd(m.life.ctx)
	m.syncGroups()
	m.toasts.prune()
	m.relayout()
	return m, tea.Batch(cmd, hist, m.tabs.hayCmd(m.prompt.open))
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case loadedMsg:
		return m.onLoaded(msg)
	case hayMsg:
		m.tabs.onHay(msg)
		return nil
	case historyMsg:
		return m.onAction(m.tabs.onHistory(msg))
	case loadProgressMsg:
		return m.load.onProgress(msg)
	case pushedMsg:
		return m.onPushed(msg)
	case appliedMsg:
		var a action
		m.writes, a = m.writes.Update(msg)
		return tea.Batch(m.onWritten(a.(writtenAction)), m.afterPayloadWrite(msg))
	case editorDoneMsg:
		var a action
		m.edit, a = m.edit.Update(msg)
		return m.onAction(a)
	case replyEditedMsg:
		return m.onReplyEdited(msg)
	case replySentMsg:
		return m.onReplySent(msg)
	case replayPlannedMsg:
		return m.onReplayPlanned(msg)
	case replayProgressMsg:
		var a action
		m.replay, a = m.replay.Update(msg)
		return m.onAction(a)
	case replayDoneMsg:
		return m.onReplayDone(msg)
	case runsMsg, watchOpenedMsg, watchEventsMsg, watchCancelledMsg:
		var a action
		m.watch, a = m.watch.Update(msg)
		return m.onAction(a)
	case tea.MouseWheelMsg:
		return m.onWheel(msg)
	case tea.MouseClickMsg:
		return m.onClick(msg)
	case tea.PasteMsg:
		if m.prompt.open {
			var a action
			m.prompt, a = m.prompt.Update(msg)
			m.tabs.onPrompt(a)
		}
		return nil
	case tea.KeyPressMsg:
		cmd := m.onKey(msg)
		return tea.Batch(cmd, m.onTick(keyActivityMsg{})) // back from idle: the auto refresh's usual pace
	case tmuxClipMsg:
		var a action
		m.clip, a = m.clip.Update(msg)
		return m.onAction(a)
	case ShutdownMsg:
		return m.onShutdown()
	case noticeMsg:
		return tea.Batch(m.toasts.sayf(toastInfo, "%s", string(msg)), noticeCmd(m.opts.Notices))
	case refreshTickMsg, changedMsg, clockMsg, toastExpiredMsg, spinner.TickMsg:
		return m.onTick(msg)
	}
	m.onTerminal(msg)
	return nil
}

// onTerminal takes what the terminal reports: its size, background, environment and color
// profile.
func (m *Model) onTerminal(msg tea.Msg) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.c.width, m.c.height = msg.Width, msg.Height
	case tea.BackgroundColorMsg:
		m.c.setBackground(msg.IsDark())
		m.restyled()
	case tea.EnvMsg:
		// The terminal's environment (over SSH, the client's): TERM=dumb draws plain ASCII,
		// NO_COLOR (any non-empty value) draws without color, TMUX and TERM pick the clipboard
		// sequence.
		m.c.term = termInfo{term: msg.Getenv("TERM")}
		_, m.c.term.tmux = msg.LookupEnv("TMUX")
		m.c.editor = editorCommand(msg.Getenv("VISUAL"), msg.Getenv("EDITOR"))
		ascii := m.c.term.dumb()
		plain := ascii || msg.Getenv("NO_COLOR") != ""
		if ascii != m.c.ascii || plain != m.c.envPlain {
			m.c.ascii, m.c.envPlain = ascii, plain
			m.c.restyle()
			m.restyled()
		}
	case tea.ColorProfileMsg:
		// Without colors the cursor row and marks would be invisible: draw the markers.
		plain := msg.Profile == colorprofile.NoTTY || msg.Profile == colorprofile.ASCII
		if plain != m.c.profilePlain {
			m.c.profilePlain = plain
			m.c.restyle()
			m.restyled()
		}
	}
}

// onTick handles the clocks: auto-refresh (with the keypresses and change checks it
// paces itself by), the one-second clock, toast expiry, the spinner.
func (m *Model) onTick(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case refreshTickMsg, keyActivityMsg, changedMsg:
		// The auto refresh (idle.go) says whether to read, or to ask the store first.
		var act action
		m.load.auto, act = m.load.auto.Update(msg)
		a := act.(autoAction)
		cmds := []tea.Cmd{a.next}
		if a.note != "" {
			cmds = append(cmds, m.toasts.sayf(toastInfo, "%s", a.note))
		}
		if a.fresh {
			m.load.at = m.c.now() // the sheet is as shown: checked just now
		}
		switch {
		case m.load.loading || m.writes.writing || m.replay.planning || m.replay.running() || m.store == nil || m.end.ending:
			// A write in flight would be overwritten by a read that started before it;
			// skip this round rather than queue up behind it. A replay reloads when it ends.
		case a.check:
			cmds = append(cmds, m.load.auto.checkCmd(m.life.ctx))
		case a.read:
			cmds = append(cmds, m.startLoad())
		}
		return tea.Batch(cmds...)
	case clockMsg:
		held := m.installHeld()
		if now := m.c.now(); now.Sub(m.tabs.staleTick) >= staleRecount {
			m.tabs.staleTick = now
			m.tabs.recountStale(m.c.now())
		}
		return tea.Batch(clockTick(), held)
	case toastExpiredMsg:
		m.toasts.expire(msg.id)
	case spinner.TickMsg:
		if !m.load.loading && !m.writes.writing && !m.replay.running() {
			return nil // let the tick chain die while idle: no redraws, no bytes
		}
		var cmd tea.Cmd
		m.spinner.Model, cmd = m.spinner.Update(msg)
		return cmd
	}
	return nil
}

// lifetime is the context the Store's calls run under, and its cancel.
type lifetime struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// bookInfo is the spreadsheet's title and its ID as loaded (for sheet links), else
// Options.SpreadsheetID.
type bookInfo struct{ title, id string }

// tabSet is the workbook's tabs as the screen shows them: the active one, the configured ones
// the sheet lacks, and the tab bar, memoised.
type tabSet struct {
	c        *common
	tableH   int // the table's height: its page (set by the parent, relayout)
	list     []*tabState
	active   int
	missing  []model.TabConfig
	brokenOK map[string]bool // broken tabs already toasted, so a refresh doesn't repeat it
	bar      memo            // the tab bar: it rarely changes but costs lipgloss renders each frame
	gen      int             // bumped whenever tabs, names or counts change
	// staleTick is when the queue tabs' stale counts were last recomputed.
	staleTick time.Time
	// searcher searches the rows a load leaves out (Options.Store, when it is a
	// HistorySearcher); histSeq numbers its searches (history.go).
	searcher HistorySearcher
	histSeq  int
	// held are the table's keys typed while the active tab's filter waited for its filter
	// text (filtertext.go): carried out, in order, once the filter applies, so `/q⏎ space`
	// typed at speed marks the first row the filter shows, not the row under the cursor of
	// the unfiltered list.
	held []tea.KeyPressMsg
}

// current is the selected tab, or nil before the first load.
func (t *tabSet) current() *tabState {
	if t.active < 0 || t.active >= len(t.list) {
		return nil
	}
	return t.list[t.active]
}

// activeName is the selected tab's sheet name ("" before the first load).
func (t *tabSet) activeName() string {
	if ts := t.current(); ts != nil {
		return ts.name()
	}
	return ""
}

// named finds a tab by its sheet name.
func (t *tabSet) named(name string) *tabState {
	for _, ts := range t.list {
		if strings.EqualFold(ts.name(), name) {
			return ts
		}
	}
	return nil
}

// restyled drops every rendering cached with the old styles.
func (m *Model) restyled() {
	m.help.line, m.tabs.bar = memo{}, memo{}
	m.preview.cache = previewCache{}
	if m.c.ascii {
		m.spinner.Spinner = spinner.Line
	}
	if m.detail != nil {
		m.detail.render()
	}
}

// ShutdownMsg tells the program to end because its host is going away (triage serve
// shutting down, or a person's access changed). Unlike tea.Quit it lets work in flight finish:
// a write gets its answer and a replay is cancelled (calls in flight finish and are written
// back) before the program quits. Nothing new starts meanwhile.
type ShutdownMsg struct{}

// onShutdown quits now, or once the write or the replay in flight is done.
func (m *Model) onShutdown() tea.Cmd {
	m.end.ending = true
	m.dialog = nil
	m.prompt.open = false
	switch {
	case m.replay.running():
		m.replay.quitAfterRun = true
		m.replay.stopRun()
		return m.toasts.push(toastInfo, shutdownNoteRun)
	case m.writes.writing:
		m.writes.mustQuit = true
		return m.toasts.push(toastInfo, shutdownNoteWrite)
	}
	return m.quit()
}

// What a session told to end says while it lets its work land: the person sees why the
// screen is about to go, and that their change is not lost.
const (
	shutdownNoteWrite = "closing: your change is being written first"
	shutdownNoteRun   = "closing: the replay stops; calls already sent finish first"
)

// ExitNote is what the program has to say once the screen is gone, for the caller to print on
// the terminal: the report of a replay that ended because the user quit during it. "" when
// there is nothing.
func (m *Model) ExitNote() string { return m.end.note }

func (m *Model) quit() tea.Cmd {
	m.life.cancel() // in-flight loads and writes stop waiting
	return tea.Quit
}
