package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"

	"github.com/triage-dev/triage/model"
)

// The demo's banner is whole when it fits ("nothing leaves this machine" was never seen: it
// was cut to 20 cells at any width), else its head, never cut mid-word; bracketed without
// colour.
func TestBannerWholeOrItsHead(t *testing.T) {
	const banner = "demo: an in-memory workbook; nothing leaves this machine"
	for _, c := range []struct {
		w       int
		noColor bool
		want    string
		not     string
	}{
		{160, false, banner, "…"},
		{160, true, "[" + banner + "]", "…"},
		{80, false, " demo ", "in-memory"},
		{80, true, "[demo]", "in-memory"},
		{60, true, "[demo]", "in-memory"},
	} {
		m := newLoaded(t, testWorkbook(t), c.w, 24, func(o *Options) { o.Banner = banner; o.NoColor = c.noColor })
		head := strings.Split(plainScreen(m), "\n")[0]
		if !strings.Contains(head, c.want) || strings.Contains(head, c.not) {
			t.Errorf("%d cols (no colour %v): header %q, want %q and no %q", c.w, c.noColor, head, c.want, c.not)
		}
	}
}

// The missing-tabs hint fits the status bar whole, in a shorter form when it must.
func TestMissingTabsHintFits(t *testing.T) {
	wb := testWorkbook(t)
	wb.Tabs = wb.Tabs[:1]
	for _, w := range []int{60, 80, 120} {
		m := newLoaded(t, wb, w, 24)
		m.tabs.missing = []model.TabConfig{model.DefaultTabConfig(model.RoleDeadLetter), model.DefaultTabConfig(model.RoleQueue)}
		bar := statusBar(m, w)
		if !strings.Contains(bar, "triage init") || strings.Contains(bar, "…") {
			t.Errorf("%d cols: the hint is cut or gone: %q", w, bar)
		}
	}
}

// o in the demo says there is no sheet to link to, instead of copying a link to nothing.
func TestDemoCopyLinkSaysNoSheet(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 100, 30, func(o *Options) { o.Demo = true })
	cmd := send(m, press("o"))
	if !strings.Contains(toastTexts(m), "it has no Google Sheets link") {
		t.Errorf("toast: %q", toastTexts(m))
	}
	for _, msg := range cmdMsgs(t, cmd) {
		if typeName(msg) != "tui.toastExpiredMsg" {
			t.Errorf("o in the demo copies nothing, got %T", msg)
		}
	}
}

