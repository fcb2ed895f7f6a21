package tui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/triage-dev/triage/internal/demo"
	"github.com/triage-dev/triage/model"
)

// demoWorkbook is `triage demo`'s workbook at testNow, decoded as the TUI gets it, with the
// receivers' loopback URLs pinned (the demo picks free ports).
func demoWorkbook(t testing.TB) *model.Workbook {
	t.Helper()
	src, err := demo.Workbook(testNow)
	if err != nil {
		t.Fatal(err)
	}
	loc, err := time.LoadLocation(src.TimeZone)
	if err != nil {
		loc = time.UTC
	}
	wb := &model.Workbook{SpreadsheetID: "demo", Title: src.Title, Location: loc, Loaded: testNow.Add(-12 * time.Second)}
	ports := map[string]string{"contact-form": "4431", "crm": "4432", "billing": "4433", "warehouse": "4434"}
	// The receivers' body key fields, as the demo wires them (contact-form keys by body id).
	for _, tc := range demo.WithBodyKeyFields(demo.Tabs(), map[string]string{"contact-form": "id"}) {
		for _, sh := range src.Sheets {
			if !strings.EqualFold(sh.Title, tc.Name) {
				continue
			}
			for _, row := range sh.Rows {
				for i, v := range row {
					if s, ok := v.(string); ok && strings.HasPrefix(s, "{{") {
						for name, port := range ports {
							s = strings.ReplaceAll(s, "{{"+name+"}}", "http://127.0.0.1:"+port)
						}
						row[i] = s
					}
				}
			}
			tb, err := model.Decode(tc, sh.Rows, loc)
			if err != nil {
				t.Fatalf("decode %s: %v", tc.Name, err)
			}
			wb.Tabs = append(wb.Tabs, tb)
		}
	}
	if len(wb.Tabs) != 3 {
		t.Fatalf("the demo has %d tabs, want 3", len(wb.Tabs))
	}
	return wb
}

// colWidth is the laid-out width of the column titled title (0 hidden, -1 absent).
func colWidth(ts *tabState, title string) int {
	for i, c := range ts.data.cols {
		if c.title == title {
			return ts.widths[i]
		}
	}
	return -1
}

