package tui

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/triage-dev/triage/model"
)

// longMessage is a 20,000-character message of numbered sentences, so a line on screen says
// where in the message it is.
func longMessage() string {
	var b strings.Builder
	b.WriteString("A long one: the whole story\n")
	for p := 1; b.Len() < 20000; p++ {
		for s := 1; s <= 5; s++ {
			fmt.Fprintf(&b, "Paragraph %d, sentence %d: the quick brown fox jumps over the lazy dog. ", p, s)
		}
		b.WriteString("\n\n")
	}
	return strings.TrimSpace(b.String()[:20000])
}

// longWorkbook is testWorkbook with the newest inbox message (msg-000, the first row shown)
// 20,000 characters long.
func longWorkbook(t testing.TB) *model.Workbook {
	wb := testWorkbook(t)
	rows := inboxRows()
	rows[1][3] = longMessage()
	wb.Tabs[0] = mustDecode(t, model.RoleInbox, rows)
	return wb
}

// openLong opens the 20,000-character message in the detail view at w x h.
func openLong(t *testing.T, w, h int, opts ...modelOpt) *Model {
	t.Helper()
	m := newLoaded(t, longWorkbook(t), w, h, opts...)
	keys(m, "enter")
	if m.detail == nil || m.detail.rec.ID != "msg-000" {
		t.Fatalf("the detail shows %v, want msg-000", m.detail)
	}
	return m
}

// TestPagerKeys: every pager key moves as much as it says, on a 20,000-character message.
func TestPagerKeys(t *testing.T) {
	m := openLong(t, 80, 24)
	d := func() *detail { return m.detail }
	h := d().vp.Height()
	total := len(d().lines)
	if total < 250 {
		t.Fatalf("the message is %d lines, want a long one", total)
	}
	y := func() int { return d().vp.YOffset() }
	steps := []struct {
		key  string
		want int
	}{
		{"j", 1}, {"down", 2}, {"k", 1}, {"up", 0}, {"k", 0},
		{"space", h - 1}, {"b", 0}, {"f", h - 1}, {"pgdown", 2 * (h - 1)}, {"pgup", h - 1}, {"b", 0},
		{"ctrl+d", h / 2}, {"ctrl+d", 2 * (h / 2)}, {"ctrl+u", h / 2}, {"ctrl+u", 0},
		{"G", total - h}, {"j", total - h}, {"g", 0},
	}
	for i, s := range steps {
		keys(m, s.key)
		if m.detail == nil {
			t.Fatalf("step %d: %s left the detail view", i, s.key)
		}
		if y() != s.want {
			t.Errorf("step %d: after %s the first line shown is %d, want %d", i, s.key, y(), s.want)
		}
	}
	// One j of a 20,000-character message is one line, not 1% to 99%.
	keys(m, "j")
	if p := d().vp.ScrollPercent(); p > 0.01 {
		t.Errorf("one j scrolled to %.0f%%", p*100)
	}
	if m.tabs.current().cursor != 0 || m.tabs.current().nMarked != 0 {
		t.Error("the pager's keys (space, j) must not mark or move the table")
	}
}

// TestPagerPosition: the title line says where the pager is and which field is focused.
func TestPagerPosition(t *testing.T) {
	m := openLong(t, 80, 24)
	title := func() string { return strings.SplitN(ansiStripLine(m.detail.View()), "\n", 2)[0] }
	total := len(m.detail.lines)
	h := m.detail.vp.Height()
	if got, want := title(), fmt.Sprintf("lines 1-%d of %d · top", h, total); !strings.Contains(got, want) || !strings.Contains(got, "field: Timestamp") {
		t.Errorf("at the top the title is %q, want %q and the focused field", got, want)
	}
	keys(m, "G")
	if got, want := title(), fmt.Sprintf("lines %d-%d of %d · bot", total-h+1, total, total); !strings.Contains(got, want) {
		t.Errorf("at the bottom the title is %q, want %q", got, want)
	}
	keys(m, "g")
	for m.detail.vp.ScrollPercent() < 0.5 {
		keys(m, "space")
	}
	pct := fmt.Sprintf("%d%%", int(m.detail.vp.ScrollPercent()*100))
	if got := title(); !strings.Contains(got, pct) || !strings.Contains(got, "field: Message") {
		t.Errorf("in the middle the title is %q, want %s and the Message field (the focus follows the scroll)", got, pct)
	}
	// A short record fits: "all shown".
	keys(m, "esc", "j", "enter")
	if got := title(); !strings.Contains(got, "all shown") {
		t.Errorf("a record that fits says all: %q", got)
	}
}

