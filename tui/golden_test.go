package tui

import (
	"fmt"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/triage-dev/triage/model"
)

// Golden screens of View().Content (independent of the terminal, unlike raw program output),
// in testdata/TestGolden/ (x/exp/golden). Rewrite them with: go test ./tui/ -run TestGolden -update
func TestGolden(t *testing.T) {
	dark := func(m *Model) { send(m, tea.BackgroundColorMsg{Color: black{}}) }
	env := func(vars ...string) func(*Model) {
		return func(m *Model) { send(m, tea.EnvMsg(uv.Environ(vars))) }
	}
	profile := func(p colorprofile.Profile) func(*Model) {
		return func(m *Model) { send(m, tea.ColorProfileMsg{Profile: p}) }
	}
	withReplayer := func(o *Options) { o.Replayer = newFakeReplayer() }
	cases := []struct {
		name    string
		w, h    int
		noColor bool
		keys    []string
		opts    []modelOpt
		setup   []func(*Model) // before the keys
		after   func(*Model)   // after the keys
	}{
		{name: "inbox_80x24", w: 80, h: 24, keys: []string{"j", "space", "k"}},
		{name: "inbox_120x40_preview", w: 120, h: 40, keys: []string{"j", "j", "j", "space", "p"}},
		{name: "inbox_80x24_nocolor", w: 80, h: 24, noColor: true, keys: []string{"j", "space", "k"}},
		{name: "inbox_80x24_nocolor_preview", w: 80, h: 24, noColor: true, keys: []string{"j", "j", "j", "p"}},
		{name: "detail_80x24_nocolor", w: 80, h: 24, noColor: true, keys: []string{"j", "j", "j", "enter", "j"}},
		{name: "deadletter_120x40", w: 120, h: 40, keys: []string{"2", "j", "enter"}},
		{name: "queue_80x24_nocolor", w: 80, h: 24, noColor: true, keys: []string{"3", "j"}},
		{name: "confirm_80x24_nocolor", w: 80, h: 24, noColor: true, keys: []string{"space", "space", "space", "s", "4"}},
		{name: "picker_80x24", w: 80, h: 24, keys: []string{"s"}},
		{name: "help_80x24_nocolor", w: 80, h: 24, noColor: true, keys: []string{"?"}},
		{name: "filter_80x24_nocolor", w: 80, h: 24, noColor: true, keys: []string{"/", "s", "t", "a", "t", "u", "s", ":", "n", "e", "w"}},

		// Jump hosts: TERM=dumb (plain ASCII, markers instead of colors), a tiny terminal,
		// NO_COLOR from the environment.
		{name: "dumb_80x24", w: 80, h: 24, keys: []string{"j", "space", "2"}, setup: []func(*Model){env("TERM=dumb"), profile(colorprofile.NoTTY)}},
		{name: "dumb_confirm_80x24", w: 80, h: 24, keys: []string{"space", "space", "s", "4"}, setup: []func(*Model){env("TERM=dumb"), profile(colorprofile.NoTTY)}},
		{name: "toosmall_50x12", w: 50, h: 12},
		// A dialog hidden by the too-small screen is named, with the key that closes it.
		{name: "toosmall_dialog_50x12", w: 50, h: 12, setup: []func(*Model){func(m *Model) {
			send(m, tea.WindowSizeMsg{Width: 80, Height: 24})
			keys(m, "s")
			send(m, tea.WindowSizeMsg{Width: 50, Height: 12})
		}}},

		// The wide view scrolled sideways, the detail view's search, the command line, the
		// saved views' bar, a run's result opened.
		{name: "wide_80x24_nocolor", w: 80, h: 24, noColor: true, keys: []string{"ctrl+w", "l"}},
		{name: "wide_120x40", w: 120, h: 40, keys: []string{"2", "ctrl+w"}},
		{name: "search_80x24", w: 80, h: 24, keys: []string{"enter", "/", "m", "e", "s", "s", "a", "g", "e", "enter"}},
		{name: "search_80x24_dumb", w: 80, h: 24, keys: []string{"enter", "/", "m", "e", "s", "s", "a", "g", "e", "enter"}, setup: []func(*Model){env("TERM=dumb"), profile(colorprofile.NoTTY)}},
		{name: "command_80x24_nocolor", w: 80, h: 24, noColor: true, keys: []string{":", "v", "i", "e", "w", " "}},
		{name: "views_120x40", w: 120, h: 40, keys: []string{"]"}, setup: []func(*Model){func(m *Model) {
			if ts := m.tabs.current(); ts != nil {
				ts.cfg.Views = []model.View{{Name: "new", Filter: "status:new"}, {Name: "spam", Filter: "status:spam"}}
			}
		}}},
		{name: "nocolor_env_deadletter_80x24", w: 80, h: 24, keys: []string{"2", "j", "space"}, setup: []func(*Model){env("TERM=xterm-256color", "NO_COLOR=1")}},

		// Dead letters and the queue.
		{name: "deadletter_detail_80x24_nocolor", w: 80, h: 24, noColor: true, keys: []string{"2", "j", "enter"}},
		{name: "queue_requeue_80x24_nocolor", w: 80, h: 24, noColor: true, keys: []string{"3", "Q"}},
		{name: "queue_120x30", w: 120, h: 30, keys: []string{"3"}},

		// Replay: the confirm, its dry run, the progress view, a halt.
		{name: "replay_confirm_80x24_nocolor", w: 80, h: 24, noColor: true, opts: []modelOpt{withReplayer}, keys: []string{"2", "*", "R"}},
		{name: "replay_dryrun_80x24_nocolor", w: 80, h: 24, noColor: true, opts: []modelOpt{withReplayer}, keys: []string{"2", "*", "R", "d"}},
		{name: "replay_progress_80x24_nocolor", w: 80, h: 24, noColor: true, opts: []modelOpt{withReplayer}, keys: []string{"2", "A", "y"},
			after: func(m *Model) {
				send(m, replayProgressMsg{id: m.replay.run.id, events: []model.ReplayEvent{
					{Row: model.RowResult{ID: "k-1", State: "sending"}, Total: 1},
				}})
			}},
		{name: "replay_halt_80x24", w: 80, h: 24, opts: []modelOpt{withReplayer}, keys: []string{"2", "A", "y"},
			after: func(m *Model) {
				h := &model.Halt{Cause: "systemic", Source: "crm", Detail: "401 from crm: check the CRM_TOKEN secret"}
				send(m, replayProgressMsg{id: m.replay.run.id, events: []model.ReplayEvent{{Row: model.RowResult{ID: "k-1", State: "systemic", Attempts: 1, Detail: h.Detail}, Done: 1, Total: 1, Halted: h}}})
				send(m, replayDoneMsg{id: m.replay.run.id, report: model.ReplaySummary{Counts: map[model.RowState]int{"systemic": 1}, Halted: h,
					Refused: []model.Refusal{{ID: "k-3", Row: 4, Reason: "row 4 is delivered", Skipped: true}}}})
				keys(m, "esc")
			}},
		// The halt banner (the demo's long cause, wrapped) above a replay confirm with its dry
		// run: the dialog fits what is left, the dry run in view, the question, [y/N] and the
		// keys never cut.
		{name: "replay_halt_dryrun_80x24_nocolor", w: 80, h: 24, noColor: true, opts: []modelOpt{withReplayer}, keys: []string{"2", "A", "y"},
			after: func(m *Model) {
				h := &model.Halt{Cause: "systemic", Source: "crm", Detail: "source crm: header Authorization reads the environment variable CRM_TOKEN, which is not set: export it and run again"}
				send(m, replayDoneMsg{id: m.replay.run.id, report: model.ReplaySummary{Counts: map[model.RowState]int{"systemic": 1}, Halted: h}})
				keys(m, "esc", "A", "d")
			}},
		{name: "replay_halt_80x24_nocolor", w: 80, h: 24, noColor: true, opts: []modelOpt{withReplayer}, keys: []string{"2", "A", "y"},
			after: func(m *Model) {
				h := &model.Halt{Cause: "systemic", Source: "crm", Detail: "401 from crm: check the CRM_TOKEN secret"}
				send(m, replayDoneMsg{id: m.replay.run.id, report: model.ReplaySummary{Counts: map[model.RowState]int{"systemic": 1}, Halted: h,
					Rows: []model.RowResult{{ID: "k-1", State: "systemic", Attempts: 1, Detail: h.Detail}}}})
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := append([]modelOpt{func(o *Options) { o.NoColor = c.noColor; o.Banner = "demo" }}, c.opts...)
			m := newLoaded(t, testWorkbook(t), c.w, c.h, opts...)
			dark(m)
			for _, f := range c.setup {
				f(m)
			}
			keys(m, c.keys...)
			if c.after != nil {
				c.after(m)
			}
			got := screen(m)
			checkFrame(t, got, c.w, c.h)
			golden.RequireEqual(t, got)
		})
	}
}