// TestColumnWidthsFollowContentAndImportance lays out the demo's three tabs at 60 to 200
// columns: the line is filled exactly, the dead-letter KEY column is always there, a job's
// TYPE is never cut from 80 up, the inbox message gets a readable width at 80, the most
// important free text gets the bigger share, and columns are hidden least important first.
func TestColumnWidthsFollowContentAndImportance(t *testing.T) {
	wb := demoWorkbook(t)
	for _, w := range []int{60, 80, 100, 120, 200} {
		m := newLoaded(t, wb, w, 24)
		for tab := range m.tabs.list {
			ts := m.tabs.list[tab]
			ts.relayout(m.c, w)
			name := fmt.Sprintf("%s at %d", ts.name(), w)
			shown, total := 0, gutterWidth
			for i, cw := range ts.widths {
				if cw > 0 {
					shown++
					total += cw
				}
				c := ts.data.cols[i]
				if cw == 0 && c.drop == 0 {
					t.Errorf("%s: %s is hidden but never should be", name, c.title)
				}
				if cw > 0 && !c.flex() && cw < floor(&c, ts.data.natural[i]) && c.kind != kindAge {
					t.Errorf("%s: %s is %d cells, under its floor", name, c.title, cw)
				}
			}
			if total += shown - 1; total != w {
				t.Errorf("%s: the columns fill %d cells, want %d: %v", name, total, w, ts.widths)
			}
			// Hidden in drop order: a hidden column never matters more than a shown droppable one.
			for i, c := range ts.data.cols {
				for j, d := range ts.data.cols {
					if ts.widths[i] == 0 && ts.widths[j] > 0 && d.drop > 0 && c.drop > d.drop {
						t.Errorf("%s: %s (drop %d) hidden while %s (drop %d) shown", name, c.title, c.drop, d.title, d.drop)
					}
				}
			}
		}
		dead, queue, inbox := m.tabs.list[1], m.tabs.list[2], m.tabs.list[0]
		if kw := colWidth(dead, "KEY"); kw < 10 {
			t.Errorf("failed_calls at %d: KEY is %d cells, want ≥ 10", w, kw)
		}
		if w >= 80 {
			if tw := colWidth(queue, "TYPE"); tw < len("send-receipt") {
				t.Errorf("Jobs at %d: TYPE is %d cells: cut", w, tw)
			}
			if mw := colWidth(inbox, "MESSAGE"); mw < 30 {
				t.Errorf("Inbox at %d: MESSAGE is %d cells, want ≥ 30", w, mw)
			}
		}
		if ew, pw := colWidth(dead, "ERROR"), colWidth(dead, "PAYLOAD"); pw > 0 && ew <= pw {
			t.Errorf("failed_calls at %d: ERROR %d cells, PAYLOAD %d: the error comes first", w, ew, pw)
		}
		if w >= 100 {
			if uw := colWidth(dead, "URL"); uw < 22 {
				t.Errorf("failed_calls at %d: URL %d cells", w, uw)
			}
		}
		keys(m, "2")
		screen := plainScreen(m)
		if !strings.Contains(screen, " KEY ") || !strings.Contains(screen, "cf-c1d2e3") {
			t.Errorf("failed_calls at %d shows no key column:\n%s", w, screen)
		}
		if strings.Contains(screen, "http://") {
			t.Errorf("failed_calls at %d shows URL schemes:\n%s", w, screen)
		}
	}
	// At 200 columns nothing is hidden and nothing bounded is cut.
	m := newLoaded(t, wb, 200, 24)
	for _, ts := range m.tabs.list {
		ts.relayout(m.c, 200)
		for i, c := range ts.data.cols {
			if ts.widths[i] == 0 || (!c.flex() && ts.widths[i] < ts.data.natural[i]) {
				t.Errorf("%s at 200: %s is %d cells (natural %d)", ts.name(), c.title, ts.widths[i], ts.data.natural[i])
			}
		}
	}
}

// TestMintedKeysAreMarked: a dead letter whose key cell is empty shows its minted key with
// the mark (it isn't written yet); a key from the cell doesn't have it.
func TestMintedKeysAreMarked(t *testing.T) {
	m := newLoaded(t, demoWorkbook(t), 120, 40)
	keys(m, "2")
	ts := m.tabs.current()
	minted, cell := 0, 0
	for i := range ts.data.table.Records {
		r := &ts.data.table.Records[i]
		k := keyText(r)
		switch r.KeyOrigin {
		case model.KeyMinted:
			minted++
			if !strings.HasSuffix(k, mintedMark) || !strings.HasSuffix(shortKey(k, 12), mintedMark) {
				t.Errorf("minted key %q shown as %q / %q", r.ID, k, shortKey(k, 12))
			}
		default:
			cell++
			if strings.HasSuffix(k, mintedMark) {
				t.Errorf("key %q (%s) marked as minted", r.ID, r.KeyOrigin)
			}
		}
	}
	if minted == 0 || cell == 0 {
		t.Fatalf("the demo should have minted (%d) and written (%d) keys", minted, cell)
	}
	if s := plainScreen(m); !strings.Contains(s, "triage…") || !strings.Contains(s, mintedMark+" ") {
		t.Errorf("no minted key on screen:\n%s", s)
	}
}

