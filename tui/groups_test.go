package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
)

// groupRows is a dead-letter tab of (source, error, status) rows.
func groupRows(rows ...[3]string) [][]any {
	out := [][]string{{"timestamp", "source", "url", "payload", "error", "attempts", "method", "key", "status", "replayed_at"}}
	for i, r := range rows {
		out = append(out, []string{fmt.Sprintf("2025-05-%02dT10:00:00Z", 1+i%28), r[0], "https://x.example/h", fmt.Sprintf(`{"n":%d}`, i), r[1], "1", "POST", fmt.Sprintf("k-%d", i), r[2], ""})
	}
	return rowsOf(out...)
}

func groupsLine(g []groupRow) string {
	var parts []string
	for _, r := range g {
		parts = append(parts, fmt.Sprintf("%s/%s=%d", r.source, r.kind, r.count))
	}
	return strings.Join(parts, " ")
}

// TestCountGroups: dead rows only (a blank status is dead), by source × ErrorKind, biggest
// first, ties by source then kind; a blank error is its own kind ("").
func TestCountGroups(t *testing.T) {
	tab := mustDecode(t, model.RoleDeadLetter, groupRows(
		[3]string{"crm", "503 Service Unavailable", "dead"},
		[3]string{"crm", "HTTP 503", ""},
		[3]string{"crm", "503 again", "delivered"},
		[3]string{"crm", "no answer within 20s (timeout)", "dead"},
		[3]string{"billing", "connection refused", "dead"},
		[3]string{"billing", "", "dead"},
		[3]string{"billing", "503", "rejected"},
		[3]string{"billing", "503", "discarded"},
		[3]string{"api", "timeout", "dead"},
		[3]string{" crm ", "502 Bad Gateway", "dead"},
		[3]string{"crm", "502 Bad Gateway", "dead"},
	))
	order := prepare(tab).order
	got := groupsLine(countGroups(tab, order))
	want := "crm/502=2 crm/503=2 api/timeout=1 billing/=1 billing/refused=1 crm/timeout=1"
	if got != want {
		t.Errorf("groups:\n got %s\nwant %s", got, want)
	}
	// The sample is the newest row's error (display order: newest first).
	for _, g := range countGroups(tab, order) {
		if g.source == "crm" && g.kind == "503" && g.sample != "HTTP 503" {
			t.Errorf("crm 503's sample is %q, want the newest row's error", g.sample)
		}
	}
}

// TestGroupsViewSanitisesHostileText: a source and an error full of terminal tricks reach the
// screen as visible placeholders, the line stays its width.
func TestGroupsViewSanitisesHostileText(t *testing.T) {
	wb := testWorkbook(t)
	wb.Tabs[1] = mustDecode(t, model.RoleDeadLetter, groupRows(
		[3]string{"crm\x1b]52;c;ZXZpbA==\x07", evilMessage, "dead"},
		[3]string{"crm", "503", "dead"},
	))
	m := newLoaded(t, wb, 80, 24)
	keys(m, "2", "c")
	s := screen(m)
	if strings.ContainsAny(ansiStripSGR(s), "\x07\u202e\u009b") || strings.Contains(s, "\x1b]") || strings.Contains(s, "\x1bP") {
		t.Errorf("hostile text reached the screen: %q", s)
	}
	checkFrame(t, s, 80, 24)
	if !strings.Contains(plainScreen(m), "SAMPLE ERROR") {
		t.Errorf("no group view:\n%s", plainScreen(m))
	}
}

