package tui

// What a newcomer found trying the demo: dialogs taller than the body, a requeued row still
// showing its claim age, times in two zones, filter notes without a filter, an opaque ID as a
// picker title, a cut halt banner, non-ASCII glyphs under TERM=dumb.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
	"github.com/triage-dev/triage/model"
)

// demoHalt is the halt the demo shows: long enough to need three lines at 80 columns.
var demoHalt = ReplayHalt{Cause: "systemic", Source: "billing",
	Detail: "source billing: header Authorization reads the environment variable DEMO_BILLING_TOKEN, which is not set: export it and run again"}

// withHalt puts the halt banner up (and lays the screen out again under it).
func withHalt(m *Model) {
	h := demoHalt
	m.halt = &h
	send(m, tea.WindowSizeMsg{Width: m.c.width, Height: m.c.height})
}

// withErrorToast adds a three-line error toast to the footer.
func withErrorToast(m *Model) {
	m.toast(toastError, "%s", strings.Repeat("the write failed because the sheet was busy; ", 8))
	send(m, tea.WindowSizeMsg{Width: m.c.width, Height: m.c.height})
}

// boxRows returns the screen lines inside the dialog's border, from its top to its bottom
// border (both included); ok is false when either border is off screen.
func boxRows(screen string) (rows []string, ok bool) {
	lines := strings.Split(screen, "\n")
	top, bottom := -1, -1
	for i, l := range lines {
		if top < 0 && (strings.Contains(l, "╭") || strings.Contains(l, "+--")) {
			top = i
		}
		if top >= 0 && (strings.Contains(l, "╰") || (i > top && strings.Contains(l, "+--"))) {
			bottom = i
			break
		}
	}
	if top < 0 || bottom < 0 {
		return nil, false
	}
	return lines[top : bottom+1], true
}

func TestDialogsFitTheBody(t *testing.T) {
	type dialogCase struct {
		name  string
		open  func(m *Model)
		wants []string // always on screen, inside the box
	}
	replayKeys := []string{"y replay", "N no (enter/esc)"}
	dialogs := []dialogCase{
		{"replay confirm", func(m *Model) { keys(m, "2", "A") }, append([]string{"Replay 6 calls", "[y/N]", "d dry run"}, replayKeys...)},
		{"replay dry run", func(m *Model) { keys(m, "2", "A", "d") }, append([]string{"Replay 6 calls", "[y/N]", "d hide dry run"}, replayKeys...)},
		{"replay marked, dry run", func(m *Model) { keys(m, "2", "space", "space", "R", "d") }, append([]string{"Replay 2 calls", "[y/N]"}, replayKeys...)},
		{"requeue", func(m *Model) { keys(m, "3", "Q") }, []string{"Requeue 1 stale claim? [y/N]", "y yes", "N no (enter/esc)"}},
		{"set status confirm", func(m *Model) { keys(m, "space", "space", "space", "s", "4") }, []string{"Set status of 3 rows to done? [y/N]", "y yes", "N no"}},
		{"picker", func(m *Model) { keys(m, "s") }, []string{"Set status of", "esc cancel"}},
	}
	for _, size := range [][2]int{{60, 15}, {80, 24}, {100, 30}} {
		for _, halted := range []bool{false, true} {
			for _, toast := range []bool{false, true} {
				for _, dc := range dialogs {
					name := fmt.Sprintf("%dx%d/halt=%v/toast=%v/%s", size[0], size[1], halted, toast, dc.name)
					t.Run(name, func(t *testing.T) {
						m, _ := newReplayModel(t, newFakeReplayer(), size[0], size[1], func(o *Options) { o.NoColor = true })
						if halted {
							withHalt(m)
						}
						if toast {
							withErrorToast(m)
						}
						dc.open(m)
						if m.dialog == nil {
							t.Fatalf("no dialog:\n%s", plainScreen(m))
						}
						out := plainScreen(m)
						checkFrame(t, out, size[0], size[1])
						box, ok := boxRows(out)
						if !ok {
							t.Fatalf("the box's top or bottom border is off screen:\n%s", out)
						}
						if len(box) > m.bodyH {
							t.Errorf("the box is %d lines, the body %d", len(box), m.bodyH)
						}
						inBox := strings.Join(box, "\n")
						for _, w := range dc.wants {
							if !strings.Contains(inBox, w) {
								t.Errorf("the box lacks %q:\n%s", w, out)
							}
						}
						if halted && !strings.Contains(out, "!! HALTED") {
							t.Errorf("the banner is gone:\n%s", out)
						}
					})
				}
			}
		}
	}
}