func ansiStripLine(s string) string { return strings.TrimRight(ansi.Strip(s), " ") }

// TestPagerFieldFocus: tab and shift+tab move the focused field (what y copies) and scroll so
// the field's first line is on screen; scrolling the focus away focuses a field on screen.
func TestPagerFieldFocus(t *testing.T) {
	m := openLong(t, 80, 24)
	d := m.detail
	status := -1
	for i, f := range d.fields {
		if f.label == "Status" {
			status = i
		}
	}
	for d.focus < status {
		keys(m, "tab")
		d = m.detail
	}
	h, y := d.vp.Height(), d.vp.YOffset()
	if start := d.starts[status]; start < y || start >= y+h {
		t.Errorf("tab to Status: its first line %d is not on screen (lines %d-%d)", start, y, y+h-1)
	}
	if y == 0 {
		t.Error("tab past the long message scrolled nothing")
	}
	keys(m, "shift+tab") // Message: 300 lines, its first line must show
	d = m.detail
	if f, _ := d.focused(); f.label != "Message" {
		t.Fatalf("shift+tab focused %q", f.label)
	}
	if y := d.vp.YOffset(); d.starts[d.focus] < y || d.starts[d.focus] >= y+d.vp.Height() {
		t.Errorf("shift+tab to Message: its first line %d is not on screen (from %d)", d.starts[d.focus], y)
	}
	keys(m, "shift+tab", "shift+tab", "shift+tab", "shift+tab")
	if m.detail.focus != 0 || m.detail.vp.YOffset() != 0 {
		t.Errorf("shift+tab back to the first field: focus %d at line %d", m.detail.focus, m.detail.vp.YOffset())
	}
	keys(m, "G")
	if f, _ := m.detail.focused(); f.label != "Notes" {
		t.Errorf("G focuses the last field, got %q", f.label)
	}
	keys(m, "b")
	if f, _ := m.detail.focused(); f.label != "Message" {
		t.Errorf("a page up from the bottom focuses the first field on screen (Message), got %q", f.label)
	}
	cmd := send(m, press("y"))
	if texts := clipboardTexts(t, cmd); len(texts) == 0 || !strings.HasPrefix(texts[0], "A long one") {
		t.Errorf("y copies the focused field (the message): %.40q", texts)
	}
}

// TestPagerFocusFollowsTheTop: the focus follows the scroll the same way whatever key scrolled:
// the top is the first field (g, b, k, ctrl+u alike), the bottom the last (G, space); a key
// that doesn't scroll leaves the focus alone. The demo's case: a dead letter, tab to Key,
// down a page, back up with b or g.
func TestPagerFocusFollowsTheTop(t *testing.T) {
	wb := testWorkbook(t)
	rows := deadRows()
	for _, r := range rows[1:] {
		r[3] = `{"note":"` + strings.Repeat("a long payload line ", 60) + `"}`
	}
	wb.Tabs[1] = mustDecode(t, model.RoleDeadLetter, rows)
	for _, back := range []string{"g", "b", "k", "ctrl+u", "pgup"} {
		m := newLoaded(t, wb, 80, 24)
		keys(m, "2", "enter")
		if m.detail == nil || len(m.detail.lines) <= m.detail.vp.Height() {
			t.Fatalf("the detail is not longer than a screen")
		}
		label := func() string { f, _ := m.detail.focused(); return f.label }
		if label() != "Destination" {
			t.Fatalf("opened on %q", label())
		}
		keys(m, "tab")
		if label() != "Key" || m.detail.vp.YOffset() != 0 {
			t.Fatalf("tab: %q at line %d", label(), m.detail.vp.YOffset())
		}
		keys(m, "k") // at the top already: nothing scrolls, the focus stays
		if label() != "Key" {
			t.Errorf("k at the top moved the focus to %q", label())
		}
		keys(m, "j")
		if label() != "Key" {
			t.Errorf("j with Key still on screen moved the focus to %q", label())
		}
		for m.detail.vp.YOffset() > 0 {
			keys(m, back)
		}
		if label() != "Destination" {
			t.Errorf("%s back to the top left the focus on %q, want the first field (as g does)", back, label())
		}
		keys(m, "tab")
		for !m.detail.vp.AtBottom() {
			keys(m, "space")
		}
		if last := m.detail.fields[len(m.detail.fields)-1].label; label() != last {
			t.Errorf("space to the bottom focuses %q, want the last field %q (as G does)", label(), last)
		}
	}
}