func TestShortURLAndKey(t *testing.T) {
	cases := []struct {
		in   string
		w    int
		want string
	}{
		{"https://crm.example.net/v1/contacts", 40, "crm.example.net/v1/contacts"},
		{"http://127.0.0.1:4431/v1/hooks/crm", 40, "127.0.0.1:4431/v1/hooks/crm"},
		{"http://127.0.0.1:4431/api/v1/hooks/crm", 26, "127.0.0.1:4431/…/hooks/crm"},
		{"http://127.0.0.1:4431/api/v1/hooks/crm", 29, "127.0.0.1:4431/…/v1/hooks/crm"},
		{"http://127.0.0.1:4431/api/v1/hooks/crm", 28, "127.0.0.1:4431/…/hooks/crm"},
		{"http://127.0.0.1:42283/macros/s/AKfycbzD3m0Qx7rT2vN8pLk4Hs9WcYe1uJf6oGiBq5aR0tXyZ/exec", 30, "127.0.0.1:42283/macros/…/exec"},
		{"http://127.0.0.1:42283/macros/s/AKfycbzD3m0Qx7rT2vN8pLk4Hs9WcYe1uJf6oGiBq5aR0tXyZ/exec", 22, "127.0.0.1:42283/…/exec"},
		// The last segment alone doesn't fit: cut at the end, host first.
		{"https://h.example/a/averyveryverylongsegment", 20, "h.example/a/averyve…"},
		// A host too long for the width: cut at its end.
		{"https://a-very-long-host-name.example.com/x", 16, "a-very-long-hos…"},
		// Credentials never reach the screen.
		{"https://user:secret@crm.example/hook", 40, "crm.example/hook"},
		{"ftp+x://host/p", 40, "host/p"},
		{"not a url", 40, "not a url"},
		{"", 10, ""},
	}
	for _, c := range cases {
		got := shortURL(stripScheme(cellLine(c.in)), c.w)
		if got != c.want {
			t.Errorf("shortURL(%q, %d) = %q, want %q", c.in, c.w, got, c.want)
		}
		if textWidth(got) > c.w {
			t.Errorf("shortURL(%q, %d) = %q is %d cells", c.in, c.w, got, textWidth(got))
		}
	}
	// Hostile text is sanitised before it is shortened: no escape survives, at any width.
	evil := "https://evil.example/\x1b]52;c;ZXZpbA==\x07/\x1b[2J/\u202Eexe.txt"
	for w := 8; w < 60; w++ {
		got := shortURL(stripScheme(cellLine(evil)), w)
		if strings.ContainsAny(got, "\x1b\x07\u202E") || textWidth(got) > w {
			t.Errorf("shortURL(evil, %d) = %q", w, got)
		}
	}
	for _, c := range []struct {
		in   string
		w    int
		want string
	}{
		{"crm-evt-2041", 20, "crm-evt-2041"},
		{"crm-evt-2041", 10, "crm-e…2041"},
		{"triage-0123456789abcdef0123456789abcdef~", 12, "triag…bcdef~"},
		{"wh-order-1042", 13, "wh-order-1042"},
	} {
		if got := shortKey(c.in, c.w); got != c.want || textWidth(got) > c.w {
			t.Errorf("shortKey(%q, %d) = %q, want %q", c.in, c.w, got, c.want)
		}
	}
}

// sortTable is a queue whose columns exercise every kind of sort key: text (case, blanks),
// numbers (numeric, not lexical; text after numbers), times, statuses (the tab's order).
func sortTable(t *testing.T) *tabData {
	rows := rowsOf(
		[]string{"id", "type", "payload", "status", "claimedBy", "claimedAt", "lastError", "updatedAt", "attempts"},
		[]string{"j1", "beta", "", "done", "w", "2025-06-01T10:00:00Z", "", "", "10"},
		[]string{"j2", "Alpha", "", "pending", "", "", "", "", "9"},
		[]string{"j3", "", "", "claimed", "w", "2025-06-01T11:00:00Z", "", "", ""},
		[]string{"j4", "alpha", "", "error", "w", "2025-06-01T09:00:00Z", "", "", "x"},
		[]string{"j5", "Gamma", "", "pending", "", "", "", "", "9"},
	)
	return prepare(mustDecode(t, model.RoleQueue, rows))
}

