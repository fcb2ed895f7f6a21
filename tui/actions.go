package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
)

// changes is the actions component: it builds the changes the action keys ask for (set a
// status, clear a sticky error, discard, undo, requeue, the reply's offer) from their targets
// (an actionScope), and returns what the root must do as actions: a toast, a picker or a confirm
// (dialogAction), a write (writeAction). The only state it keeps is the targets of an open
// status picker.
type changes struct {
	c       *common
	pending pendingAction // what the open status picker is choosing for
}

// actionScope is what an action key acts on, built by the root for each key (Model.scope): the
// tabs, the detail view when the key was pressed in it (else nil), why no write may start now
// (busy: Model.canWrite, "" when one may), and whether the program was told to end.
type actionScope struct {
	tabs   *tabSet
	detail *detail
	busy   string
	ending bool
}

// pendingAction remembers what an open picker is choosing for: the tab and the target rows by
// ID (a refresh may land while the picker is open; IDs survive it, row indices don't).
type pendingAction struct {
	tab    string
	ids    []string
	noID   noIDInfo // targets without an ID: they can't be written and are skipped
	gone   int      // targets no longer in the loaded sheet (the detail's record, refreshed away)
	hidden int      // marked rows the filter hides: left alone
	filter string   // the tab's filter the targets were picked under, "" without one
	marked bool     // the targets are the marked rows the filter shows, not the cursor row
}

// filterNote is what the confirm of p says of the filter: only for marked rows, which it
// decides among; the cursor row is the cursor row whatever the filter.
func (p pendingAction) filterNote() string {
	if !p.marked {
		return ""
	}
	return filterNote(p.filter)
}

// goneNote is the toast for an action on a record a refresh removed (a detail view left
// open keeps showing its last copy).
const goneNote = "that row is no longer in the sheet (refreshed away); nothing changed"

// goneToast reports targets that vanished in a refresh.
func goneToast(n int) toastAction {
	if n == 1 {
		return toastAction{toastError, goneNote}
	}
	return toastAction{toastError, fmt.Sprintf("%d rows are no longer in the sheet (refreshed away); left alone", n)}
}

// gone reports targets that vanished in a refresh.
func (t *toasts) gone(n int) tea.Cmd {
	a := goneToast(n)
	return t.push(a.level, a.text)
}

// record finds a loaded record by ID. A miss (the row vanished in a refresh) must never fall
// back to index 0: that is another row.
func (d *tabData) record(id string) (*model.Record, int32, bool) {
	if d == nil || id == "" {
		return nil, -1, false
	}
	ri, ok := d.byID[id]
	if !ok || int(ri) >= len(d.table.Records) {
		return nil, -1, false
	}
	return &d.table.Records[ri], ri, true
}

// readOnlyNote is the toast for a write key in read-only mode: why it is read-only
// (Options.ReadOnlyWhy, e.g. a `triage serve` viewer's role), else the flag that made it so.
func (c *common) readOnlyNote() string {
	if why := cellLine(c.readOnlyWhy); why != "" {
		return "read-only: " + why
	}
	return "read-only: opened with --readonly"
}

// roleRefusal is why this person's role over triage serve can't do what need allows, as a
// whole sentence naming the roles that can ("bob is a viewer: only a triager or an operator
// can set a status"); "" when it can, or with no role (one's own machine).
func (c *common) roleRefusal(need model.Access, what string) string {
	if roleAllows(c.role, need) {
		return ""
	}
	who := cellLine(c.user)
	if who == "" {
		who, _, _ = strings.Cut(cellLine(c.identity), " · ")
	}
	return (&model.AccessError{Who: cmp.Or(who, "this person"), Role: c.role, Why: "only " + rolesThatCan(need) + " can " + what}).Error()
}

// mayChange is why this person can't make a change (what: "set a status") now: their role,
// else why no write can start (busy); "" when they can.
func (sc actionScope) mayChange(c *common, what string) string {
	if why := c.roleRefusal(model.AccessTriager, what); why != "" && !sc.ending {
		return why
	}
	return sc.busy
}

// planningNote is the toast for a write or a refresh while a big replay plan is computed: the
// plan's snapshot would no longer match the sheet, and the confirm would replay a row just
// discarded or set.
const planningNote = "planning the replay…; try again when its confirm opens"

// canWrite says why a write can't start now, or "" if it can.
// endingNote is why nothing new starts once the program was told to end (ShutdownMsg).
const endingNote = "the server is shutting down: nothing new is written or sent"