// black is a dark terminal background.
type black struct{}

func (black) RGBA() (r, g, b, a uint32) { return 0, 0, 0, 0xffff }

// goldenSizes are the terminals every screen is drawn at: the SSH default,
// a roomy one and the smallest the UI accepts.
var goldenSizes = []struct{ w, h int }{{80, 24}, {120, 40}, {60, 15}}

// goldenTerms are the three ways a terminal can look: a dark colour terminal, NO_COLOR set in
// the environment, and TERM=dumb (no colours, ASCII only).
var goldenTerms = []struct {
	name  string
	setup func(*Model)
}{
	{"color", func(m *Model) {
		send(m, tea.BackgroundColorMsg{Color: black{}})
		send(m, tea.ColorProfileMsg{Profile: colorprofile.TrueColor})
	}},
	{"nocolor", func(m *Model) {
		send(m, tea.BackgroundColorMsg{Color: black{}})
		send(m, tea.EnvMsg(uv.Environ([]string{"TERM=xterm-256color", "NO_COLOR=1"})))
	}},
	{"dumb", func(m *Model) {
		send(m, tea.EnvMsg(uv.Environ([]string{"TERM=dumb"})))
		send(m, tea.ColorProfileMsg{Profile: colorprofile.NoTTY})
	}},
}

// goldenMatrix renders one screen at every goldenSizes × goldenTerms and compares each with
// testdata/TestGoldenMatrix/<view>_<w>x<h>_<term>.golden (go test ./tui -run TestGoldenMatrix
// -update rewrites them). wb is the workbook (nil: testWorkbook); drive brings the model to the
// screen (keys, messages) after the terminal is set up.
func goldenMatrix(t *testing.T, view string, wb func(testing.TB) *model.Workbook, drive func(t *testing.T, m *Model), opts ...modelOpt) {
	t.Helper()
	if wb == nil {
		wb = testWorkbook
	}
	for _, sz := range goldenSizes {
		for _, term := range goldenTerms {
			name := fmt.Sprintf("%s_%dx%d_%s", view, sz.w, sz.h, term.name)
			t.Run(name, func(t *testing.T) {
				all := append([]modelOpt{func(o *Options) { o.Banner = "demo" }}, opts...)
				m := newLoaded(t, wb(t), sz.w, sz.h, all...)
				term.setup(m)
				if drive != nil {
					drive(t, m)
				}
				got := screen(m)
				checkFrame(t, got, sz.w, sz.h)
				golden.RequireEqual(t, got)
			})
		}
	}
}