// TestPagerNextPrevRow: n and N open the next and previous row of the table as shown (the
// filter respected) without leaving the view, and esc lands on the last row read.
func TestPagerNextPrevRow(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 100, 30)
	keys(m, "/")
	typeText(m, "status:new")
	keys(m, "enter")
	ts := m.tabs.current()
	var want []string
	for _, ri := range ts.visible {
		want = append(want, ts.data.table.Records[ri].ID)
	}
	if len(want) < 3 {
		t.Fatalf("status:new shows %v", want)
	}
	keys(m, "enter")
	var got []string
	for i := 0; i < len(want); i++ {
		got = append(got, m.detail.rec.ID)
		if i < len(want)-1 {
			keys(m, "J")
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("J walks %v, want the filtered rows %v", got, want)
	}
	keys(m, "J")
	if m.detail == nil || m.detail.rec.ID != want[len(want)-1] || !strings.Contains(toastTexts(m), "no next row") {
		t.Errorf("J on the last row stays and says so: %q", toastTexts(m))
	}
	keys(m, "K", "K")
	if m.detail.rec.ID != want[len(want)-3] {
		t.Errorf("K K went to %s, want %s", m.detail.rec.ID, want[len(want)-3])
	}
	keys(m, "tab", "tab") // the focused field carries over to the next row
	label := m.detail.focusLabel()
	keys(m, "J")
	if m.detail.focusLabel() != label {
		t.Errorf("n focused %q, want %q kept", m.detail.focusLabel(), label)
	}
	keys(m, "esc")
	if m.detail != nil || cursorID(m) != want[len(want)-2] {
		t.Errorf("esc lands on %s, want %s (the row last read)", cursorID(m), want[len(want)-2])
	}
	keys(m, "enter")
	for range want {
		keys(m, "K")
	}
	if m.detail.rec.ID != want[0] || !strings.Contains(toastTexts(m), "no previous row") {
		t.Errorf("K stops at the first row: %s, %q", m.detail.rec.ID, toastTexts(m))
	}
}

// withMarkRead turns mark_read_on_open on for the inbox of wb.
func withMarkRead(wb *model.Workbook) *model.Workbook {
	wb.Tabs[0].Config.MarkReadOnOpen = true
	return wb
}