func (m *Model) canWrite() string {
	switch {
	case m.end.ending:
		return endingNote
	case !roleAllows(m.c.role, model.AccessTriager):
		return m.c.roleRefusal(model.AccessTriager, "change rows")
	case m.c.readOnly:
		return m.c.readOnlyNote()
	case m.writes.writing:
		return "a write is still in progress; try again when it finishes"
	case m.replay.running():
		return "a replay is running; try again when it ends"
	case m.replay.planning:
		return planningNote
	}
	return ""
}

// scope is what an action key acts on (inDetail: pressed in the detail view) and whether a
// change may start now, for the actions component (changes).
func (m *Model) scope(inDetail bool) actionScope {
	sc := actionScope{tabs: &m.tabs, busy: m.canWrite(), ending: m.end.ending}
	if inDetail {
		sc.detail = m.detail
	}
	return sc
}

// targets resolves the rows an action applies to: the detail view's record, else the marked
// rows the filter shows, else the cursor row.
func (sc actionScope) targets() (*tabState, pendingAction, bool) {
	if d := sc.detail; d != nil {
		ts := sc.tabs.named(d.tab)
		if ts == nil || ts.data == nil {
			return nil, pendingAction{}, false
		}
		p := pendingAction{tab: ts.name()}
		switch _, _, found := ts.data.record(d.rec.ID); {
		case d.rec.ID == "":
			p.noID.add(ts.data.table, &d.rec)
		case !found:
			p.gone = 1
		default:
			p.ids = []string{d.rec.ID}
		}
		return ts, p, true
	}
	ts := sc.tabs.current()
	if ts == nil || ts.data == nil {
		return nil, pendingAction{}, false
	}
	recs, hidden := ts.targets()
	if len(recs) == 0 {
		return nil, pendingAction{}, false
	}
	p := pendingAction{tab: ts.name(), hidden: hidden, filter: ts.filterQuery(), marked: ts.nMarked > 0}
	for _, ri := range recs {
		r := &ts.data.table.Records[ri]
		if r.ID != "" {
			p.ids = append(p.ids, r.ID)
		} else {
			p.noID.add(ts.data.table, r)
		}
	}
	return ts, p, true
}

// noIDInfo counts targets without an ID (they can't be written) and keeps why the first one
// has none, for the note.
type noIDInfo struct {
	n   int
	row int
	why string
}

func (x *noIDInfo) add(t *model.Table, r *model.Record) {
	x.n++
	if x.n == 1 {
		x.row, x.why = r.Row, noIDReason(t, r)
	}
}

// noIDReason says why a row has no identity, from its problems where they say: inbox and
// queue rows are located by their ID cell (empty, or shared with another row); dead letters
// by their key, so for them the fix is a key cell.
func noIDReason(t *model.Table, r *model.Record) string {
	var dup, noID, aboutID string
	for _, p := range r.Problems {
		lp := strings.ToLower(p)
		switch {
		case dup == "" && (strings.Contains(lp, "duplicate") || strings.Contains(lp, " share the ")):
			dup = p
		case noID == "" && (strings.Contains(lp, "no id") || strings.Contains(lp, "no key")):
			noID = p
		case aboutID == "" && strings.Contains(p, "ID"):
			aboutID = p
		}
	}
	if t.Config.Role == model.RoleDeadLetter {
		const fix = "change one of the key cells in the sheet so each row has its own key"
		if dup != "" {
			if strings.Contains(dup, " share the ") {
				return dup // model's text names the rows and the fix already
			}
			return dup + " (" + fix + ")"
		}
		key := strings.TrimSpace(t.Get(r, model.FKey))
		if key == "" {
			key, _, _ = model.EffectiveKey(t.Config, t.Header, r.Cells)
		}
		if key != "" {
			return "its key " + shortID(key) + " is shared with another row: " + fix
		}
		return "its key is shared with another row: " + fix
	}
	switch {
	case dup != "":
		return dup
	case noID != "":
		return noID
	case aboutID != "":
		return aboutID
	}
	return "no ID (a row can only be changed by its ID; fill its ID cell in the sheet)"
}

// note explains the skipped rows: how many, and why (the first one's reason).
func (x noIDInfo) note() string {
	where := fmt.Sprintf("row %d", x.row)
	if x.n > 1 {
		where = "first: " + where
	}
	return fmt.Sprintf("%d %s skipped (%s): %s", x.n, words.Plural(x.n, "row", "rows"), where, x.why)
}