// Inside tmux that drops OSC 52 (set-clipboard off, or external: tmux's default, which
// takes the clipboard from its own copy mode only; no passthrough), y and m must not claim a copy:
// a copy waits for tmux's answer, and while tmux drops copies each one asks again, so the
// advice (`tmux set -g set-clipboard on`) works at the next copy, without a restart. A tmux
// that passes it on (set-clipboard on, or allow-passthrough on/all) is asked once.
func TestTmuxClipboardOffIsSaid(t *testing.T) {
	for _, c := range []struct {
		setClipboard, passthrough string
		off                       bool
	}{
		{"off", "off", true}, {"external", "off", true}, {"external", "", true},
		{"on", "off", false}, {"off", "on", false}, {"external", "on", false}, {"external", "all", false},
	} {
		dir := t.TempDir()
		bin := filepath.Join(dir, "tmux")
		tmuxSays := func(setClipboard, passthrough string) {
			script := "#!/bin/sh\ncase \"$3\" in\nset-clipboard) echo " + setClipboard + ";;\nallow-passthrough) echo " + passthrough + ";;\n*) exit 1;;\nesac\n"
			if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		tmuxSays(c.setClipboard, c.passthrough)
		m := newLoaded(t, testWorkbook(t), 100, 30, func(o *Options) { o.Tmux = bin })
		send(m, tea.EnvMsg(uv.Environ([]string{"TERM=screen-256color", "TMUX=/tmp/tmux-1000/default,1,0"})))
		// copyWith presses k, answers tmux's question the way tmux answers it, and returns
		// whether tmux was asked and the texts sent to the clipboard.
		copyWith := func(k string) (asked bool, texts []string) {
			t.Helper()
			msgs := cmdMsgs(t, send(m, press(k)))
			texts = clipboardTextsOf(t, msgs)
			for _, msg := range msgs {
				if _, ok := msg.(tmuxClipMsg); ok {
					asked = true
					texts = append(texts, clipboardTexts(t, send(m, msg))...)
				}
			}
			return asked, texts
		}
		asked, texts := copyWith("y")
		if !asked {
			t.Fatalf("%+v: the first copy in tmux doesn't ask tmux", c)
		}
		if got := strings.Contains(toastTexts(m), "tmux drops the clipboard sequence (set-clipboard "+c.setClipboard+")"); got != c.off {
			t.Errorf("%+v: toasts %q", c, toastTexts(m))
		}
		if c.off == (len(texts) > 0) || c.off == strings.Contains(toastTexts(m), "copied ID") {
			t.Errorf("%+v: sent %q, toasts %q", c, texts, toastTexts(m))
		}
		m.toasts.items = nil
		asked, texts = copyWith("y")
		if asked != c.off {
			t.Errorf("%+v: asked again %v: tmux is asked again while it drops copies, and only then", c, asked)
		}
		if c.off == (len(texts) > 0) {
			t.Errorf("%+v: a later copy sent %q", c, texts)
		}
		// m (reply) copies a mailto: link the same way; its question says whether the link
		// is on the clipboard, and is asked either way.
		m.toasts.items = nil
		keys(m, "j") // msg-001, Grace Hopper, new
		_, texts = copyWith("m")
		d, ok := m.dialog.(confirm)
		if !ok {
			t.Fatalf("%+v: m opened no question (dialog %T), toasts %q", c, m.dialog, toastTexts(m))
		}
		body := ansi.Strip(d.View())
		if c.off && (len(texts) != 0 || strings.Contains(body, "on the clipboard") || !strings.Contains(body, "Nothing was copied") || !strings.Contains(toastTexts(m), "set -g set-clipboard on")) {
			t.Errorf("%+v: m sent %q, toasts %q, question:\n%s", c, texts, toastTexts(m), body)
		}
		if !c.off && (len(texts) == 0 || !strings.Contains(toastTexts(m), "copied a mailto: reply") || !strings.Contains(body, "on the clipboard")) {
			t.Errorf("%+v: m sent %q, toasts %q, question:\n%s", c, texts, toastTexts(m), body)
		}
		keys(m, "esc")
		if !c.off {
			continue
		}
		// The person follows the advice: the next copy goes out, no restart needed.
		tmuxSays("on", c.passthrough)
		m.toasts.items = nil
		if _, texts := copyWith("y"); len(texts) == 0 || !strings.Contains(toastTexts(m), "copied ID") {
			t.Errorf("%+v: after set-clipboard on, y sent %q, toasts %q", c, texts, toastTexts(m))
		}
	}
}

// The quit dialog's count follows the run while it is open (it was frozen at "5/11" while
// the header said 8/11).
func TestQuitDialogCountIsLive(t *testing.T) {
	m, _ := newReplayModel(t, newFakeReplayer(), 100, 30)
	keys(m, "2", "A", "y", "esc", "q")
	if !strings.Contains(plainScreen(m), "A replay is running (0/") {
		t.Fatalf("q during a run asks:\n%s", plainScreen(m))
	}
	send(m, replayProgressMsg{id: m.replay.run.id, events: []model.ReplayEvent{{Row: model.RowResult{ID: "k-1", State: model.StateDelivered}, Done: 1}}})
	if !strings.Contains(plainScreen(m), "A replay is running (1/") {
		t.Errorf("the dialog's count didn't follow the run:\n%s", plainScreen(m))
	}
}

// Quitting during a run prints the run's report once the screen is gone.
func TestQuitDuringRunLeavesItsReport(t *testing.T) {
	m, _ := newReplayModel(t, newFakeReplayer(), 100, 30)
	keys(m, "2", "A", "y", "ctrl+c", "ctrl+c") // cancel, then quit when written back
	if m.ExitNote() != "" {
		t.Fatalf("nothing to say before the run ends: %q", m.ExitNote())
	}
	cmd := send(m, replayDoneMsg{id: m.replay.run.id, report: model.ReplaySummary{Cancelled: true,
		Counts: map[model.RowState]int{model.StateDelivered: 2}, Rows: []model.RowResult{{ID: "k-1", State: model.StateDelivered}, {ID: "k-2", State: model.StateDelivered}}}})
	if !isQuit(t, cmd) {
		t.Fatal("the run wrote back: the quit that waited for it happens")
	}
	if note := m.ExitNote(); !strings.Contains(note, "replay cancelled: 2 delivered") || !strings.Contains(note, "calls)") {
		t.Errorf("exit note %q", note)
	}
}

// Every hint names the bound key: with undo on U and refresh on F, the write toast says
// "U undoes" and a second conflict "F refreshes"; unbound, the hint is left out.
func TestWriteToastNamesBoundKeys(t *testing.T) {
	km := reboundKeyMap(t, map[string][]string{"undo": {"U"}, "refresh": {"F"}})
	m := newLoaded(t, testWorkbook(t), 120, 30, func(o *Options) { o.KeyMap = km })
	keys(m, "s", "4")
	op := *m.writes.inflight
	e := op.edits[0]
	send(m, appliedMsg{op: op, res: model.ApplyResult{Applied: []model.Applied{{Edit: e}}}})
	if got := toastTexts(m); !strings.Contains(got, "U undoes") || strings.Contains(got, "u undoes") {
		t.Errorf("toast %q", got)
	}
	keys(m, "j", "s", "4")
	op = *m.writes.inflight
	e = op.edits[0]
	send(m, appliedMsg{op: op, res: model.ApplyResult{Conflicts: []model.Conflict{
		{Edit: e, Row: 3, Field: model.FStatus, Saw: "new", Now: "read"}, {Edit: e, Row: 4, Field: model.FStatus, Saw: "new", Now: "spam"}}}})
	if got := toastTexts(m); !strings.Contains(got, "F refreshes") || strings.Contains(got, "r refreshes") {
		t.Errorf("toast %q", got)
	}

	km.Undo.Unbind()
	m = newLoaded(t, testWorkbook(t), 120, 30, func(o *Options) { o.KeyMap = km })
	keys(m, "s", "4")
	op = *m.writes.inflight
	send(m, appliedMsg{op: op, res: model.ApplyResult{Applied: []model.Applied{{Edit: op.edits[0]}}}})
	if got := toastTexts(m); strings.Contains(got, "undoes") {
		t.Errorf("an unbound undo has no hint: %q", got)
	}
}

// D on marked rows some of which can't be discarded asks (it used to write the one it could
// without a word), names the rest and unmarks them with the confirm.
func TestDiscardMixedMarksConfirms(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 100, 30)
	keys(m, "2", "*", "D") // k-1 dead, k-2 rejected, k-3 dead, k-4 delivered
	out := plainScreen(m)
	if m.writes.writing || !strings.Contains(out, "Discard 3 dead letters?") || !strings.Contains(out, "1 row already discarded or delivered") {
		t.Fatalf("mixed marks: a confirm naming the skipped row, writing=%v:\n%s", m.writes.writing, out)
	}
	keys(m, "y")
	ts := m.tabs.current()
	if ri, ok := ts.data.byID["k-4"]; !ok || ts.marked[ri] {
		t.Errorf("the delivered row is unmarked with the confirm")
	}
	if !m.writes.writing || len(m.writes.inflight.edits) != 3 {
		t.Errorf("the three are written: %+v", m.writes.inflight)
	}
}