// TestDialogScrollsItsMiddle: under the halt banner at 80x24 the dry run doesn't fit; d brings
// it into view, the navigation keys scroll it between the fixed question and keys, and the
// position is shown.
func TestDialogScrollsItsMiddle(t *testing.T) {
	m, _ := newReplayModel(t, newFakeReplayer(), 80, 24, func(o *Options) { o.NoColor = true })
	withHalt(m)
	keys(m, "2", "A")
	keys(m, "d")
	out := plainScreen(m)
	if !strings.Contains(out, "Dry run: nothing is sent") || !strings.Contains(out, "Would send 6 calls:") {
		t.Errorf("d brings the dry run into view:\n%s", out)
	}
	if !strings.Contains(out, "(j/k scroll)") {
		t.Errorf("the position and how to scroll are shown:\n%s", out)
	}
	first := out
	keys(m, "j")
	if plainScreen(m) == first {
		t.Errorf("j scrolls the dry run")
	}
	keys(m, "G")
	out = plainScreen(m)
	if !strings.Contains(out, "row 8: source mailer has no url_prefixes") || !strings.Contains(out, "row 9 is rejected") {
		t.Errorf("G shows the end of the dry run:\n%s", out)
	}
	keys(m, "g")
	out = plainScreen(m)
	if !strings.Contains(out, "All 8 rows of the tab.") {
		t.Errorf("g shows the notes above the dry run:\n%s", out)
	}
	for _, s := range []string{first, out} {
		for _, w := range []string{"Replay 6 calls to 1 source (crm)?", "[y/N]", "y replay · d hide dry run · N no (enter/esc)", "╰"} {
			if !strings.Contains(s, w) {
				t.Errorf("%q is always on screen:\n%s", w, s)
			}
		}
	}
	keys(m, "y")
	if m.run == nil {
		t.Error("y still replays after scrolling")
	}
}

// TestPickerScrollsWhenShort: a status list longer than the body scrolls with the cursor.
func TestPickerScrollsWhenShort(t *testing.T) {
	wb := testWorkbook(t)
	cfg := model.DefaultTabConfig(model.RoleInbox)
	cfg.Statuses = []string{"new", "read", "replied", "waiting", "escalated", "billing", "sales", "support", "done", "spam", "archived", "duplicate"}
	tab, err := model.Decode(cfg, inboxRows(), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	wb.Tabs[0] = tab
	m := newLoaded(t, wb, 60, 15, func(o *Options) { o.NoColor = true })
	withHalt(m)
	keys(m, "s")
	out := plainScreen(m)
	checkFrame(t, out, 60, 15)
	box, ok := boxRows(out)
	if !ok || !strings.Contains(strings.Join(box, "\n"), "Set status of") || !strings.Contains(strings.Join(box, "\n"), "esc cancel") {
		t.Fatalf("the picker keeps its title and keys:\n%s", out)
	}
	keys(m, "G")
	out = plainScreen(m)
	if !strings.Contains(out, "> c duplicate") {
		t.Errorf("the cursor's option is always shown:\n%s", out)
	}
	keys(m, "enter")
	if m.pending.tab != "" || !m.writing || m.inflight.status != "duplicate" {
		t.Errorf("enter picks the option under the cursor: %+v", m.inflight)
	}
}

func TestHaltBannerWrapsWholeAndLoud(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	send(m, tea.BackgroundColorMsg{Color: black{}})
	withHalt(m)
	lines := m.bannerLines(80)
	if len(lines) < 2 || len(lines) > bannerMaxLines {
		t.Fatalf("banner of %d lines", len(lines))
	}
	var text []string
	for _, l := range lines {
		if !sgrAny.MatchString(l) {
			t.Errorf("every banner line is loud (styled): %q", l)
		}
		text = append(text, strings.TrimSpace(ansi.Strip(l)))
	}
	joined := strings.Join(text, " ")
	if !strings.Contains(joined, "export it and run again") || strings.Contains(joined, "…") {
		t.Errorf("the banner keeps the whole cause and fix: %q", joined)
	}
	if out := plainScreen(m); !strings.Contains(out, "DEMO_BILLING_TOKEN, which is not set: export it and run") {
		t.Errorf("the banner is on screen:\n%s", out)
	}

	// Longer than three lines: cut at the third, and says so.
	h := demoHalt
	h.Detail = strings.Repeat("a very long explanation of what went wrong ", 10)
	m.halt = &h
	lines = m.bannerLines(80)
	if len(lines) != bannerMaxLines || !strings.Contains(ansi.Strip(lines[bannerMaxLines-1]), "…") {
		t.Errorf("a banner past %d lines is cut there with …: %q", bannerMaxLines, lines)
	}
}

// TestRequeueRederivesTheRow: after the write lands, the requeued job reads pending with no
// claim age (no "pending 2h"), isn't counted stale, and the filter finds it by its new cells.
func TestRequeueRederivesTheRow(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 100, 30, func(o *Options) { o.NoColor = true })
	keys(m, "3", "Q", "y")
	if m.inflight == nil {
		t.Fatalf("Q y writes:\n%s", plainScreen(m))
	}
	op := *m.inflight
	send(m, appliedMsg{op: op, res: model.ApplyResult{Applied: []model.Applied{{Edit: op.edits[0], Row: 3}}}})
	ts := m.activeTab()
	r, _, _ := ts.data.record("job-2")
	if r.Status != model.StatusPending || !r.Time.IsZero() {
		t.Errorf("job-2 after the requeue: status %q time %v, want pending and no claim time", r.Status, r.Time)
	}
	if ts.stale != 0 || ts.data.counts[model.StatusClaimed] != 0 || ts.data.counts[model.StatusPending] != 2 {
		t.Errorf("counts after the requeue: %d stale %v", ts.stale, ts.data.counts)
	}
	out := plainScreen(m)
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "job-2") && (strings.Contains(l, "2h") || strings.Contains(l, "stale") || strings.Contains(l, "worker-7")) {
			t.Errorf("job-2 still shows its claim: %q", l)
		}
	}
	if tabBar := strings.Split(out, "\n")[1]; strings.Contains(tabBar, "stale") || strings.Contains(tabBar, "claimed") {
		t.Errorf("the tab bar still counts the claim: %q", tabBar)
	}
	keys(m, "/")
	typeText(m, "worker-7")
	keys(m, "enter")
	for _, ri := range ts.visible {
		if ts.data.table.Records[ri].ID == "job-2" {
			t.Errorf("the filter still finds job-2 by the worker it no longer has")
		}
	}
}