// TestMarkReadOnOpen: opening a new message sends one set-status edit, new (as the cell
// holds it) → read; not when the option is off, in read-only mode, on a row that isn't new or
// has no ID, or while a write is in flight (skipped without a word).
func TestMarkReadOnOpen(t *testing.T) {
	open := func(t *testing.T, wb *model.Workbook, down int, opts ...modelOpt) *Model {
		m := newLoaded(t, wb, 100, 30, opts...)
		for i := 0; i < down; i++ {
			keys(m, "j")
		}
		keys(m, "enter")
		if m.detail == nil {
			t.Fatal("no detail")
		}
		return m
	}
	checkEdit := func(t *testing.T, m *Model, id, expect string) {
		t.Helper()
		op := m.writes.inflight
		if !m.writes.writing || op == nil || len(op.edits) != 1 {
			t.Fatalf("opening %s sent %+v, want one edit", id, op)
		}
		e := op.edits[0]
		if e.Tab != "Inbox" || e.ID != id || e.Expect[model.FStatus] != expect || e.Set[model.FStatus] != "read" || len(e.Set) != 1 {
			t.Errorf("the edit is %+v, want %s: status %q → read", e, id, expect)
		}
		if op.kind != writeSetStatus {
			t.Errorf("the write is a %v, want a set-status (undoable)", op.kind)
		}
	}
	t.Run("new", func(t *testing.T) {
		m := open(t, withMarkRead(testWorkbook(t)), 1) // msg-001: "new"
		checkEdit(t, m, "msg-001", "new")
	})
	t.Run("empty status is new", func(t *testing.T) {
		m := open(t, withMarkRead(testWorkbook(t)), 0) // msg-000: "" reads as new
		checkEdit(t, m, "msg-000", "")
	})
	t.Run("J marks the next one", func(t *testing.T) {
		m := open(t, withMarkRead(testWorkbook(t)), 0)
		op := *m.writes.inflight
		send(m, appliedMsg{op: op, res: model.ApplyResult{Applied: []model.Applied{{Edit: op.edits[0]}}}})
		if m.writes.writing || m.detail.rec.Status != "read" {
			t.Fatalf("after the write: writing=%v, status %q", m.writes.writing, m.detail.rec.Status)
		}
		keys(m, "J")
		checkEdit(t, m, "msg-001", "new")
		if len(m.writes.undo) != 1 {
			t.Errorf("the first mark is undoable: %d on the stack", len(m.writes.undo))
		}
	})
	for name, c := range map[string]struct {
		wb   func(t testing.TB) *model.Workbook
		down int
		opts []modelOpt
	}{
		"option off": {testWorkbook, 1, nil},
		"read-only": {func(t testing.TB) *model.Workbook { return withMarkRead(testWorkbook(t)) }, 1,
			[]modelOpt{func(o *Options) { o.Store = nopStore{t: t, readOnly: true} }}},
		"already read": {func(t testing.TB) *model.Workbook { return withMarkRead(testWorkbook(t)) }, 2, nil},
		"no ID":        {func(t testing.TB) *model.Workbook { return withMarkRead(testWorkbook(t)) }, 5, nil},
	} {
		t.Run(name, func(t *testing.T) {
			m := open(t, c.wb(t), c.down, c.opts...)
			if m.writes.writing {
				t.Errorf("opening %s wrote %+v", m.detail.rec.ID, m.writes.inflight)
			}
			if toastTexts(m) != "" {
				t.Errorf("opening says something: %q", toastTexts(m))
			}
		})
	}
	t.Run("a write in flight", func(t *testing.T) {
		m := newLoaded(t, withMarkRead(testWorkbook(t)), 100, 30)
		keys(m, "j", "j", "s", "4") // msg-002 → done: in flight
		first := m.writes.inflight
		if first == nil {
			t.Fatal("no write in flight")
		}
		keys(m, "k", "enter") // msg-001, new
		if m.writes.inflight != first || strings.Contains(toastTexts(m), "in progress") {
			t.Errorf("the mark stacked a write or said so: %+v, %q", m.writes.inflight, toastTexts(m))
		}
	})
}

