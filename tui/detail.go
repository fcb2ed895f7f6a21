package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/internal/a1"
	"github.com/triage-dev/triage/model"
)

// detailField is one line item of the detail view: a column (or a derived fact) and its raw
// value. The value is sanitised when rendered, and copied raw by `y`.
type detailField struct {
	label   string
	note    string // "hidden", "extra", ...
	value   string
	raw     string // what `y` copies when it isn't value (the payload cell as is, a URL)
	problem string // shown under the label: why the value can't be read as expected
	block   bool   // shown below its label, wrapped (messages, payloads, long values)
}

// copyValue is what `y` copies for the field.
func (f detailField) copyValue() string {
	if f.raw != "" {
		return f.raw
	}
	return f.value
}

// keyNote says where a dead letter's idempotency key comes from (invariant 3).
func keyNote(o model.KeyOrigin) string {
	switch o {
	case model.KeyCell:
		return "from the key cell"
	case model.KeyPayload:
		return "from the payload"
	case model.KeyMinted:
		return "minted, not yet written"
	}
	return "none"
}

// detail shows one whole record: every column (extras and hidden ones too, labelled), long
// values wrapped, JSON payloads indented, problems listed. It is a pager (as in less and
// neomutt): j/k scroll a line, the page keys a page; tab/shift+tab move the focused field
// (what `y` copies).
type detail struct {
	c       *common
	tab     string
	rec     model.Record // a copy: a refresh replaces the table under us
	title   string
	fields  []detailField
	focus   int
	vp      viewport.Model
	width   int
	starts  []int // first content line of each field
	ends    []int // last content line of each field
	lines   []string
	problem []string
	gone    bool        // the record vanished in a refresh: this is its last copy
	search  pagerSearch // `/` in the view (pagersearch.go)
}

func newDetail(c *common, t *model.Table, r *model.Record) *detail {
	d := &detail{c: c, tab: t.Config.Name, rec: *r}
	d.title = t.Config.Name + " · row " + itoa(r.Row)
	d.problem = append([]string(nil), r.Problems...)
	if t.Config.Role == model.RoleDeadLetter {
		d.fields = append(d.fields, deadLetterFields(t, r)...)
	}
	if t.Stale(r, c.now()) {
		d.fields = append(d.fields, detailField{label: "Claim", value: "stale: claimed " + ago(c.now(), inZone(r.Time, t.Location)) + ", past the " + shortDur(t.Config.StaleAfter) + " threshold" + withHint("", " (", requeueHint(c))})
	}
	mapped := map[int]model.Field{}
	for f, i := range t.Header.Index {
		mapped[i] = f
	}
	var fields []detailField
	for i := 0; i < len(r.Cells) || i < len(t.Header.Headers); i++ {
		f, isSchema := mapped[i]
		fields = append(fields, cellField(c, t, r, i, f, isSchema))
	}
	// Dead letters and jobs: the payload, usually the longest, goes last so the short facts
	// (error, attempts, status) stay on the first screen.
	if t.Config.Role != model.RoleInbox {
		if pc := t.Header.Col(model.FPayload); pc >= 0 && pc < len(fields) {
			p := fields[pc]
			fields = append(append(fields[:pc:pc], fields[pc+1:]...), p)
		}
	}
	d.fields = append(d.fields, fields...)
	d.vp = viewport.New()
	// The pager's keys are the app's (rebindable, detail.onKey): the viewport's own are off.
	d.vp.KeyMap = viewport.KeyMap{}
	d.vp.MouseWheelEnabled = true
	return d
}

// requeueHint is "Q requeues it)" for a stale claim, "" when requeueing isn't this person's
// (or Q is unbound).
func requeueHint(c *common) string {
	if !c.offers(c.keys.Requeue) {
		return ""
	}
	return keySays(c.keys.Requeue, "requeues it)")
}

// deadLetterFields are a dead letter's derived facts, shown first: where a replay goes and
// with which key.
func deadLetterFields(t *model.Table, r *model.Record) []detailField {
	method := strings.ToUpper(strings.TrimSpace(t.Get(r, model.FMethod)))
	if method == "" {
		method = "POST"
	}
	u := strings.TrimSpace(t.Get(r, model.FURL))
	kf := detailField{label: "Key", value: r.ID + " · " + keyNote(r.KeyOrigin), raw: r.ID}
	switch r.KeyOrigin {
	case model.KeyNone:
		kf.value = "(none)"
	case model.KeyMinted:
		kf.value = r.ID + " · minted from the row, not yet written: it goes to the key cell before the first send"
	}
	return []detailField{{label: "Destination", value: method + " " + u, raw: u}, kf}
}

