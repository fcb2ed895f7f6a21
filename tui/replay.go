package tui

import (
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
)

// Replaying dead letters from the TUI (DESIGN §5, §6).
//
// R (marked rows, else the cursor row) or A (every row the filter shows) snapshots the target
// records and asks Options.Replayer for a Plan; the confirm dialog (default No) states the
// count, the sources and the destinations, and `d` shows the dry run: every call with its
// method, URL, key, source and redacted headers, and every refused row with its reason. `y`
// starts Replayer.Replay in a tea.Cmd with a cancellable context. Its progress callback only
// appends to an in-memory queue (it never blocks the run); a listening Cmd turns the queue
// into messages, so Update sees every row's state change in order. The progress view shows
// per-row states (with their sheet rows), counts per outcome, rate, ETA and elapsed time;
// x/ctrl+c cancel (calls in flight finish and are written back; nothing new starts); esc/q go
// back to the table while the run goes on (the footer keeps a line of its progress, P shows
// the view again). When the run ends the view shows the report, the workbook reloads (the
// cursor stays on its row by ID) and a halt leaves a loud banner naming the cause and the
// fix until it is dismissed. R in the detail view replays the record shown.
//
// While a run is in progress nothing else writes and no load replaces the data under it.

// syncPlanMax is how many rows are planned directly in Update. Replayer.Plan does no I/O, but
// planning 100,000 rows is not a keystroke's work; above this it runs in a Cmd.
const syncPlanMax = 2000

// previewMaxCalls caps the dry-run list in the dialog (`triage replay --dry-run` lists all).
const previewMaxCalls = 2000

// replayPlannedMsg carries a plan to Update (directly, or from the planning Cmd).
type replayPlannedMsg struct {
	seq    int
	tab    string
	all    bool // A: every row the filter shows
	snap   *model.Table
	recs   []*model.Record
	hidden int    // marked rows the filter hides (left alone)
	filter string // the tab's filter when the replay was asked for, "" without one
	marked bool   // the rows are the marked rows the filter shows, not the cursor row
	plan   model.ReplayPlan
}

// replayStartAction: the user said yes to a planned replay.
type replayStartAction struct{ seq int }

// quitAction: the user confirmed quitting during a run.
type quitAction struct{}

func (replayStartAction) isAction() {}
func (quitAction) isAction()        {}

// snapshot copies the target records (and the table's header and config) so a run reads data
// Update never touches again: setCells replaces a record's Cells rather than writing into it,
// so a copied Record never sees a later write. t.Records of the snapshot is exactly recs.
func snapshot(t *model.Table, idx []int32) (*model.Table, []*model.Record) {
	snap := *t
	snap.Records = make([]model.Record, len(idx))
	recs := make([]*model.Record, len(idx))
	for i, ri := range idx {
		snap.Records[i] = t.Records[ri]
		snap.Records[i].Problems = append([]string(nil), t.Records[ri].Problems...)
		recs[i] = &snap.Records[i]
	}
	return &snap, recs
}

// detailTarget is the record the detail view shows, as a replay's one row; nil, with what to
// say, when it is gone or has no ID.
func (m *Model) detailTarget(ts *tabState) ([]int32, tea.Cmd) {
	_, p, _ := m.scope(true).targets()
	switch {
	case p.gone > 0:
		return nil, m.toasts.gone(p.gone)
	case p.noID.n > 0:
		return nil, m.toasts.sayf(toastError, "%s", p.noID.note())
	case len(p.ids) == 0:
		return nil, nil
	}
	_, ri, _ := ts.data.record(p.ids[0])
	return []int32{ri}, nil
}