// TestMailtoReply: the reply link is RFC 6068 (%20 for spaces, &, ?, # and % encoded, CRLF
// line breaks), and no control character or bidi override reaches it even encoded.
func TestMailtoReply(t *testing.T) {
	hostile := "Hello\x1b[2J & ?x=1#frag 100% \u202Eevil\u202C\r\nsecond line: Grüße 你好 +1\n\n\x1b]52;c;ZXZpbA==\x07end"
	tab := mustDecode(t, model.RoleInbox, rowsOf(
		[]string{"Timestamp", "Name", "Email", "Message", "Status", "ID"},
		[]string{"2025-06-01T10:00:00Z", "Ada \u202ELovelace", "ada@example.com", hostile, "new", "m-1"},
	))
	rl, err := mailtoReply(tab, &tab.Records[0])
	if err != nil {
		t.Fatal(err)
	}
	link := rl.link
	for i := 0; i < len(link); i++ {
		if c := link[i]; c <= 0x20 || c >= 0x7f {
			t.Fatalf("the link holds byte %#x raw: %q", c, link)
		}
	}
	if strings.Contains(link, "+") {
		t.Errorf("a space or plus must be encoded, never +: %s", link)
	}
	for _, bad := range []string{"%1B", "%1b", "%E2%80%AE", "%E2%80%AC", "%07"} {
		if strings.Contains(link, bad) {
			t.Errorf("the link carries %s (a control or bidi character, encoded): %s", bad, link)
		}
	}
	to, query, ok := strings.Cut(strings.TrimPrefix(link, "mailto:"), "?")
	if !ok || !strings.HasPrefix(link, "mailto:") || to != "ada@example.com" {
		t.Fatalf("link %s: want mailto:ada@example.com?...", link)
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		t.Fatal(err)
	}
	if len(q) != 2 || len(q["subject"]) != 1 || len(q["body"]) != 1 {
		t.Fatalf("& ? # in the text must not add or end a header: %v", q)
	}
	subject, body := q.Get("subject"), q.Get("body")
	if !strings.HasPrefix(subject, "Re: Hello␛[2J & ?x=1#frag 100% ⇄evil⇄") || strings.Contains(subject, "second") {
		t.Errorf("subject %q: want Re: and the first line, sanitised", subject)
	}
	for _, want := range []string{"\r\n> Hello␛[2J & ?x=1#frag 100% ⇄evil⇄\r\n> second line: Grüße 你好 +1\r\n>\r\n> ␛]52;c;ZXZpbA==␇end", "Ada ⇄Lovelace wrote:"} {
		if !strings.Contains(body, want) {
			t.Errorf("body %q lacks %q", body, want)
		}
	}
	if strings.Contains(strings.ReplaceAll(body, "\r\n", ""), "\n") || strings.Contains(strings.ReplaceAll(body, "\r\n", ""), "\r") {
		t.Errorf("every line break is CRLF: %q", body)
	}
	for _, s := range []string{subject, body} {
		for _, r := range s {
			if r != '\r' && r != '\n' && model.Unsafe(r) {
				t.Errorf("decoded text holds U+%04X: %q", r, s)
			}
		}
	}

	// A subject column wins; a long message is quoted in part, and says so.
	tab = mustDecode(t, model.RoleInbox, rowsOf(
		[]string{"Timestamp", "Name", "Email", "Message", "Status", "ID", "Subject"},
		[]string{"2025-06-01T10:00:00Z", "", "ada@example.com", longMessage(), "new", "m-1", "Quote request"},
	))
	rl, err = mailtoReply(tab, &tab.Records[0])
	if err != nil {
		t.Fatal(err)
	}
	q, _ = url.ParseQuery(strings.SplitN(rl.link, "?", 2)[1])
	if q.Get("subject") != "Re: Quote request" || !rl.shortened || !strings.HasSuffix(q.Get("body"), "> […]") || len(q.Get("body")) > 3*replyQuoteMax {
		t.Errorf("subject %q, shortened %v, body ends %q", q.Get("subject"), rl.shortened, q.Get("body")[max(0, len(q.Get("body"))-20):])
	}

	for email, want := range map[string]string{
		"":                      "no email address",
		"not an email":          "not valid",
		"ada@exa\x1bmple.com":   "not valid",
		"a@b.c?cc=x@evil.test":  "not valid",
		"\u202Eada@example.com": "not valid",
	} {
		tab := mustDecode(t, model.RoleInbox, rowsOf(
			[]string{"Timestamp", "Name", "Email", "Message", "Status", "ID"},
			[]string{"2025-06-01T10:00:00Z", "Ada", email, "hi", "new", "m-1"},
		))
		if _, err := mailtoReply(tab, &tab.Records[0]); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("email %q: err %v, want %q", email, err, want)
		} else if strings.ContainsRune(err.Error(), 0x1b) || strings.ContainsRune(err.Error(), 0x202e) {
			t.Errorf("the error quotes the address raw: %q", err)
		}
	}
}

// TestReplyKey: m on an inbox row copies the link and offers (default No) to set replied; y
// writes it by ID expecting the old status. Elsewhere it says it is for the inbox.
func TestReplyKey(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 100, 30)
	keys(m, "j", "enter") // msg-001, Grace Hopper, new
	cmd := send(m, press("m"))
	texts := clipboardTexts(t, cmd)
	if len(texts) == 0 || !strings.HasPrefix(texts[0], "mailto:grace@example.com?subject=Re%3A%20Message%201") {
		t.Fatalf("m copied %q", texts)
	}
	c, ok := m.dialog.(confirm)
	if !ok || !strings.Contains(c.question, "Grace Hopper") || !strings.Contains(c.question, "replied") {
		t.Fatalf("m offers to set replied: %#v", m.dialog)
	}
	keys(m, "enter") // the default is No
	if m.dialog != nil || m.writes.writing {
		t.Fatal("enter answers No")
	}
	keys(m, "m", "y")
	op := m.writes.inflight
	if op == nil || op.edits[0].ID != "msg-001" || op.edits[0].Expect[model.FStatus] != "new" || op.edits[0].Set[model.FStatus] != "replied" {
		t.Fatalf("y wrote %+v", op)
	}

	// In the table too, and not on other tabs.
	m = newLoaded(t, testWorkbook(t), 100, 30)
	keys(m, "j", "j", "j") // msg-003: the hostile message, already replied
	if texts := clipboardTexts(t, send(m, press("m"))); len(texts) != 1 || !strings.HasPrefix(texts[0], "mailto:edsger@example.com?subject=Re%3A%20hi%E2%90%9B%5B2J") {
		t.Errorf("m in the table copied %q", texts)
	}
	if m.dialog != nil {
		t.Error("a replied row is not offered replied again")
	}
	keys(m, "2")
	cmd = send(m, press("m"))
	if len(clipboardTexts(t, cmd)) != 0 || !strings.Contains(toastTexts(m), "inbox only") {
		t.Errorf("m on the dead letters: %q", toastTexts(m))
	}
	m = newLoaded(t, testWorkbook(t), 100, 30, func(o *Options) { o.Store = nopStore{t: t, readOnly: true} })
	if texts := clipboardTexts(t, send(m, press("m"))); len(texts) != 1 || m.dialog != nil {
		t.Errorf("read-only: m copies (%d) and offers nothing (%v)", len(texts), m.dialog)
	}
}