// ctrl+z suspends (bubbletea puts the program in the background; fg resumes).
func TestCtrlZSuspends(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 100, 30)
	found := false
	for _, msg := range cmdMsgs(t, send(m, press("ctrl+z"))) {
		if _, ok := msg.(tea.SuspendMsg); ok {
			found = true
		}
	}
	if !found {
		t.Error("ctrl+z doesn't suspend")
	}
}

// The "cancelling" toast is stale once the run has ended: the end takes it down, and its own
// report toast says how it ended.
func TestRunEndTakesDownTheCancelToast(t *testing.T) {
	m, _ := newReplayModel(t, newFakeReplayer(), 100, 30)
	keys(m, "2", "A", "y", "ctrl+c")
	if !strings.Contains(toastTexts(m), "cancelling") {
		t.Fatalf("toasts %q", toastTexts(m))
	}
	send(m, replayDoneMsg{id: m.replay.run.id, report: model.ReplaySummary{Cancelled: true}})
	if got := toastTexts(m); strings.Contains(got, "cancelling") || !strings.Contains(got, "replay cancelled") {
		t.Errorf("toasts after the run: %q", got)
	}
}

// Over triage serve (Options.Remote) the program runs on the shared host: ctrl+z would stop
// the server's process group and E would run an editor (a shell) there. Neither happens;
// both say why.
func TestRemoteSessionNeitherSuspendsNorEdits(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 100, 30, func(o *Options) { o.Remote = true })
	for _, msg := range cmdMsgs(t, send(m, press("ctrl+z"))) {
		if _, ok := msg.(tea.SuspendMsg); ok {
			t.Error("ctrl+z suspends a remote session")
		}
	}
	if !strings.Contains(toastTexts(m), "suspend is not available over triage serve") {
		t.Errorf("toasts %q", toastTexts(m))
	}
	send(m, tea.EnvMsg{"EDITOR=/bin/sh", "TERM=xterm"})
	cmd := send(m, press("2"))
	_ = cmd
	cmd = send(m, press("E"))
	if m.edit.e != nil {
		t.Error("E opened an edit in a remote session")
	}
	for _, msg := range cmdMsgs(t, cmd) {
		if name := typeName(msg); name != "tui.toastExpiredMsg" {
			t.Errorf("E in a remote session ran %s", name)
		}
	}
	if !strings.Contains(toastTexts(m), "editing a payload is not available over triage serve") {
		t.Errorf("toasts %q", toastTexts(m))
	}
}