// setStatusPicker opens the status picker for the targets (it keeps them, for setStatus).
func (ch *changes) setStatusPicker(sc actionScope) action {
	if why := sc.mayChange(ch.c, "set a status"); why != "" {
		return toastAction{toastInfo, why}
	}
	ts, p, ok := sc.targets()
	if !ok {
		return toastAction{toastInfo, "no row to change"}
	}
	if p.gone > 0 && len(p.ids) == 0 {
		return goneToast(p.gone)
	}
	if len(p.ids) == 0 {
		return toastAction{toastError, p.noID.note()}
	}
	t := ts.data.table
	current := ""
	for i, id := range p.ids {
		r, _, ok := ts.data.record(id)
		if !ok {
			current = ""
			break
		}
		s := r.Status
		if i == 0 {
			current = s
		} else if s != current {
			current = ""
			break
		}
	}
	title := fmt.Sprintf("Set status of %d rows", len(p.ids))
	if len(p.ids) == 1 {
		if r, _, ok := ts.data.record(p.ids[0]); ok {
			title = "Set status of " + rowLabel(t, r)
		}
	}
	options := append([]string(nil), t.Statuses...)
	ch.pending = p
	return dialogAction{newPicker(ch.c, title, options, current)}
}

// rowLabel names one row the way a person recognises it: an inbox row by its sender's name
// (or email), a dead letter by its source and row, a job by its ID; else by its row. Inbox
// and dead-letter IDs are opaque keys nobody reads.
func rowLabel(t *model.Table, r *model.Record) string {
	const most = 40
	get := func(f model.Field) string { return truncate(cellLine(t.Get(r, f)), most) }
	row := "row " + itoa(r.Row)
	switch t.Config.Role {
	case model.RoleInbox:
		if n := get(model.FName); n != "" {
			return n
		}
		if e := get(model.FEmail); e != "" {
			return e
		}
	case model.RoleDeadLetter:
		if src := get(model.FSource); src != "" {
			return src + ", " + row
		}
	case model.RoleQueue:
		if id := truncate(cellLine(r.ID), most); id != "" {
			return id
		}
	}
	return row
}

// shortID shortens an ID for a title or toast: minted keys are 39 characters long.
func shortID(id string) string { return truncate(cellLine(id), 14) }

// unmark drops the marks of the rows a confirmed op leaves out: they were part of the choice
// just made.
func (t *tabSet) unmark(op writeOp) {
	ts := t.named(op.tab)
	if ts == nil || ts.data == nil || len(op.unmark) == 0 {
		return
	}
	for _, id := range op.unmark {
		if ri, ok := ts.data.byID[id]; ok {
			ts.setMark(ri, false)
		}
	}
	ts.countShownMarks()
}

// setStatus builds the edits for a chosen status: one model.SetStatus per target that has an
// ID and isn't already at that status, confirmed first when there is more than one.
func (ch *changes) setStatus(tabs *tabSet, status string) action {
	p := ch.pending
	ch.pending = pendingAction{}
	ts := tabs.named(p.tab)
	if ts == nil || ts.data == nil {
		return toastAction{toastError, fmt.Sprintf("tab %s is gone since the picker opened; nothing changed", p.tab)}
	}
	t := ts.data.table
	var edits []model.Edit
	same, gone := 0, 0
	for _, id := range p.ids {
		r, _, ok := ts.data.record(id)
		if !ok {
			gone++
			continue
		}
		if r.Status == model.NormStatus(t.Config.Role, status) {
			same++
			continue
		}
		edits = append(edits, model.SetStatus(t, r, status))
	}
	var acts actions
	if p.noID.n > 0 {
		acts = append(acts, toastAction{toastError, p.noID.note()})
	}
	if gone > 0 {
		acts = append(acts, goneToast(gone))
	}
	if len(edits) == 0 {
		if same > 0 {
			acts = append(acts, toastAction{toastInfo, fmt.Sprintf("already %s: nothing to change", cellLine(status))})
		}
		return acts
	}
	op := writeOp{kind: writeSetStatus, tab: t.Config.Name, edits: edits, status: status}
	if len(edits) == 1 {
		return append(acts, writeAction{op})
	}
	var notes []string
	if n := p.filterNote(); n != "" {
		notes = append(notes, n)
	}
	if p.hidden > 0 {
		notes = append(notes, fmt.Sprintf("%d marked %s hidden by the filter %s left alone.", p.hidden, words.Plural(p.hidden, "row", "rows"), words.Plural(p.hidden, "is", "are")))
	}
	if same > 0 {
		notes = append(notes, fmt.Sprintf("%d already %s.", same, cellLine(status)))
	}
	if p.noID.n > 0 {
		notes = append(notes, p.noID.note()+".")
	}
	return append(acts, dialogAction{newConfirm(ch.c, fmt.Sprintf("Set status of %d rows to %s?", len(edits), status), notes, op)})
}