func orderIDs(d *tabData, order []int32) string {
	var ids []string
	for _, ri := range order {
		ids = append(ids, d.table.Records[ri].ID)
	}
	return strings.Join(ids, " ")
}

func colIndex(d *tabData, title string) int {
	return slices.IndexFunc(d.cols, func(c column) bool { return c.title == title })
}

func TestSortKeys(t *testing.T) {
	d := sortTable(t)
	cases := []struct {
		col  string
		desc bool
		want string
	}{
		// Case-insensitive, stable (Alpha before alpha: sheet order), blanks last both ways.
		{"TYPE", false, "j2 j4 j1 j5 j3"},
		{"TYPE", true, "j5 j1 j2 j4 j3"},
		// Numerically (9 < 10), equal keys in sheet order, text after numbers, blanks last.
		{"TRIES", false, "j2 j5 j1 j4 j3"},
		{"TRIES", true, "j4 j1 j2 j5 j3"},
		// Ages: youngest first ascending; no time last either way.
		{"CLAIMED", false, "j3 j1 j4 j2 j5"},
		{"CLAIMED", true, "j4 j1 j3 j2 j5"},
		// Statuses in the tab's workflow order, not A to Z.
		{"STATUS", false, "j2 j5 j3 j1 j4"},
	}
	for _, c := range cases {
		i := colIndex(d, c.col)
		if i < 0 {
			t.Fatalf("no column %s", c.col)
		}
		if got := orderIDs(d, sortOrder(d, sortState{col: i, desc: c.desc})); got != c.want {
			t.Errorf("%s desc=%v: %s, want %s", c.col, c.desc, got, c.want)
		}
	}
	if got := orderIDs(d, sortOrder(d, sortState{col: sheetOrder})); got != "j1 j2 j3 j4 j5" {
		t.Errorf("sheet order: %s", got)
	}
	// The statuses' order is the tab's.
	if want := []string{"pending", "claimed", "done", "error"}; !slices.Equal(d.table.Statuses[:4], want) {
		t.Logf("queue statuses: %v", d.table.Statuses)
	}
	// The default orders are what prepare built: newest first for the inbox and dead letters.
	for _, tb := range testWorkbook(t).Tabs {
		d := prepare(tb)
		if got, want := sortOrder(d, defaultSort(d)), d.order; !slices.Equal(got, want) {
			t.Errorf("%s: the default sort %v differs from prepare's order %v", tb.Config.Name, got, want)
		}
	}
}

