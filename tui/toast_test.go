package tui

import (
	"errors"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/triage-dev/triage/model"
)

func TestToastsExpire(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	send(m, press("y"))
	if !strings.Contains(plainScreen(m), "copied ID") {
		t.Fatal("toast missing")
	}
	id := m.toasts.items[len(m.toasts.items)-1].id
	before := m.geo.tableH
	send(m, toastExpiredMsg{id: id})
	if strings.Contains(plainScreen(m), "copied ID") {
		t.Error("an expired toast is gone")
	}
	if m.geo.tableH != before+1 {
		t.Errorf("the table gets its row back: %d → %d", before, m.geo.tableH)
	}
	// Errors are dismissed with esc.
	send(m, appliedMsg{op: writeOp{kind: writeSetStatus, tab: "Inbox"}, err: errors.New("boom")})
	if !strings.Contains(plainScreen(m), "write failed: boom") {
		t.Fatal("error toast missing")
	}
	keys(m, "esc")
	if strings.Contains(plainScreen(m), "write failed") {
		t.Error("esc dismisses error toasts")
	}
}

// A toast that tells of a state goes with it: `*` then `V` leaves no "N marked" behind.
func TestMarkAllToastGoesWithTheMarks(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	keys(m, "*")
	n := m.tabs.current().nMarked
	want := itoa(n) + " marked"
	if !strings.Contains(toastTexts(m), want) {
		t.Fatalf("* says how many it marked: %q", toastTexts(m))
	}
	keys(m, "V")
	if got := toastTexts(m); strings.Contains(got, "marked") {
		t.Errorf("after V the toast still says %q", got)
	}
	if out := plainScreen(m); strings.Contains(out, "marked") {
		t.Errorf("after V the screen still tells of marks:\n%s", out)
	}
	// space changes the marks too.
	keys(m, "*", "space")
	if got := toastTexts(m); strings.Contains(got, want) {
		t.Errorf("after space unmarked one, the toast still says %q", got)
	}
}

// Info toasts told of the tab that was on screen: switching tabs drops them (errors stay,
// until esc), and a write that ends after the switch names the tab it changed.
func TestTabSwitchDropsInfoToasts(t *testing.T) {
	m, _ := newReplayModel(t, newFakeReplayer(), 100, 30)
	keys(m, "s")
	if m.dialog == nil {
		t.Fatal("s opened no picker")
	}
	keys(m, "esc")
	m.writes.start(writeOp{kind: writeSetStatus, tab: "Inbox", status: "done"})
	op := *m.writes.inflight
	e1 := model.Edit{Tab: "Inbox", ID: "msg-000", Set: map[model.Field]string{model.FStatus: "done"}}
	e2 := model.Edit{Tab: "Inbox", ID: "msg-001", Set: map[model.Field]string{model.FStatus: "done"}}
	send(m, appliedMsg{op: op, res: model.ApplyResult{Applied: []model.Applied{{Edit: e1}, {Edit: e2}}}})
	if out := plainScreen(m); !strings.Contains(out, "2 set to done · u undoes") {
		t.Fatalf("no write toast:\n%s", out)
	}
	withErrorToast(m)
	keys(m, "esc") // the error goes; the info toast is shown again
	if out := plainScreen(m); !strings.Contains(out, "2 set to done · u undoes") {
		t.Fatalf("the write toast is gone before the switch:\n%s", out)
	}
	m.toasts.sayf(toastError, "refresh failed: boom")
	keys(m, "2")
	if got := toastTexts(m); strings.Contains(got, "set to done") {
		t.Errorf("after switching tabs the Inbox's toast stays: %q", got)
	}
	if out := plainScreen(m); !strings.Contains(out, "refresh failed: boom") {
		t.Errorf("an error toast must stay across tabs:\n%s", out)
	}
	keys(m, "esc")

	// A write of the Inbox that ends while failed_calls is on screen says so.
	m.writes.start(writeOp{kind: writeSetStatus, tab: "Inbox", status: "done"})
	send(m, appliedMsg{op: *m.writes.inflight, res: model.ApplyResult{Applied: []model.Applied{{Edit: e1}}}})
	if out := plainScreen(m); !strings.Contains(out, "Inbox: 1 set to done · u undoes") {
		t.Errorf("a write ended on another tab doesn't name it:\n%s", out)
	}
}

// A toast is shown whole, wrapped word by word to the width: the demo's o, at 100, 80 and
// 60 columns, reads to its end, and no line ends in a cut word.
func TestLongToastWrapsWhole(t *testing.T) {
	for _, size := range [][2]int{{100, 30}, {80, 24}, {60, 15}} {
		m := newLoaded(t, testWorkbook(t), size[0], size[1], func(o *Options) { o.Demo = true })
		keys(m, "o")
		text := m.toasts.items[len(m.toasts.items)-1].text
		out := plainScreen(m)
		checkFrame(t, screen(m), size[0], size[1])
		lines := strings.Split(out, "\n")
		var shown []string
		for _, l := range lines {
			if l = strings.TrimSpace(l); l != "" && (strings.Contains(text, l) || strings.HasSuffix(l, "…") && strings.HasPrefix(text, l[:3])) {
				shown = append(shown, l)
			}
		}
		if got := strings.Join(shown, " "); got != text {
			t.Errorf("%dx%d: the toast reads %q, want it whole: %q\n%s", size[0], size[1], got, text, out)
		}
	}
}

// A toast longer than its lines is cut after a whole word, never inside one.
func TestToastCutAfterAWholeWord(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	withErrorToast(m)
	lines := m.toasts.lines(m.c, 80, 24)
	if len(lines) != toastLines(24) {
		t.Fatalf("%d lines, want %d", len(lines), toastLines(24))
	}
	last := strings.TrimSpace(ansi.Strip(lines[len(lines)-1]))
	if !strings.HasSuffix(last, " …") {
		t.Fatalf("the last line doesn't say it was cut: %q", last)
	}
	words := strings.Fields(strings.TrimSuffix(last, " …"))
	w := words[len(words)-1]
	if !strings.Contains(" the write failed because the sheet was busy; ", " "+w+" ") {
		t.Errorf("the last line ends in a cut word %q: %q", w, last)
	}
}

// A notice from below the TUI (the store waiting out the Sheets quota) is shown as a toast,
// sanitised, and the TUI goes on listening for the next one.
func TestNoticesAreToasts(t *testing.T) {
	ch := make(chan string, 2)
	m := newLoaded(t, testWorkbook(t), 80, 24, func(o *Options) { o.Notices = ch })
	ch <- "Sheets quota reached (writes per minute per user): waiting 41 s\x1b[2J"
	next := send(m, noticeCmd(ch)())
	if s := plainScreen(m); !strings.Contains(s, "Sheets quota reached (writes per minute per user): waiting 41 s") || strings.Contains(s, "\x1b[2J") {
		t.Fatalf("the notice isn't a toast:\n%s", s)
	}
	if next == nil {
		t.Fatal("the TUI stopped listening for notices")
	}
	close(ch)
	if msg := noticeCmd(ch)(); msg != nil {
		t.Errorf("a closed channel gave %v", msg)
	}
}