// clearError releases sticky errors (rejected dead letters, error jobs): a person's
// decision, never automation's (invariant 6).
func (ch *changes) clearError(sc actionScope) action {
	if why := sc.mayChange(ch.c, "clear a sticky error"); why != "" {
		return toastAction{toastInfo, why}
	}
	ts, p, ok := sc.targets()
	if !ok {
		return toastAction{toastInfo, "no row to change"}
	}
	t := ts.data.table
	if t.Config.Role == model.RoleInbox {
		return toastAction{toastInfo, fmt.Sprintf("the inbox has no sticky errors (%s clears rejected dead letters and error jobs)", firstKey(ch.c.keys.ClearError))}
	}
	if p.gone > 0 && len(p.ids) == 0 {
		return goneToast(p.gone)
	}
	var edits []model.Edit
	var notSticky []string
	gone := 0
	for _, id := range p.ids {
		r, _, ok := ts.data.record(id)
		if !ok {
			gone++
			continue
		}
		e, ok := model.ClearError(t, r, ch.c.now())
		if !ok {
			notSticky = append(notSticky, id)
			continue
		}
		edits = append(edits, e)
	}
	var acts actions
	if p.noID.n > 0 {
		acts = append(acts, toastAction{toastError, p.noID.note()})
	}
	if gone > 0 {
		acts = append(acts, goneToast(gone))
	}
	sticky := model.StatusRejected
	back := model.StatusDead
	blanked := "the error text kept (why it stopped; the next attempt writes its own)"
	if t.Config.Role == model.RoleQueue {
		sticky, back, blanked = model.StatusError, model.StatusPending, "the failed claim released and the error text kept"
	}
	if len(edits) == 0 {
		if n := len(notSticky); n > 0 {
			acts = append(acts, toastAction{toastInfo, fmt.Sprintf("nothing to clear: %s %s no sticky error (only %s rows have one)", countRows(n), words.Plural(n, "has", "have"), sticky)})
		}
		return acts
	}
	op := writeOp{kind: writeClearError, tab: t.Config.Name, edits: edits, status: back, unmark: notSticky}
	if len(edits) == 1 && len(notSticky) == 0 {
		return append(acts, writeAction{op})
	}
	// Several rows, or marked rows some of which can't be changed: ask, naming what is left
	// out, so no marked row is skipped unseen.
	notes := []string{strings.TrimSpace(fmt.Sprintf("%s back to %s, %s. %s", words.Plural(len(edits), "It goes", "They go"), back, blanked, p.filterNote()))}
	if n := len(notSticky); n > 0 {
		notes = append(notes, fmt.Sprintf("%s skipped: no sticky error (only %s rows have one); %s unmarked.", countRows(n), sticky, words.Plural(n, "it is", "they are")))
	}
	if p.hidden > 0 {
		notes = append(notes, fmt.Sprintf("%d marked %s hidden by the filter %s left alone.", p.hidden, words.Plural(p.hidden, "row", "rows"), words.Plural(p.hidden, "is", "are")))
	}
	return append(acts, dialogAction{newConfirm(ch.c, fmt.Sprintf("Clear the sticky error of %s?", countRows(len(edits))), notes, op)})
}

// undo reverts the last applied change of q with the inverse edits (which expect the values
// the change wrote, so a row changed since is reported as a conflict, not overwritten).
func (ch *changes) undo(sc actionScope, q *writeQueue) action {
	if why := sc.mayChange(ch.c, "undo a change"); why != "" {
		return toastAction{toastInfo, why}
	}
	last, ok := q.lastChange()
	if !ok {
		return toastAction{toastInfo, "nothing to undo"}
	}
	op := writeOp{kind: writeUndo, tab: last.tab, edits: inverseAll(last.edits), undoes: &last}
	here := sc.tabs.current()
	if sc.detail != nil {
		here = sc.tabs.named(sc.detail.tab)
	}
	sameTab := here != nil && here.name() == last.tab
	if len(op.edits) == 1 && sameTab {
		return writeAction{op}
	}
	// Another tab's change (or many rows) is never undone unseen: say which tab, which rows
	// and what they go back to, and ask.
	question := fmt.Sprintf("Undo the last change to %s of %s?", countRows(len(op.edits)), cellLine(last.tab))
	if !sameTab {
		question = fmt.Sprintf("Undo the last change, made on the %s tab (%s)?", cellLine(last.tab), countRows(len(op.edits)))
	}
	notes := []string{sc.tabs.undoWhat(op), "Each row goes back to what it was, unless someone changed it since (then it is reported, not overwritten)."}
	d := newConfirm(ch.c, question, notes, op)
	d.yesLabel = "undo"
	return dialogAction{d}
}