// TestSetCellsRederivesProblemsAndWidths: an edit's cells decide the row's time, status,
// problems and column widths, as a load would.
func TestSetCellsRederivesProblemsAndWidths(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 160, 30)
	keys(m, "3")
	ts := m.activeTab()
	_, ri, _ := ts.data.record("job-1")
	r := &ts.data.table.Records[ri]
	has := func(sub string) bool {
		for _, p := range r.Problems {
			if strings.Contains(p, sub) {
				return true
			}
		}
		return false
	}

	m.setCells(ts, ri, map[model.Field]string{model.FStatus: "claimed", model.FClaimedAt: "2025-06-01T11:00:00Z"})
	if r.Status != model.StatusClaimed || !r.Time.Equal(testNow.Add(-time.Hour)) {
		t.Errorf("claimed an hour ago: %q %v", r.Status, r.Time)
	}
	m.setCells(ts, ri, map[model.Field]string{model.FClaimedAt: "someday"})
	if !r.Time.IsZero() || !has(`claimedat "someday" is not a date`) {
		t.Errorf("an unreadable claimedAt: time %v problems %q", r.Time, r.Problems)
	}
	m.setCells(ts, ri, map[model.Field]string{model.FClaimedAt: ""})
	if has("is not a date") {
		t.Errorf("a blank claimedAt is no problem: %q", r.Problems)
	}
	m.setCells(ts, ri, map[model.Field]string{model.FStatus: "Paused"})
	if r.Status != "paused" || !has("unknown status") || ts.data.counts["paused"] != 1 {
		t.Errorf("an unknown status: %q %q %v", r.Status, r.Problems, ts.data.counts)
	}
	m.setCells(ts, ri, map[model.Field]string{model.FStatus: ""})
	if r.Status != model.StatusPending || has("unknown status") || ts.data.counts["paused"] != 0 {
		t.Errorf("blank reads as pending: %q %q %v", r.Status, r.Problems, ts.data.counts)
	}

	// A worker name longer than any loaded widens its column (up to the column's max).
	col := -1
	for i, c := range ts.data.cols {
		if c.field == model.FClaimedBy {
			col = i
		}
	}
	before := ts.data.natural[col]
	m.setCells(ts, ri, map[model.Field]string{model.FClaimedBy: "worker-eleven"})
	send(m, tea.WindowSizeMsg{Width: 160, Height: 30})
	if ts.data.natural[col] <= before || ts.widths[col] < len("worker-eleven") {
		t.Errorf("the WORKER column grows: natural %d→%d, laid out %d", before, ts.data.natural[col], ts.widths[col])
	}
	if !strings.Contains(plainScreen(m), "worker-eleven") {
		t.Errorf("the whole worker shows:\n%s", plainScreen(m))
	}
}