// startReplay answers R (all=false) and A (all=true) in the table, and R in the detail view
// (inDetail: the record shown, whatever is marked).
func (m *Model) startReplay(all, inDetail bool) tea.Cmd {
	if m.end.ending {
		return m.toasts.sayf(toastInfo, "%s", endingNote)
	}
	if why := m.c.roleRefusal(model.AccessOperator, "replay dead letters"); why != "" {
		return m.toasts.sayf(toastInfo, "%s", why)
	}
	ts := m.tabs.current()
	if inDetail {
		ts = m.tabs.named(m.detail.tab)
	}
	if ts == nil || ts.data == nil {
		return nil
	}
	if ts.cfg.Role != model.RoleDeadLetter {
		return m.toasts.sayf(toastInfo, "replay is for dead letters (the %s tab)", model.DefaultTabName(model.RoleDeadLetter))
	}
	var detailIdx []int32
	if inDetail {
		var cmd tea.Cmd
		if detailIdx, cmd = m.detailTarget(ts); detailIdx == nil {
			return cmd
		}
	}
	if m.opts.Replayer == nil {
		return m.replayHint(ts, all, inDetail)
	}
	if why := m.watch.refuseRun(ts.name()); why != "" {
		return m.toasts.push(toastInfo, why) // another person replays this tab (watch.go)
	}
	switch {
	case m.replay.running():
		return m.toasts.sayf(toastInfo, "a replay is already running")
	case m.replay.planning:
		return nil
	case m.writes.writing:
		return m.toasts.sayf(toastInfo, "a write is still in progress; try again when it finishes")
	}
	var idx []int32
	hidden := 0
	switch {
	case inDetail:
		idx = detailIdx
	case all:
		idx = ts.visible
	default:
		idx, hidden = ts.targets()
	}
	if len(idx) == 0 {
		return m.toasts.sayf(toastInfo, "no row to replay")
	}
	m.replay.planSeq++
	snap, recs := snapshot(ts.data.table, idx)
	msg := replayPlannedMsg{seq: m.replay.planSeq, tab: ts.name(), all: all, snap: snap, recs: recs, hidden: hidden, marked: !all && !inDetail && ts.nMarked > 0}
	if !inDetail {
		msg.filter = ts.filterQuery()
	}
	rp := m.opts.Replayer
	if len(recs) <= syncPlanMax {
		msg.plan = rp.Plan(snap, recs)
		return m.onReplayPlanned(msg)
	}
	m.replay.planning = true
	return tea.Batch(m.toasts.sayf(toastInfo, "planning the replay of %d rows…", len(recs)), func() tea.Msg {
		msg.plan = rp.Plan(snap, recs)
		return msg
	})
}

// onReplayPlanned opens the confirm dialog for a plan.
func (m *Model) onReplayPlanned(msg replayPlannedMsg) tea.Cmd {
	if msg.seq != m.replay.planSeq {
		return nil
	}
	m.replay.planning = false
	if m.dialog != nil || m.replay.running() {
		// Something else took the screen while a big plan was computed: don't clobber it.
		return m.toasts.sayf(toastInfo, "the replay plan was dropped because another dialog is open; %s", withHint("ask again", ": ", strings.Trim(firstKey(m.c.keys.Replay)+" or "+firstKey(m.c.keys.ReplayAll), " or")))
	}
	m.replay.pendingReplay = &msg
	m.dialog = newReplayConfirm(m.c, msg)
	return nil
}

// newReplayConfirm builds the dialog that states what a replay will do.
func newReplayConfirm(c *common, msg replayPlannedMsg) confirm {
	p := msg.plan
	n := len(p.Calls)
	var question string
	var yes action
	switch {
	case c.readOnly:
		question = fmt.Sprintf("Read-only: nothing will be sent. A replay would send %d %s.", n, words.Plural(n, "call", "calls"))
	case n == 0:
		question = nothingToReplay(p.Refused)
	default:
		question = fmt.Sprintf("Replay %d %s to %d %s (%s)?", n, words.Plural(n, "call", "calls"),
			len(p.Sources), words.Plural(len(p.Sources), "source", "sources"), strings.Join(p.Sources, ", "))
		yes = replayStartAction{seq: msg.seq}
	}
	var notes []string
	switch {
	case msg.all && msg.filter != "":
		notes = append(notes, fmt.Sprintf("All %s the filter shows (%s).", countRows(len(msg.recs)), cellLine(msg.filter)))
	case msg.all:
		notes = append(notes, fmt.Sprintf("All %s of the tab.", countRows(len(msg.recs))))
	case msg.marked && msg.filter != "":
		notes = append(notes, filterNote(msg.filter))
	}
	if msg.hidden > 0 {
		notes = append(notes, fmt.Sprintf("%s hidden by the filter %s left alone.", countRows(msg.hidden)+" marked", words.Plural(msg.hidden, "is", "are")))
	}
	refused, skipped := splitRefusals(p.Refused)
	if len(refused) > 0 {
		var rs []string
		for _, r := range refused {
			if slices.Contains(rs, r.Reason) {
				continue // one reason for every row (a role, another person's run): said once
			}
			if len(rs) == 2 {
				rs = append(rs, "…")
				break
			}
			rs = append(rs, r.Reason)
		}
		notes = append(notes, fmt.Sprintf("%d refused: %s", len(refused), strings.Join(rs, "; ")))
	}
	if len(skipped) > 0 && !(n == 0 && len(p.Refused) == 1) {
		// A single row's reason is already the question.
		notes = append(notes, fmt.Sprintf("%s skipped: delivered, rejected and discarded rows are not replayed (clear a rejected row's error, or set a row back to dead, first).", countRows(len(skipped))))
	}
	d := newConfirm(c, question, notes, writeOp{})
	d.yes = yes
	d.yesLabel = "replay"
	// The destinations on lines of their own, under the question: "→ https://x/api/? [y/N]"
	// read like a URL ending in a question mark.
	if yes != nil {
		d.dests = p.Destinations
	}
	d.list = dryRunLines(p)
	d.listTitle = "Dry run: nothing is sent"
	d.listToggle = true
	d.showList = c.readOnly || (n == 0 && len(p.Refused) > 1)
	return d
}