// ShutdownMsg (the server going away) lets a write in flight land before quitting, whatever
// its answer, and starts nothing new meanwhile; idle, it quits at once.
func TestShutdownLetsTheWriteLand(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 100, 30)
	if !isQuit(t, send(m, ShutdownMsg{})) {
		t.Error("an idle program quits at once")
	}
	m = newLoaded(t, testWorkbook(t), 100, 30)
	keys(m, "s", "4")
	if !m.writes.writing {
		t.Fatal("no write in flight")
	}
	op := *m.writes.inflight
	if isQuit(t, send(m, ShutdownMsg{})) {
		t.Fatal("quit with a write in flight")
	}
	keys(m, "j", "s")
	if m.dialog != nil {
		t.Error("a new action started after the shutdown")
	}
	conflict := model.ApplyResult{Conflicts: []model.Conflict{{Edit: op.edits[0], Row: 2, Field: model.FStatus, Saw: "new", Now: "read"}}}
	if !isQuit(t, send(m, appliedMsg{op: op, res: conflict})) {
		t.Error("the write's answer is in (a conflict, even): the program quits")
	}
}

// A read-only session's footer spends its room on what the person can do: no write hints.
func TestReadOnlyFooterHasNoWriteHints(t *testing.T) {
	for _, tab := range []string{"1", "2", "3"} {
		m := newLoaded(t, testWorkbook(t), 120, 30, func(o *Options) { o.Store = nopStore{t: t, readOnly: true} })
		keys(m, tab)
		foot := ansi.Strip(shortHelpLine(m, 120))
		for _, w := range []string{"s status", "u undo", "R replay", "e clear error", "D discard", "Q requeue"} {
			if strings.Contains(foot, w) {
				t.Errorf("tab %s: the read-only footer offers %q: %q", tab, w, foot)
			}
		}
		if !strings.Contains(foot, "? help") || !strings.Contains(foot, "/ filter") {
			t.Errorf("tab %s: footer %q", tab, foot)
		}
	}
}

// A read-only session's `?` lists what the person can do: no write or replay keys.
func TestReadOnlyHelpHasNoWriteKeys(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 100, 40, func(o *Options) { o.Store = nopStore{t: t, readOnly: true} })
	keys(m, "2", "?")
	out := plainScreen(m)
	for _, w := range []string{"set status", "replay all shown", "discard dead letter", "undo last change"} {
		if strings.Contains(out, w) {
			t.Errorf("the read-only help lists %q:\n%s", w, out)
		}
	}
	if !strings.Contains(out, "filter") || !strings.Contains(out, "copy ID") {
		t.Errorf("the read-only help lost what a viewer can do:\n%s", out)
	}
}