// TestSortThroughTheUI sorts the inbox with the sort key as a person would: the picker, the
// arrow in the header, a flip, the cursor on its record, marks and filter kept, a refresh,
// and back to sheet order.
func TestSortThroughTheUI(t *testing.T) {
	wb := testWorkbook(t)
	m := newLoaded(t, wb, 100, 30)
	ts := m.tabs.current()
	if !strings.Contains(plainScreen(m), "AGE ▲") {
		t.Fatalf("the inbox's default order is newest first, AGE ▲:\n%s", plainScreen(m))
	}
	keys(m, "j", "space", "j", "j")
	marked := ts.nMarked
	keys(m, "/")
	typeText(m, "status:new")
	keys(m, "enter")
	keys(m, "j", "j")
	cur, shown := cursorID(m), len(ts.visible)
	if shown == 0 || shown == len(ts.data.table.Records) {
		t.Fatalf("the filter shows %d rows", shown)
	}
	keys(m, "S")
	if s := plainScreen(m); !strings.Contains(s, "Sort Inbox by") || !strings.Contains(s, "sheet order") || !strings.Contains(s, "AGE ▲, again ▼") {
		t.Fatalf("the sort picker:\n%s", s)
	}
	keys(m, "2") // NAME
	names := func() []string {
		var out []string
		for _, ri := range ts.visible {
			out = append(out, strings.ToLower(ts.data.table.Get(&ts.data.table.Records[ri], model.FName)))
		}
		return out
	}
	check := func(step string, desc bool) {
		t.Helper()
		s := plainScreen(m)
		arrow := "NAME ▲"
		if desc {
			arrow = "NAME ▼"
		}
		if !strings.Contains(s, arrow) {
			t.Errorf("%s: header without %q:\n%s", step, arrow, s)
		}
		got := names()
		if !slices.IsSortedFunc(got, func(a, b string) int {
			if desc {
				return strings.Compare(b, a)
			}
			return strings.Compare(a, b)
		}) {
			t.Errorf("%s: not sorted by name: %v", step, got)
		}
		if cursorID(m) != cur {
			t.Errorf("%s: the cursor moved from %s to %s", step, cur, cursorID(m))
		}
		if ts.nMarked != marked || ts.filter.query != "status:new" || len(ts.visible) != shown {
			t.Errorf("%s: marks %d (want %d), filter %q showing %d rows (want %d)", step, ts.nMarked, marked, ts.filter.query, len(ts.visible), shown)
		}
		for _, ri := range ts.visible {
			if ts.data.table.Records[ri].Status != "new" {
				t.Errorf("%s: the filter shows a %s row", step, ts.data.table.Records[ri].Status)
			}
		}
	}
	check("NAME ▲", false)
	keys(m, "S", "2")
	check("NAME ▼", true)
	// A refresh keeps the sort (and the cursor, marks, filter).
	send(m, loaded(m, testWorkbook(t)))
	ts = m.tabs.current()
	check("after a refresh", true)
	// The filter narrows the sorted order.
	keys(m, "esc", "/")
	typeText(m, "grace")
	keys(m, "enter")
	for _, ri := range ts.visible {
		if n := ts.data.table.Get(&ts.data.table.Records[ri], model.FName); n != "Grace Hopper" {
			t.Errorf("filter grace shows %q", n)
		}
	}
	// Back to sheet order: row order, no arrow.
	keys(m, "esc", "S", "6")
	if s := plainScreen(m); strings.Contains(s, "▲") || strings.Contains(s, "▼") {
		t.Errorf("sheet order still shows an arrow:\n%s", s)
	}
	for i := 1; i < len(ts.visible); i++ {
		if ts.visible[i] < ts.visible[i-1] {
			t.Fatalf("sheet order: %v", ts.visible)
		}
	}
	if ts.nMarked != marked {
		t.Errorf("marks %d, want %d", ts.nMarked, marked)
	}
	// The queue starts in sheet order: no arrow.
	keys(m, "3")
	if s := plainScreen(m); strings.Contains(s, "▲") {
		t.Errorf("the queue's default is sheet order:\n%s", s)
	}
	// TERM=dumb: the arrow is ASCII.
	keys(m, "1", "S", "1")
	m.c.ascii = true
	if s := plainScreen(m); !strings.Contains(s, "AGE ^") && !strings.Contains(s, "AGE v") {
		t.Errorf("TERM=dumb shows no ASCII arrow:\n%s", s)
	}
}

