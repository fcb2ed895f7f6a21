package tui

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/model"
)

// evilWorkbook puts terminal tricks everywhere sheet text can reach the screen: a message,
// a name, an extra column's header, the spreadsheet title, a payload, an error cell.
func evilWorkbook(t testing.TB) *model.Workbook {
	wb := testWorkbook(t)
	wb.Title = "Acme\x1b]0;pwned\x07 title\u202E"
	rows := inboxRows()
	rows[0][6] = "Notes\x1b[31m"
	rows[1][1] = "Eve\x1b]52;c;ZXZpbA==\x07\u009b"
	rows[1][3] = evilMessage + "\n" + evilMessage
	rows[1][6] = evilMessage
	wb.Tabs[0] = mustDecode(t, model.RoleInbox, rows)
	dead := deadRows()
	dead[1][3] = `{"id":"k-1","note":"` + "\x1bP+q\x1b\\" + `"}`
	dead[1][4] = evilMessage
	wb.Tabs[1] = mustDecode(t, model.RoleDeadLetter, dead)
	return wb
}

var sgr = regexp.MustCompile(`^\x1b\[[0-9;:]*m`)

// checkClean asserts invariant 9 on a rendered screen: with NO_COLOR not a single escape;
// with color, only SGR styling (ESC [ ... m). Never C1 controls, BEL or bidi overrides.
func checkClean(t *testing.T, where, s string, noColor bool) {
	t.Helper()
	for _, r := range []rune{0x9b, 0x9d, 0x90, 0x202e, 0x202d, 0x2066, 0x07} {
		if strings.ContainsRune(s, r) {
			t.Errorf("%s: output contains U+%04X", where, r)
		}
	}
	if !utf8.ValidString(s) {
		t.Errorf("%s: output is not valid UTF-8", where)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 0x1b {
			if noColor {
				t.Errorf("%s: NO_COLOR output contains ESC at byte %d: %q", where, i, s[i:min(len(s), i+20)])
				return
			}
			loc := sgr.FindStringIndex(s[i:])
			if loc == nil {
				t.Errorf("%s: non-SGR escape at byte %d: %q", where, i, s[i:min(len(s), i+20)])
				return
			}
			i += loc[1] - 1
			continue
		}
		if c < 0x20 && c != '\n' {
			t.Errorf("%s: control byte 0x%02x at %d", where, c, i)
			return
		}
	}
}

func TestInvariant9Sanitised(t *testing.T) {
	for _, noColor := range []bool{true, false} {
		for _, size := range [][2]int{{80, 24}, {120, 40}} {
			m := newLoaded(t, evilWorkbook(t), size[0], size[1], func(o *Options) { o.NoColor = noColor })
			check := func(where string) {
				t.Helper()
				v := m.View()
				checkClean(t, where, v.Content, noColor)
				if !noColor && !strings.Contains(v.Content, "\x1b[") {
					t.Errorf("%s: color output has no styling at all; the test would prove nothing", where)
				}
				checkClean(t, where+" (window title)", v.WindowTitle, true)
				checkFrame(t, v.Content, size[0], size[1])
			}
			check("table, cursor on the evil row")
			if !strings.Contains(plainScreen(m), "Eve␛]52;c;ZXZpbA") {
				t.Errorf("the evil name is shown with visible placeholders:\n%s", plainScreen(m))
			}
			keys(m, "p")
			check("preview")
			keys(m, "j", "j", "j")
			check("preview of another evil row")
			keys(m, "g")
			keys(m, "p", "enter")
			check("detail")
			for range 12 {
				keys(m, "j")
				check("detail, moving the focus")
			}
			keys(m, "G")
			check("detail, bottom")
			keys(m, "esc", "2", "p")
			check("dead letter preview")
			keys(m, "enter")
			check("dead letter detail")
			keys(m, "esc", "p", "s")
			check("picker")
			keys(m, "esc", "*", "s", "1")
			check("confirm")
			keys(m, "y")
			op := *m.writes.inflight
			send(m, appliedMsg{op: op, res: model.ApplyResult{
				Conflicts: []model.Conflict{{Edit: op.edits[0], Row: 2, Field: model.FStatus, Saw: "dead", Now: evilMessage}},
			}})
			check("conflict toast quoting sheet text")
			keys(m, "/")
			send(m, tea.PasteMsg{Content: "\x1b]0;x\x07\u202e"})
			check("filter prompt after pasting escapes")
		}
	}
	m := New(Options{Store: nopStore{t: t}, NoColor: true, Now: fixedNow})
	send(m, tea.WindowSizeMsg{Width: 80, Height: 24})
	send(m, loadedMsg{seq: m.load.seq, err: errors.New("bad \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \u009b2J")})
	checkClean(t, "load error view", screen(m), true)
}

// echoReplayer puts sheet text everywhere the replay views show replayer text: sources,
// destinations, URLs, keys, refusal reasons, row details, the halt.
type echoReplayer struct{}

func (echoReplayer) Plan(t *model.Table, recs []*model.Record) model.ReplayPlan {
	var p model.ReplayPlan
	for _, r := range recs {
		src, u := t.Get(r, model.FSource), t.Get(r, model.FURL)
		p.Calls = append(p.Calls, model.PlannedCall{ID: r.ID, Method: "POST", URL: u, Key: r.ID, Source: src, Row: r.Row, Headers: []string{"X: " + evilMessage}})
		p.Sources = append(p.Sources, src)
		p.Destinations = append(p.Destinations, u)
		p.Refused = append(p.Refused, model.Refusal{ID: r.ID, Row: r.Row, Reason: t.Get(r, model.FError)})
	}
	return p
}

func (echoReplayer) Replay(_ context.Context, _ *model.Table, recs []*model.Record, progress func(model.ReplayEvent)) model.ReplaySummary {
	return model.ReplaySummary{}
}

func TestInvariant9ReplayViews(t *testing.T) {
	for _, noColor := range []bool{true, false} {
		wb := evilWorkbook(t)
		dead := deadRows()
		dead[1][1] = "crm\x1b[2J\u202e"
		dead[1][2] = "https://crm.example/\x1b]8;;https://evil\x1b\\x"
		dead[1][4] = evilMessage
		wb.Tabs[1] = mustDecode(t, model.RoleDeadLetter, dead)
		m := newLoaded(t, wb, 80, 24, func(o *Options) { o.NoColor = noColor; o.Replayer = echoReplayer{} })
		check := func(where string) {
			t.Helper()
			checkClean(t, where, screen(m), noColor)
			checkFrame(t, screen(m), 80, 24)
		}
		keys(m, "2", "A")
		check("replay confirm")
		keys(m, "d")
		check("replay dry run")
		for range 5 {
			keys(m, "j")
			check("replay dry run, scrolled")
		}
		keys(m, "y")
		h := &model.Halt{Cause: "systemic", Source: dead[1][1].(string), Detail: evilMessage}
		send(m, replayProgressMsg{id: m.replay.run.id, events: []model.ReplayEvent{{Row: model.RowResult{ID: "k-1", State: "systemic\x1b[31m", Detail: evilMessage}, Done: 1, Total: 4, Halted: h}}})
		check("replay progress with a halt")
		send(m, replayDoneMsg{id: m.replay.run.id, report: model.ReplaySummary{Halted: h, NotAttempted: []string{"k\x1b]0;x\x07"}, WriteErrors: []string{evilMessage},
			WriteConflicts: []model.Conflict{{Reason: evilMessage}}, Refused: []model.Refusal{{Reason: evilMessage}}}})
		check("replay report")
		keys(m, "esc")
		check("halt banner over the table")
	}
}