// cellField is column i of record r (schema field f when isSchema): its header (or column
// letter), notes (extra, hidden), times shown in the sheet's zone, message-like text and
// payloads (pretty JSON) as blocks.
func cellField(c *common, t *model.Table, r *model.Record, i int, f model.Field, isSchema bool) detailField {
	label := ""
	if i < len(t.Header.Headers) {
		label = t.Header.Headers[i]
	}
	if strings.TrimSpace(label) == "" {
		label = "column " + a1.ColumnLetter(i)
	}
	var notes []string
	if !isSchema {
		notes = append(notes, "extra")
	}
	if i < len(t.Hidden) && t.Hidden[i] {
		notes = append(notes, "hidden")
	}
	v := ""
	if i < len(r.Cells) {
		v = r.Cells[i]
	}
	block := strings.Contains(v, "\n")
	raw := ""
	switch f {
	case model.FTimestamp, model.FClaimedAt, model.FReplayedAt, model.FUpdatedAt, model.FTriagedAt:
		// Sheets hands dates over as serial numbers (days since 1899-12-30); show the
		// time, and keep the cell as it is for `y`.
		// Every time in the spreadsheet's zone: a cell written by triage reads as UTC
		// (RFC 3339, Z), one typed in the sheet as its own zone, and side by side they
		// must compare at a glance.
		if tm, ok := model.ParseTime(v, t.Location); ok {
			raw = v
			tm = inZone(tm, t.Location)
			v = tm.Format("2006-01-02 15:04:05 MST") + " (" + ago(c.now(), tm) + ")"
		}
	case model.FMessage, model.FError, model.FLastError:
		block = block || v != ""
	case model.FStatus:
		// The status as the table shows it: a blank cell is the tab's default (new, dead,
		// pending), case and spaces aside, so the two views never disagree on a row's status.
		v = r.Status
	}
	df := detailField{label: label, note: strings.Join(notes, ", "), value: v, raw: raw, block: block}
	if f == model.FPayload && v != "" {
		pretty, err := prettyJSONErr(v)
		df.value, df.raw, df.block = pretty, v, true
		if err != nil {
			df.problem = "not valid JSON (shown as is): " + err.Error()
		}
	}
	return df
}

// focused returns the field `y` copies.
func (d *detail) focused() (detailField, bool) {
	if d.focus < 0 || d.focus >= len(d.fields) {
		return detailField{}, false
	}
	return d.fields[d.focus], true
}

// setSize lays the record out for a body of w x h.
func (d *detail) setSize(w, h int) {
	d.vp.SetWidth(w)
	d.vp.SetHeight(max(1, h-1))
	if w != d.width {
		d.width = w
		d.render()
	}
}

// render builds the content lines (on size or focus change, never per frame).
func (d *detail) render() {
	st := d.c.styles
	w := max(20, d.width)
	labelW := 8
	for _, f := range d.fields {
		if !f.block {
			labelW = max(labelW, textWidth(cellLine(f.label))+noteWidth(f.note))
		}
	}
	labelW = min(labelW, w/3)
	var lines []string
	for _, p := range d.problem {
		for _, l := range wrapText("! "+model.SanitizeLine(p), w-3) {
			lines = append(lines, "  "+st.paint(st.Problem, l))
		}
	}
	if len(d.problem) > 0 {
		lines = append(lines, "")
	}
	d.starts = make([]int, len(d.fields))
	d.ends = make([]int, len(d.fields))
	for i, f := range d.fields {
		d.starts[i] = len(lines)
		focused := i == d.focus
		marker := "  "
		if focused && st.NoColor {
			marker = "> "
		}
		label := cellLine(f.label)
		if f.note != "" {
			label += " (" + f.note + ")"
		}
		labelStyle := st.Label
		if strings.Contains(f.note, "hidden") {
			labelStyle = st.HiddenLabel
		}
		if focused {
			labelStyle = st.Focus
		}
		var problem []string
		if f.problem != "" {
			problem = wrapText("! "+model.SanitizeLine(f.problem), w-4)
		}
		if f.block {
			lines = append(lines, marker+st.paint(labelStyle, truncate(label, w-2)))
			for _, l := range problem {
				lines = append(lines, "    "+st.paint(st.Problem, l))
			}
			body := wrapText(model.Sanitize(f.value), w-4)
			if len(body) == 0 {
				body = []string{st.paint(st.Muted, "(empty)")}
			}
			for _, l := range body {
				lines = append(lines, "    "+l)
			}
		} else {
			valW := max(8, w-labelW-4)
			val := wrapText(model.Sanitize(f.value), valW)
			if len(val) == 0 {
				val = []string{""}
			}
			lines = append(lines, marker+st.paint(labelStyle, fit(label, labelW))+"  "+val[0])
			for _, l := range val[1:] {
				lines = append(lines, strings.Repeat(" ", labelW+4)+l)
			}
			for _, l := range problem {
				lines = append(lines, strings.Repeat(" ", labelW+4)+st.paint(st.Problem, l))
			}
		}
		d.ends[i] = len(lines) - 1
	}
	d.lines = lines
	d.vp.SetContentLines(lines)
	if d.search.query != "" {
		// Drawn again (a resize, a refresh): the matches are found again in the new lines.
		cur := d.search.cur
		d.search.find(lines)
		d.search.cur = min(cur, max(0, len(d.search.hits)-1))
		d.showSearch()
	}
}