// TestFooterFitsWholeHints: at 60, 80 and 120 columns, on every tab and in the detail view,
// the footer ends with `? help`, never cuts a hint or ends in "…"; from 80 columns the table
// offers enter, q quit and the keys its tab is for (m and s on the inbox; R, A, c and E on
// dead letters; Q and e on the queue), and at 120 u undo and s status as well.
func TestFooterFitsWholeHints(t *testing.T) {
	for _, w := range []int{60, 80, 120} {
		for _, view := range []struct {
			name string
			keys []string
		}{{"inbox", nil}, {"failed_calls", []string{"2"}}, {"jobs", []string{"3"}}, {"detail", []string{"enter"}}, {"help", []string{"?"}}} {
			m := newLoaded(t, demoWorkbook(t), w, 24)
			keys(m, view.keys...)
			lines := strings.Split(plainScreen(m), "\n")
			footer := strings.TrimRight(lines[len(lines)-1], " ")
			name := fmt.Sprintf("%s at %d", view.name, w)
			if strings.Contains(footer, "…") || ansi.StringWidth(footer) > w {
				t.Errorf("%s: a cut footer: %q", name, footer)
			}
			if view.name != "help" && !strings.HasSuffix(footer, "? help") {
				t.Errorf("%s: `? help` is not last: %q", name, footer)
			}
			// Every hint shown is whole: its key and its words, as ShortHelp has them.
			for _, part := range strings.Split(strings.TrimSpace(footer), hintSep) {
				found := false
				for _, h := range m.ShortHelp() {
					if h.Help().Key+" "+h.Help().Desc == part {
						found = true
					}
				}
				if !found {
					t.Errorf("%s: %q is not a whole hint (footer %q)", name, part, footer)
				}
			}
			main := map[string][]string{
				"inbox":        {"m reply", "s status"},
				"failed_calls": {"R replay", "A replay all", "c groups", "E edit"},
				"jobs":         {"Q requeue", "e clear error"},
			}[view.name]
			if w >= 80 && main != nil {
				want := append([]string{"q quit", "enter open"}, main...)
				if w >= 120 {
					want = append(want, "u undo", "s status")
				}
				for _, want := range want {
					if !strings.Contains(footer, want) {
						t.Errorf("%s: no %q in %q", name, want, footer)
					}
				}
			}
		}
	}
	// The memo follows what the line is made of: a halt adds a hint.
	m := newLoaded(t, demoWorkbook(t), 120, 24)
	before := shortHelpLine(m, 120)
	withHalt(m)
	if after := shortHelpLine(m, 120); after == before || !strings.Contains(ansi.Strip(after), "dismiss halt") {
		t.Errorf("the footer didn't change with a halt: %q", ansi.Strip(after))
	}
}

// TestGoldenMatrixTable draws the demo's three tables (the dead letters with their KEY
// column and URLs by their distinguishing part) and a table sorted by a column (the header
// arrow), at every size and terminal.
func TestGoldenMatrixTable(t *testing.T) {
	for _, v := range []struct {
		name string
		keys []string
	}{
		{"table_inbox", []string{"j", "space"}},
		{"table_deadletter", []string{"2", "j"}},
		{"table_jobs", []string{"3", "j"}},
		{"table_sorted", []string{"2", "S", "2", "S", "2"}}, // SOURCE ▼
	} {
		t.Run(v.name, func(t *testing.T) {
			goldenMatrix(t, v.name, demoWorkbook, func(t *testing.T, m *Model) { keys(m, v.keys...) })
		})
	}
}

// TestSortBigTableInParts checks the parallel sort (parts merged) against a plain stable
// sort, both directions, on a table big enough to be split.
func TestSortBigTableInParts(t *testing.T) {
	d := prepare(bigWorkbook(t, 40_000).Tabs[0])
	for _, title := range []string{"NAME", "STATUS", "EMAIL"} {
		ci := colIndex(d, title)
		for _, desc := range []bool{false, true} {
			got := sortOrder(d, sortState{col: ci, desc: desc})
			var keyed, blanks []sortItem
			for i := range d.table.Records {
				it := sortKey(d.table, &d.cols[ci], int32(i), statusRank(d.table))
				if it.blank {
					blanks = append(blanks, it)
				} else {
					keyed = append(keyed, it)
				}
			}
			slices.SortStableFunc(keyed, func(a, b sortItem) int {
				if desc {
					return compareKeys(&b, &a)
				}
				return compareKeys(&a, &b)
			})
			var want []int32
			for _, it := range append(keyed, blanks...) {
				want = append(want, it.ri)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s desc=%v: the parallel sort differs from a stable sort", title, desc)
			}
		}
	}
}