// ansiStripSGR drops SGR sequences only, so any other escape left is visible to the test.
func ansiStripSGR(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// TestGroupEnterFiltersToExactlyTheGroup: on the demo workbook, enter on each group leaves the
// table showing exactly that group's rows (the count is the group's, every row is in it),
// and the filter is made of quote-free field:value terms only.
func TestGroupEnterFiltersToExactlyTheGroup(t *testing.T) {
	wb := demoWorkbook(t)
	m := newLoaded(t, wb, 120, 40)
	keys(m, "2", "c")
	if m.groups == nil {
		t.Fatal("c opened no group view on the dead-letter tab")
	}
	groups := append([]groupRow(nil), m.groups.rows...)
	keys(m, "esc")
	if len(groups) < 5 {
		t.Fatalf("the demo has few groups: %s", groupsLine(groups))
	}
	for i, g := range groups {
		keys(m, "c")
		for j := 0; j < i; j++ {
			keys(m, "j")
		}
		keys(m, "enter")
		if m.groups != nil {
			t.Fatal("enter left the group view open")
		}
		ts := m.tabs.current()
		q := ts.filter.query
		if strings.ContainsAny(q, `"'|`) {
			t.Errorf("group %s/%s: filter %q uses more than field:value terms", g.source, g.kind, q)
		}
		if len(ts.visible) != g.count {
			t.Errorf("group %s/%s (%d rows): filter %q shows %d rows", g.source, g.kind, g.count, q, len(ts.visible))
		}
		for _, ri := range ts.visible {
			if r := &ts.data.table.Records[ri]; !g.holds(ts.data.table, r) {
				t.Errorf("group %s/%s: filter %q shows row %d (%s, %q, %s)", g.source, g.kind, q, r.Row,
					ts.data.table.Get(r, model.FSource), ts.data.table.Get(r, model.FError), r.Status)
			}
		}
		if !strings.Contains(toastTexts(m), fmt.Sprintf("%d %s", g.count, words.Plural(g.count, "row", "rows"))) {
			t.Errorf("the toast doesn't say how many rows: %q", toastTexts(m))
		}
	}
}

// TestGroupQueryOddSources: sources the filter can't spell whole (a space, a quote) or that
// are the start of another source get a query that still shows exactly their rows; where
// nothing can tell two sources apart, the query says it isn't exact (and the toast says so).
func TestGroupQueryOddSources(t *testing.T) {
	tab := mustDecode(t, model.RoleDeadLetter, groupRows(
		[3]string{"crm", "503", "dead"},
		[3]string{"crm-eu", "503", "dead"},
		[3]string{"crm-eu", "503", "dead"},
		[3]string{"billing eu", "timeout", "dead"},
		[3]string{"billing", "timeout", "dead"},
		[3]string{`bill"ing`, "timeout", "dead"},
		[3]string{"", "503", "dead"},
		[3]string{"shop:eu", "", "dead"},
		[3]string{"shop:us", "", "dead"},
		[3]string{"shop:us", "", "dead"},
	))
	d := prepare(tab)
	for _, g := range countGroups(tab, d.order) {
		q, exact := groupQuery(d, g)
		rows := d.match(model.ParseFilter(q), d.order)
		n := 0
		for _, ri := range rows {
			if g.holds(tab, &tab.Records[ri]) {
				n++
			}
		}
		// "billing" can't be told from "billing eu" (spelt "billing"), nor shop:eu from
		// shop:us (both "shop"); bill"ing is spelt "bill" and the billings are excluded.
		wantExact := map[string]bool{"crm": true, "crm-eu": true, "": true, `bill"ing`: true}[g.source]
		if n != g.count {
			t.Errorf("%q/%s: query %q shows %d of the group's %d rows", g.source, g.kind, q, n, g.count)
		}
		if exact != (len(rows) == g.count) {
			t.Errorf("%q/%s: query %q reported exact=%v but shows %d rows for %d", g.source, g.kind, q, exact, len(rows), g.count)
		}
		if exact != wantExact {
			t.Errorf("%q/%s: query %q exact=%v, want %v", g.source, g.kind, q, exact, wantExact)
		}
		if strings.ContainsAny(q, `"'|`) || strings.Count(q, ":") != strings.Count(q, " ")+1 {
			t.Errorf("%q/%s: query %q is not quote-free field:value terms", g.source, g.kind, q)
		}
	}
}

// TestGroupsRefreshAndKeys: the view counts again when the data reloads, keeps the cursor on
// its group, scrolls at 60x15 with a hint, esc goes back, and c elsewhere says where it works.
func TestGroupsRefreshAndKeys(t *testing.T) {
	m := newLoaded(t, demoWorkbook(t), 60, 15)
	keys(m, "c")
	if m.groups != nil || !strings.Contains(toastTexts(m), "groups are for dead letters") {
		t.Errorf("c on the inbox: groups %v, toasts %q", m.groups != nil, toastTexts(m))
	}
	keys(m, "2", "c")
	s := plainScreen(m)
	checkFrame(t, screen(m), 60, 15)
	if !strings.Contains(s, "groups 1-") || !strings.Contains(s, "(j/k)") {
		t.Errorf("at 60x15 the hint says there are more groups:\n%s", s)
	}
	keys(m, "G")
	if s := plainScreen(m); !strings.Contains(s, fmt.Sprintf("of %d", len(m.groups.rows))) {
		t.Errorf("G: %s", s)
	}
	keys(m, "g", "j")
	cur := m.groups.rows[m.groups.cursor]
	// A reload with one more row of the cursor's group: counted again, cursor stays on it.
	wb := demoWorkbook(t)
	wb.Tabs[1] = mustDecode(t, model.RoleDeadLetter, append(groupRowsFrom(wb.Tabs[1]), []any{"2025-05-01T00:00:00Z", cur.source, "https://x", `{"a":1}`, cur.sample, "1", "POST", "new-key", "dead", ""}))
	send(m, loaded(m, wb))
	if got := m.groups.rows[m.groups.cursor]; !got.same(cur) || got.count != cur.count+1 {
		t.Errorf("after the reload the cursor is on %s/%s=%d, want %s/%s=%d", got.source, got.kind, got.count, cur.source, cur.kind, cur.count+1)
	}
	keys(m, "esc")
	if m.groups != nil {
		t.Error("esc didn't close the group view")
	}
}

// The group view's status bar counts groups, not the table's rows: "group 2/17", never the
// table's "1/25" under it; back in the table, the table's counter again.
func TestGroupsStatusBarCountsGroups(t *testing.T) {
	m := newLoaded(t, demoWorkbook(t), 80, 24)
	keys(m, "2")
	table := statusBar(m, 80)
	keys(m, "c", "j")
	n := len(m.groups.rows)
	bar := strings.TrimSpace(ansiStripLine(statusBar(m, 80)))
	if want := fmt.Sprintf("group 2/%d", n); !strings.HasPrefix(bar, want) {
		t.Errorf("the group view's status bar is %q, want %q", bar, want)
	}
	if strings.Contains(bar, strings.TrimSpace(ansiStripLine(table))) {
		t.Errorf("the group view shows the table's counter %q", table)
	}
	keys(m, "G")
	if bar := strings.TrimSpace(ansiStripLine(statusBar(m, 80))); bar != fmt.Sprintf("group %d/%d", n, n) {
		t.Errorf("G: %q", bar)
	}
	keys(m, "esc")
	if bar := statusBar(m, 80); bar != table {
		t.Errorf("back in the table the status bar is %q, want %q", bar, table)
	}
}

// groupRowsFrom turns a decoded table back into rows (header first).
func groupRowsFrom(t *model.Table) [][]any {
	var out [][]any
	h := make([]any, len(t.Header.Headers))
	for i, s := range t.Header.Headers {
		h[i] = s
	}
	out = append(out, h)
	for _, r := range t.Records {
		row := make([]any, len(r.Cells))
		for i, c := range r.Cells {
			row[i] = c
		}
		out = append(out, row)
	}
	return out
}

// TestGoldenMatrixGroups: the group view of the demo workbook, in every size and terminal.
func TestGoldenMatrixGroups(t *testing.T) {
	goldenMatrix(t, "groups", demoWorkbook, func(t *testing.T, m *Model) { keys(m, "2", "c", "j") })
}

// A pick made before the tab's filter text is built (a load of this TUI's own builds it
// later, off the UI goroutine) says the group's count, not the whole tab's, and the table
// shows that many rows once the text lands.
func TestGroupPickCountsTheGroupWhileTheFilterTextIsBuilt(t *testing.T) {
	wb := demoWorkbook(t)
	m := New(Options{Store: nopStore{t: t}, SpreadsheetID: "sheet-1", Now: fixedNow})
	send(m, tea.WindowSizeMsg{Width: 120, Height: 40})
	msg := loadedMsg{seq: m.load.seq, wb: wb}
	for _, tb := range wb.Tabs {
		msg.tabs = append(msg.tabs, prepareScreen(tb))
	}
	send(m, msg)
	keys(m, "2", "c")
	if m.groups == nil {
		t.Fatal("c opened no group view")
	}
	total := len(m.tabs.current().visible)
	pick := -1
	for i, g := range m.groups.rows {
		if g.count < total {
			pick = i
			break
		}
	}
	if pick < 0 {
		t.Fatalf("every group of the demo holds all %d rows", total)
	}
	g := m.groups.rows[pick]
	for range pick {
		keys(m, "j")
	}
	cmd := send(m, press("enter"))
	want := fmt.Sprintf("%d %s", g.count, words.Plural(g.count, "row", "rows"))
	if !strings.Contains(toastTexts(m), want) || strings.Contains(toastTexts(m), countRows(total)) {
		t.Errorf("the pick of %s × %s (%d rows) says %q", g.source, g.kind, g.count, toastTexts(m))
	}
	for _, msg := range cmdMsgs(t, cmd) {
		if _, ok := msg.(hayMsg); ok {
			send(m, msg)
		}
	}
	if n := len(m.tabs.current().visible); n != g.count {
		t.Errorf("once the filter text landed the table shows %d rows, the toast said %d", n, g.count)
	}
}