func noteWidth(n string) int {
	if n == "" {
		return 0
	}
	return len(n) + 3
}

// Update scrolls like a pager (a line, half a page, a page, top, bottom) or moves the
// focused field (what `y` copies); the mouse wheel scrolls. The focus follows the scroll, as
// a reader of less or neomutt expects: at the top it is the first field, at the bottom the
// last, and a focused field scrolled out of view gives way to the first field on screen, so
// `y` copies something you can see. The view's other keys (back, help, copy, the next or
// previous row, the actions on this record) go up as actions.
func (d *detail) Update(msg tea.Msg) (*detail, action) {
	if d.search.typing {
		switch msg.(type) {
		case tea.KeyPressMsg, tea.PasteMsg:
			d.onSearchKey(msg)
			return d, nil
		}
	}
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		if d.searchKey(msg) {
			return d, nil
		}
		if a, ok := d.actionKey(msg); ok {
			return d, a
		}
		d.onKey(msg)
	case tea.MouseWheelMsg:
		y := d.vp.YOffset()
		d.vp, _ = d.vp.Update(msg)
		d.followScroll(y)
	}
	return d, nil
}

// detailVerbs are the detail view's keys the root carries out, in the order they are matched.
var detailVerbs = []keyVerb{
	{func(k *KeyMap) key.Binding { return k.CopyLink }, vCopyLink},
	{func(k *KeyMap) key.Binding { return k.NextRow }, vNextRow},
	{func(k *KeyMap) key.Binding { return k.PrevRow }, vPrevRow},
	{func(k *KeyMap) key.Binding { return k.Reply }, vReply},
	{func(k *KeyMap) key.Binding { return k.SetStatus }, vSetStatus},
	{func(k *KeyMap) key.Binding { return k.ClearError }, vClearError},
	{func(k *KeyMap) key.Binding { return k.Discard }, vDiscard},
	{func(k *KeyMap) key.Binding { return k.Replay }, vReplay},
	{func(k *KeyMap) key.Binding { return k.EditPayload }, vEditPayload},
	{func(k *KeyMap) key.Binding { return k.Cancel }, vCancelRun},
	{func(k *KeyMap) key.Binding { return k.Progress }, vProgress},
	{func(k *KeyMap) key.Binding { return k.Undo }, vUndo},
	{func(k *KeyMap) key.Binding { return k.Refresh }, vRefresh},
}

// copyAction: copy text, and say that what was copied.
type copyAction struct{ what, text string }

func (copyAction) isAction() {}

// actionKey is the action of a key the root carries out: back, help, copy the focused field,
// the next or previous row, the actions on this record; false for the pager's keys.
func (d *detail) actionKey(msg tea.KeyPressMsg) (action, bool) {
	k := d.c.keys
	switch {
	case key.Matches(msg, k.Back, k.Clear, k.Quit):
		return keyAction{v: vCloseDetail}, true
	case key.Matches(msg, k.Help):
		return keyAction{v: vHelp}, true
	case key.Matches(msg, k.Copy):
		f, ok := d.focused()
		if !ok {
			return nil, true
		}
		if v := f.copyValue(); v != "" {
			return copyAction{what: f.label, text: v}, true
		}
		return toastAction{toastInfo, f.label + " is empty: nothing copied"}, true
	}
	if v, ok := matchVerb(msg, k, detailVerbs); ok {
		return keyAction{v: v, inDetail: true}, true
	}
	return nil, false
}

// onKey handles the pager's keys; false for any other key.
func (d *detail) onKey(km tea.KeyPressMsg) bool {
	k := d.c.keys
	h := d.vp.Height()
	y := d.vp.YOffset()
	switch {
	case key.Matches(km, k.Down):
		d.vp.ScrollDown(1)
	case key.Matches(km, k.Up):
		d.vp.ScrollUp(1)
	case key.Matches(km, k.PagerDown):
		d.vp.ScrollDown(pageStep(h))
	case key.Matches(km, k.PagerUp):
		d.vp.ScrollUp(pageStep(h))
	case key.Matches(km, k.HalfDown):
		d.vp.ScrollDown(max(1, h/2))
	case key.Matches(km, k.HalfUp):
		d.vp.ScrollUp(max(1, h/2))
	case key.Matches(km, k.Top):
		// The top is the first field, however the pager got there (g, b, k): G then y
		// copies the payload, g then y the first field.
		d.vp.GotoTop()
		d.refocus(0)
		return true
	case key.Matches(km, k.Bottom):
		d.vp.GotoBottom()
		d.refocus(len(d.fields) - 1)
		return true
	case key.Matches(km, k.NextField):
		d.setFocus(d.focus + 1)
		return true
	case key.Matches(km, k.PrevField):
		d.setFocus(d.focus - 1)
		return true
	default:
		return false
	}
	d.followScroll(y)
	return true
}