// TestDetailTimesInSheetZone: a time typed in the sheet (its zone) and one triage wrote (UTC)
// are both shown in the spreadsheet's zone.
func TestDetailTimesInSheetZone(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	wb := testWorkbook(t)
	tab, err := model.Decode(model.DefaultTabConfig(model.RoleQueue), rowsOf(
		[]string{"id", "type", "payload", "status", "claimedBy", "claimedAt", "lastError", "updatedAt", "attempts"},
		[]string{"job-1", "email", `{}`, "claimed", "w-1", "2025-06-01 12:30:00", "", "2025-06-01T10:45:00Z", "1"},
	), cet)
	if err != nil {
		t.Fatal(err)
	}
	wb.Tabs[2] = tab
	m := newLoaded(t, wb, 100, 30, func(o *Options) { o.NoColor = true })
	keys(m, "3", "enter")
	out := plainScreen(m)
	for _, want := range []string{"2025-06-01 12:30:00 CET", "2025-06-01 11:45:00 CET"} {
		if !strings.Contains(out, want) {
			t.Errorf("detail lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "UTC") {
		t.Errorf("no time in another zone:\n%s", out)
	}
}

// TestFilterNotesOnlyWithAFilter: confirms speak of the filter only when one is active.
func TestFilterNotesOnlyWithAFilter(t *testing.T) {
	filter := func(m *Model, q string) {
		keys(m, "/")
		typeText(m, q)
		keys(m, "enter")
	}
	t.Run("set status", func(t *testing.T) {
		m := newLoaded(t, testWorkbook(t), 100, 30)
		keys(m, "space", "space", "s", "4")
		if out := plainScreen(m); !strings.Contains(out, "Set status of 2 rows") || strings.Contains(out, "current filter") {
			t.Errorf("no filter, no filter note:\n%s", out)
		}
		keys(m, "esc", "V")
		filter(m, "status:new")
		keys(m, "*", "s", "4")
		if out := plainScreen(m); !strings.Contains(out, "(rows respect the current filter: status:new)") {
			t.Errorf("with a filter, the note names it:\n%s", out)
		}
	})
	t.Run("replay all", func(t *testing.T) {
		m, _ := newReplayModel(t, newFakeReplayer(), 100, 30)
		keys(m, "2", "A")
		if out := plainScreen(m); !strings.Contains(out, "All 8 rows of the tab.") || strings.Contains(out, "filter shows") {
			t.Errorf("A without a filter: every row of the tab:\n%s", out)
		}
		keys(m, "esc")
		filter(m, "source:crm")
		keys(m, "A")
		if out := plainScreen(m); !strings.Contains(out, "All 7 rows the filter shows (source:crm).") {
			t.Errorf("A with a filter names it:\n%s", out)
		}
		keys(m, "esc", "space", "space", "R")
		if out := plainScreen(m); !strings.Contains(out, "(rows respect the current filter: source:crm)") {
			t.Errorf("R with a filter names it:\n%s", out)
		}
	})
	t.Run("requeue", func(t *testing.T) {
		m := newLoaded(t, testWorkbook(t), 100, 30)
		keys(m, "3", "Q")
		if out := plainScreen(m); !strings.Contains(out, "Requeue 1 stale claim?") || strings.Contains(out, "current filter") {
			t.Errorf("no filter, no filter note:\n%s", out)
		}
		keys(m, "esc")
		filter(m, "email")
		keys(m, "Q")
		if out := plainScreen(m); !strings.Contains(out, "current filter: email)") {
			t.Errorf("with a filter, the note names it:\n%s", out)
		}
	})
}

// TestPickerTitleNamesTheRow: one row's picker is titled by what a person recognises, never
// by an opaque key.
func TestPickerTitleNamesTheRow(t *testing.T) {
	wb := testWorkbook(t)
	wb.Tabs[0] = mustDecode(t, model.RoleInbox, rowsOf(
		[]string{"Timestamp", "Name", "Email", "Message", "Status", "ID"},
		[]string{"2025-06-01T11:00:00Z", "Ada Lovelace", "ada@example.com", "hi", "", "249a4584-5dbe-4b6e-9d5b-0d4c7c0b1a2f"},
		[]string{"2025-06-01T10:00:00Z", "", "grace@example.com", "hi", "", "5c1e0a7e-8f3b-4c3e-a1d2-3b4c5d6e7f80"},
		[]string{"2025-06-01T09:00:00Z", " ", "", "hi", "", "0e9d8c7b-6a5f-4e3d-2c1b-0a9f8e7d6c5b"},
	))
	m := newLoaded(t, wb, 100, 30)
	title := func() string {
		t.Helper()
		p, ok := m.dialog.(picker)
		if !ok {
			t.Fatalf("no picker: %T", m.dialog)
		}
		keys(m, "esc")
		return p.title
	}
	for _, c := range []struct {
		keys []string
		want string
	}{
		{[]string{"1", "s"}, "Set status of Ada Lovelace"},
		{[]string{"j", "s"}, "Set status of grace@example.com"},
		{[]string{"j", "s"}, "Set status of row 4"},
		{[]string{"2", "s"}, "Set status of crm, row 3"},
		{[]string{"3", "s"}, "Set status of job-1"},
	} {
		keys(m, c.keys...)
		if got := title(); got != c.want {
			t.Errorf("after %v: title %q, want %q", c.keys, got, c.want)
		}
	}
	keys(m, "1", "s")
	if out := plainScreen(m); strings.Contains(out, "249a4584") {
		t.Errorf("the ID is not the title:\n%s", out)
	}
}

// TestDumbIsASCII: under TERM=dumb every glyph the UI draws itself is ASCII: the progress
// line's dashes, separators, ellipses, the bar, borders, the banner.
func TestDumbIsASCII(t *testing.T) {
	dumb := func(m *Model) {
		send(m, tea.EnvMsg(uv.Environ([]string{"TERM=dumb"})))
		send(m, tea.ColorProfileMsg{Profile: colorprofile.NoTTY})
	}
	nonASCII := func(s string) string {
		var out []string
		for _, r := range s {
			if r > 0x7e || (r < 0x20 && r != '\n') {
				out = append(out, string(r))
			}
		}
		return strings.Join(out, "")
	}
	fr := newFakeReplayer()
	m, _ := newReplayModel(t, fr, 80, 24)
	dumb(m)
	screens := map[string]func(){
		"table":    func() { keys(m, "2") },
		"confirm":  func() { keys(m, "A") },
		"dry run":  func() { keys(m, "d") },
		"scrolled": func() { keys(m, "j", "j") },
		"progress": func() {
			keys(m, "y")
			send(m, replayProgressMsg{id: m.run.id, events: []ReplayProgress{{ID: "k-1", State: "sending", Total: 6}}})
		},
		"halt": func() {
			h := demoHalt
			send(m, replayDoneMsg{id: m.run.id, report: ReplayReport{Counts: map[string]int{"systemic": 1}, Halt: &h, NotAttempted: []string{"k-2", "k-3", "k-4", "k-5", "k-6", "k-7"}}})
		},
		"banner":  func() { keys(m, "esc") },
		"detail":  func() { keys(m, "enter") },
		"picker":  func() { keys(m, "esc", "s") },
		"queue":   func() { keys(m, "esc", "3") },
		"requeue": func() { keys(m, "Q") },
		"help":    func() { keys(m, "esc", "?") },
	}
	for _, name := range []string{"table", "confirm", "dry run", "scrolled", "progress", "halt", "banner", "detail", "picker", "queue", "requeue", "help"} {
		screens[name]()
		out := screen(m)
		if bad := nonASCII(out); bad != "" {
			t.Errorf("%s: non-ASCII under TERM=dumb: %q\n%s", name, bad, out)
		}
		if name == "progress" && !strings.Contains(out, "elapsed 0s - - rows/s - ETA -") {
			t.Errorf("the progress line in ASCII:\n%s", out)
		}
	}
}

// TestConfirmFitsAnyBody: whatever the body's height, the box is no taller (from 4 lines:
// border, question with its [y/N], keys) and keeps the question's start, [y/N] and the keys.
func TestConfirmFitsAnyBody(t *testing.T) {
	m, _ := newReplayModel(t, newFakeReplayer(), 80, 24, func(o *Options) { o.NoColor = true })
	keys(m, "2", "A", "d")
	d, ok := m.dialog.(confirm)
	if !ok {
		t.Fatalf("no confirm: %T", m.dialog)
	}
	d.dests = []string{"https://crm.example/api/", "https://crm.example/v2/", "https://mail.example/", "https://a.example/", "https://b.example/"}
	for h := 4; h <= 40; h++ {
		m.c.bodyH = h
		box := strings.Split(d.View(), "\n")
		text := strings.Join(box, "\n")
		if len(box) > h {
			t.Errorf("body %d: box of %d lines:\n%s", h, len(box), text)
		}
		for _, w := range []string{"Replay 6 calls", "[y/N]", "y replay", "N no (enter/esc)", "╰"} {
			if !strings.Contains(text, w) {
				t.Errorf("body %d: box lacks %q:\n%s", h, w, text)
			}
		}
	}
}