// undoWhat names the rows an undo touches, as rowLabel names them, and what they go back to:
// "Grace Hopper: status back to new" or "crm, row 5, crm, row 9: status back to dead".
func (t *tabSet) undoWhat(op writeOp) string {
	ts := t.named(op.tab)
	var rows []string
	for i, e := range op.edits {
		if i == 4 {
			rows = append(rows, fmt.Sprintf("and %d more", len(op.edits)-i))
			break
		}
		where := "ID " + shortID(e.ID)
		if ts != nil && ts.data != nil {
			if ri, ok := ts.data.byID[e.ID]; ok {
				// Named as a reader knows the row: the sender, the source and row, the job.
				where = rowLabel(ts.data.table, &ts.data.table.Records[ri])
			}
		}
		rows = append(rows, where)
	}
	return strings.Join(rows, ", ") + ": " + backTo(op.edits)
}

// backTo says what edits set, field by field: "status back to new" or "status back to new
// or (empty)"; a field set to many different values is "status back to what it was".
func backTo(edits []model.Edit) string {
	vals := map[model.Field][]string{}
	var fields []model.Field
	for _, e := range edits {
		for f, v := range e.Set {
			if _, ok := vals[f]; !ok {
				fields = append(fields, f)
			}
			v = cmp.Or(truncate(cellLine(v), 20), "(empty)")
			if !slices.Contains(vals[f], v) {
				vals[f] = append(vals[f], v)
			}
		}
	}
	slices.Sort(fields)
	parts := make([]string, len(fields))
	for i, f := range fields {
		if vs := vals[f]; len(vs) <= 3 {
			parts[i] = string(f) + " back to " + strings.Join(vs, " or ")
		} else {
			parts[i] = string(f) + " back to what it was"
		}
	}
	return strings.Join(parts, ", ")
}

func inverseAll(edits []model.Edit) []model.Edit {
	out := make([]model.Edit, len(edits))
	for i, e := range edits {
		out[i] = e.Inverse()
	}
	return out
}

// setCells writes values into a loaded record (after the store confirmed them) and derives
// again everything the load derived from its cells: the status (and the counts), the time
// (timestamp, or claimedAt in the queue: a requeued job has no claim age), the problems about
// those two cells, the filter text and the column widths. Without it the row would show its
// old age or status until the next refresh.
func (ts *tabState) setCells(ri int32, set map[model.Field]string) {
	t := ts.data.table
	if holds(t, &t.Records[ri], set) {
		// Already so (a hub pushed the sheet as written before the write's answer came):
		// nothing to change, and no copy of a shared workbook.
		return
	}
	ts.data.own() // a workbook shared with other sessions, or read by a build, is never written
	t = ts.data.table
	r := &t.Records[ri]
	cloned := false
	for f, v := range set {
		col := t.Header.Col(f)
		if col < 0 {
			continue
		}
		if !cloned {
			// Copy on write: a replay run may hold a snapshot sharing this slice.
			r.Cells = append(make([]string, 0, max(len(r.Cells), col+1)), r.Cells...)
			cloned = true
		}
		for len(r.Cells) <= col {
			r.Cells = append(r.Cells, "")
		}
		r.Cells[col] = v
	}
	if !cloned {
		return
	}
	old := r.Status
	rederive(t, r)
	if r.Status != old {
		ts.data.counts[old]--
		if ts.data.counts[old] <= 0 {
			delete(ts.data.counts, old)
		}
		ts.data.counts[r.Status]++
	}
	if ts.data.hay != nil {
		ts.data.hay[ri] = model.Haystack(r)
	} else if b := ts.data.building; b != nil {
		b.dirty = append(b.dirty, ri) // its text is rebuilt when the build lands (onHay)
	}
	if ts.data.widen(r) {
		ts.widths = nil // laid out again with the column that grew
	}
}