// pageStep is how far a page moves: the height less one line, which stays on screen so the
// eye finds where it was (as in neomutt's pager).
func pageStep(h int) int { return max(1, h-1) }

// refocus focuses field i without scrolling.
func (d *detail) refocus(i int) {
	if i < 0 || i >= len(d.fields) || i == d.focus {
		return
	}
	y := d.vp.YOffset()
	d.focus = i
	d.render()
	d.vp.SetYOffset(y)
}

// followScroll moves the focus after a scroll from line y: arriving at the top focuses the
// first field and at the bottom the last (as g and G do); elsewhere a focused field that
// scrolled out of view gives way to the first field on screen. A key that didn't scroll
// (k at the top) leaves the focus alone.
func (d *detail) followScroll(y int) {
	if len(d.fields) == 0 || len(d.starts) != len(d.fields) || d.vp.YOffset() == y {
		return
	}
	switch {
	case d.vp.AtTop():
		d.refocus(0)
		return
	case d.vp.AtBottom():
		d.refocus(len(d.fields) - 1)
		return
	}
	y, h := d.vp.YOffset(), max(1, d.vp.Height())
	shown := func(i int) bool { return d.starts[i] < y+h && d.ends[i] >= y }
	if d.focus >= 0 && d.focus < len(d.fields) && shown(d.focus) {
		return
	}
	for i := range d.fields {
		if shown(i) {
			d.refocus(i)
			return
		}
	}
}

// setFocus focuses a field and scrolls so its first line is on screen (and as much of the
// rest as fits).
func (d *detail) setFocus(i int) {
	if len(d.fields) == 0 {
		return
	}
	i = max(0, min(len(d.fields)-1, i))
	if i == d.focus {
		return
	}
	d.focus = i
	y := d.vp.YOffset()
	d.render()
	h := d.vp.Height()
	start, end := d.starts[i], d.ends[i]
	switch {
	case start < y:
		y = start
	case end >= y+h:
		y = min(start, end-h+1)
	}
	d.vp.SetYOffset(y)
}

// focusLabel names the focused field for the title line.
func (d *detail) focusLabel() string {
	f, ok := d.focused()
	if !ok {
		return ""
	}
	return cellLine(f.label)
}

// position says where the pager is: "all shown" when everything fits, else the lines shown,
// of how many, and "top", "bot" or how far down in percent.
func (d *detail) position() string {
	total, h, y := len(d.lines), max(1, d.vp.Height()), d.vp.YOffset()
	if total <= h {
		return "all shown"
	}
	where := itoa(int(d.vp.ScrollPercent()*100)) + "%"
	switch {
	case d.vp.AtTop():
		where = "top"
	case d.vp.AtBottom():
		where = "bot"
	}
	return "lines " + itoa(y+1) + "-" + itoa(min(total, y+h)) + " of " + itoa(total) + " · " + where
}

// View is the title line (the record, the focused field, the position) and the scrolled
// content.
func (d *detail) View() string {
	st := d.c.styles
	gone := ""
	if d.gone {
		gone = st.paint(st.Problem, " · no longer in the sheet (refreshed away)")
	}
	left := st.paint(st.Section, " "+cellLine(d.title)) + gone
	pos := d.position()
	if s := d.search.status(); s != "" {
		pos = s + " · " + pos
	}
	right := pos + " "
	if f := d.focusLabel(); f != "" {
		// The field goes first when the line is short: the position matters more.
		if withField := "field: " + truncate(f, 20) + " · " + right; textWidth(cellLine(d.title))+textWidth(withField)+3 <= d.width {
			right = withField
		}
	}
	title := spread(left, st.paint(st.Muted, right), d.width)
	body := d.vp.View()
	if d.search.typing {
		// The prompt takes the view's last line, as less's does.
		lines := strings.Split(body, "\n")
		cursor := "█"
		if d.c.ascii {
			cursor = "_"
		}
		lines[len(lines)-1] = fit("/"+d.search.input.withCursor(max(1, d.width-3), cursor), d.width)
		body = strings.Join(lines, "\n")
	}
	return title + "\n" + body
}