// splitRefusals separates the rows refused for a problem from those skipped by rule
// (delivered, rejected, discarded: nothing is wrong with them).
func splitRefusals(all []model.Refusal) (refused, skipped []model.Refusal) {
	for _, r := range all {
		if r.Skipped {
			skipped = append(skipped, r)
		} else {
			refused = append(refused, r)
		}
	}
	return refused, skipped
}

// nothingToReplay is the question of a replay with no call to send: one row's own reason
// ("row 4: already delivered"), else how many were refused and how many skipped by rule.
func nothingToReplay(all []model.Refusal) string {
	if len(all) == 1 {
		return "Nothing to replay: " + all[0].Reason + "."
	}
	refused, skipped := splitRefusals(all)
	var parts []string
	if len(refused) > 0 {
		parts = append(parts, countRows(len(refused))+" refused")
	}
	if len(skipped) > 0 {
		parts = append(parts, countRows(len(skipped))+" skipped")
	}
	if len(parts) == 0 {
		return "Nothing to replay."
	}
	return "Nothing to replay: " + strings.Join(parts, ", ") + "."
}

// countRows is "1 row" / "3 rows".
func countRows(n int) string { return itoa(n) + " " + words.Plural(n, "row", "rows") }

// listSome joins the first n items and says how many more there are.
func listSome(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}

// dryRunLines is the dry-run preview: every call that would be sent, then every refused row.
// Raw text: the dialog sanitises and wraps it.
func dryRunLines(p model.ReplayPlan) []string {
	var out []string
	out = append(out, fmt.Sprintf("Would send %d %s:", len(p.Calls), words.Plural(len(p.Calls), "call", "calls")))
	for i, c := range p.Calls {
		if i == previewMaxCalls {
			out = append(out, fmt.Sprintf("  … and %d more (triage replay --dry-run lists them all)", len(p.Calls)-i))
			break
		}
		method := c.Method
		if method == "" {
			method = "POST"
		}
		out = append(out, fmt.Sprintf("  %s %s", method, c.URL))
		out = append(out, fmt.Sprintf("      key %s · source %s · row %d", c.Key, c.Source, c.Row))
		for _, h := range c.Headers {
			out = append(out, "      "+h)
		}
	}
	var refused, skipped []model.Refusal
	for _, r := range p.Refused {
		if r.Skipped {
			skipped = append(skipped, r)
		} else {
			refused = append(refused, r)
		}
	}
	for _, g := range []struct {
		title string
		rows  []model.Refusal
	}{{"Refused", refused}, {"Skipped", skipped}} {
		if len(g.rows) == 0 {
			continue
		}
		out = append(out, "", fmt.Sprintf("%s %s:", g.title, countRows(len(g.rows))))
		for _, r := range g.rows {
			out = append(out, "  "+r.Reason) // the reason names the row
		}
	}
	return out
}

// replayHint answers R and A when the TUI has no Replayer: say exactly which command replays
// these rows.
func (m *Model) replayHint(ts *tabState, all, inDetail bool) tea.Cmd {
	var ids []string
	if inDetail {
		ids = []string{m.detail.rec.ID}
	} else if all {
		for _, ri := range ts.visible {
			if id := ts.data.table.Records[ri].ID; id != "" {
				ids = append(ids, id)
			}
		}
	} else if _, p, ok := m.scope(false).targets(); ok {
		ids = p.ids
	}
	if len(ids) == 0 {
		return m.toasts.sayf(toastInfo, "no row to replay")
	}
	more := ""
	if len(ids) > 3 {
		ids, more = ids[:3], " …"
	}
	return m.toasts.sayf(toastInfo, "replay isn't wired into this TUI; run: triage replay --tab %s %s%s", ts.name(), strings.Join(ids, " "), more)
}