// holds reports whether r's cells already hold every value of set (a column the tab lacks
// counts as holding it: setCells skips it).
func holds(t *model.Table, r *model.Record, set map[model.Field]string) bool {
	for f, v := range set {
		if col := t.Header.Col(f); col >= 0 && t.Get(r, f) != v {
			return false
		}
	}
	return true
}

// rederive recomputes what model.Decode derives from a row's cells and an edit can change:
// the status, the time, and the problems about them. The ID stays: rows are written by it.
func rederive(t *model.Table, r *model.Record) {
	role := t.Config.Role
	r.Status = model.NormStatus(role, t.Get(r, model.FStatus))
	timeField := model.FTimestamp
	if role == model.RoleQueue {
		timeField = model.FClaimedAt
	}
	var problems []string // a new slice: a replay's snapshot may share the old one
	for _, p := range r.Problems {
		if strings.HasPrefix(p, string(timeField)+" ") && strings.HasSuffix(p, " is not a date") {
			continue // re-checked below
		}
		if role == model.RoleQueue && strings.HasPrefix(p, "unknown status ") {
			continue
		}
		problems = append(problems, p)
	}
	r.Time = time.Time{}
	if v := t.Get(r, timeField); strings.TrimSpace(v) != "" {
		if tm, ok := model.ParseTime(v, t.Location); ok {
			r.Time = tm
		} else {
			problems = append(problems, fmt.Sprintf("%s %q is not a date", timeField, v))
		}
	}
	if role == model.RoleQueue && !slices.Contains(model.DefaultStatuses(model.RoleQueue), r.Status) {
		problems = append(problems, fmt.Sprintf("unknown status %q (expected pending, claimed, done or error)", r.Status))
	}
	r.Problems = problems
}

// discard drops dead letters an operator decided not to replay (status → discarded): the
// cursor row (or the detail's record) at once, marked rows after a confirm. u undoes it.
func (ch *changes) discard(sc actionScope) action {
	if why := sc.mayChange(ch.c, "discard a dead letter"); why != "" {
		return toastAction{toastInfo, why}
	}
	ts, p, ok := sc.targets()
	if !ok {
		return toastAction{toastInfo, "no row to discard"}
	}
	t := ts.data.table
	if t.Config.Role != model.RoleDeadLetter {
		return toastAction{toastInfo, fmt.Sprintf("discard is for dead letters (the %s tab)", model.DefaultTabName(model.RoleDeadLetter))}
	}
	if p.gone > 0 && len(p.ids) == 0 {
		return goneToast(p.gone)
	}
	var edits []model.Edit
	var skipped []string
	already, delivered, gone := 0, 0, 0
	for _, id := range p.ids {
		r, _, ok := ts.data.record(id)
		if !ok {
			gone++
			continue
		}
		switch r.Status {
		case model.StatusDiscarded:
			already++
			skipped = append(skipped, id)
			continue
		case model.StatusDelivered:
			delivered++
			skipped = append(skipped, id)
			continue
		}
		edits = append(edits, model.SetStatus(t, r, model.StatusDiscarded))
	}
	var acts actions
	if p.noID.n > 0 {
		acts = append(acts, toastAction{toastError, p.noID.note()})
	}
	if gone > 0 {
		acts = append(acts, goneToast(gone))
	}
	if len(edits) == 0 {
		switch {
		case delivered > 0:
			acts = append(acts, toastAction{toastInfo, "delivered rows aren't discarded: there is nothing left to drop"})
		case already > 0:
			acts = append(acts, toastAction{toastInfo, "already discarded"})
		}
		return acts
	}
	op := writeOp{kind: writeDiscard, tab: t.Config.Name, edits: edits, status: model.StatusDiscarded, unmark: skipped}
	if len(edits) == 1 && len(skipped) == 0 {
		return append(acts, writeAction{op})
	}
	notes := []string{strings.TrimSpace("They are never replayed" + withHint("", " (", keySays(ch.c.keys.Undo, "undoes this)")) + ". " + p.filterNote())}
	if p.hidden > 0 {
		notes = append(notes, fmt.Sprintf("%d marked %s hidden by the filter %s left alone.", p.hidden, words.Plural(p.hidden, "row", "rows"), words.Plural(p.hidden, "is", "are")))
	}
	if n := already + delivered; n > 0 {
		notes = append(notes, fmt.Sprintf("%s already discarded or delivered: left alone and unmarked.", countRows(n)))
	}
	return append(acts, dialogAction{newConfirm(ch.c, fmt.Sprintf("Discard %d dead %s?", len(edits), words.Plural(len(edits), "letter", "letters")), notes, op)})
}