// TestDetailHelp: ? in the detail view lists the detail's keys, not the table's.
func TestDetailHelp(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	keys(m, "enter", "?")
	out := plainScreen(m)
	for _, want := range []string{"Detail keys", "line down/up", "space/f/pgdn", "page down", "next field", "prev field",
		"next row", "prev row", "copy field", "set status", "mailto reply", "back"} {
		if !strings.Contains(out, want) {
			t.Errorf("the detail's help lacks %q:\n%s", want, out)
		}
	}
	for _, not := range []string{"next / previous tab", "tab 1 / 2 / 3", "quit", "mark all", "filter"} {
		if strings.Contains(out, not) {
			t.Errorf("the detail's help lists the table's %q:\n%s", not, out)
		}
	}
	keys(m, "esc")
	if m.help.open || m.detail == nil {
		t.Error("esc closes the help, back to the detail")
	}
	keys(m, "esc", "?")
	if out := plainScreen(m); !strings.Contains(out, "mark all shown") || strings.Contains(out, "Detail keys") {
		t.Errorf("the table's help is the table's:\n%s", out)
	}
}

// TestPagerKeysRebind: the pager's keys are bindings: rebound, they move; a key may mean one
// thing in the table and another in the detail, but not two things in one view.
func TestPagerKeysRebind(t *testing.T) {
	km := reboundKeyMap(t, map[string][]string{"next_row": {"L"}, "pager_page_down": {"ctrl+f"}})
	if c := km.Conflicts(); c != nil {
		t.Fatal(c)
	}
	m := newLoaded(t, testWorkbook(t), 100, 30, func(o *Options) { o.KeyMap = km })
	keys(m, "enter", "L")
	if m.detail.rec.ID != "msg-001" {
		t.Errorf("L (next_row) opened %s", m.detail.rec.ID)
	}
	keys(m, "J")
	if m.detail.rec.ID != "msg-001" {
		t.Error("J is no longer next_row")
	}
	if out := plainScreen(m); !strings.Contains(out, "L/K next/prev row") || !strings.Contains(out, "ctrl+f/b page") {
		t.Errorf("the footer names the bound keys:\n%s", out)
	}
	km = DefaultKeyMap()
	_ = km.Rebind("next_row", []string{"j"})
	_ = km.Rebind("reply", []string{"space"})
	want := []string{`key "j" is bound to both down and next_row`, `key "space" is bound to both mark and reply`, `key "space" is bound to both pager_page_down and reply`}
	if got := km.Conflicts(); !slices.Equal(got, want) {
		t.Errorf("Conflicts() =\n%q\nwant\n%q", got, want)
	}
}

// TestGoldenMatrixDetail: the detail pager at the top, the middle and the bottom of a
// 20,000-character message, and its own help.
func TestGoldenMatrixDetail(t *testing.T) {
	t.Run("top", func(t *testing.T) {
		goldenMatrix(t, "detail_top", longWorkbook, func(t *testing.T, m *Model) { keys(m, "enter") })
	})
	t.Run("middle", func(t *testing.T) {
		goldenMatrix(t, "detail_middle", longWorkbook, func(t *testing.T, m *Model) {
			keys(m, "enter")
			for m.detail.vp.ScrollPercent() < 0.5 {
				keys(m, "space")
			}
		})
	})
	t.Run("bottom", func(t *testing.T) {
		goldenMatrix(t, "detail_bottom", longWorkbook, func(t *testing.T, m *Model) { keys(m, "enter", "G") })
	})
	t.Run("help", func(t *testing.T) {
		goldenMatrix(t, "detail_help", longWorkbook, func(t *testing.T, m *Model) { keys(m, "enter", "?") })
	})
}
