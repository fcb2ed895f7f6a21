package tui

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/triage-dev/triage/model"
)

// histStore is a store that loads the open work only and searches the rest: settled
// (delivered, discarded) or dated rows are history. Its search is only ever called from
// searchCmd's Cmd; Update must never reach it (invariant 10).
type histStore struct {
	nopStore
	mu       sync.Mutex
	searched []model.HistorySearch
}

func (s *histStore) NeedsHistory(_ string, q model.HistorySearch) bool {
	if len(q.Statuses) == 0 {
		return !q.IsZero()
	}
	return slices.Contains(q.Statuses, "delivered") || slices.Contains(q.Statuses, "discarded")
}

func (s *histStore) SearchHistory(_ context.Context, tab string, q model.HistorySearch) (*model.Table, error) {
	s.mu.Lock()
	s.searched = append(s.searched, q)
	s.mu.Unlock()
	return historyTable(s.t), nil
}

func (s *histStore) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.searched)
}

// openWorkbook is testWorkbook as a database loads it: the dead letters' open work only.
func openWorkbook(t testing.TB) *model.Workbook {
	wb := testWorkbook(t)
	rows := deadRows()
	wb.Tabs[1] = mustDecode(t, model.RoleDeadLetter, rows[:len(rows)-1]) // k-4 is delivered
	return wb
}

// historyTable is what a search for delivered dead letters returns: two old ones, and k-4.
func historyTable(t testing.TB) *model.Table {
	return mustDecode(t, model.RoleDeadLetter, rowsOf(
		[]string{"timestamp", "source", "url", "payload", "error", "attempts", "method", "key", "status", "replayed_at"},
		[]string{"2025-05-29T09:00:00Z", "mailer", "https://mail.example/send", `{"to":"y@example.com"}`, "", "1", "", "k-4", "delivered", ""},
		[]string{"2025-01-02T09:00:00Z", "crm", "https://crm.example/api/leads", `{"id":"h-1"}`, "", "1", "POST", "h-1", "delivered", ""},
		[]string{"2025-01-01T09:00:00Z", "billing", "https://pay.example/hook", `{"id":"h-2"}`, "", "1", "POST", "h-2", "delivered", ""},
	))
}

// historyDelivered is the search's answer as searchCmd builds it.
func historyDelivered(t testing.TB, seq int) historyMsg {
	return historyMsg{tab: "failed_calls", seq: seq, data: prepare(historyTable(t))}
}

func withStore(s Store) modelOpt { return func(o *Options) { o.Store = s } }

// A filter asking for rows the load left out (status:delivered on a database) is searched in
// a Cmd, "searching history…" meanwhile; the search's rows are shown, marked as history in
// the status bar, while the tab bar still counts the loaded rows; esc puts the loaded rows
// back. Typing searches only when what the filter asks of history changes.
func TestHistorySearchShowsRowsTheLoadLeftOut(t *testing.T) {
	st := &histStore{nopStore: nopStore{t: t}}
	m := newLoaded(t, openWorkbook(t), 120, 30, withStore(st))
	keys(m, "2", "/")
	typeText(m, "status:delivered")
	ts := m.tabs.current()
	// status:d asks for dead, delivered and discarded, status:de for dead and delivered,
	// status:del… for delivered: three searches, the last one in flight.
	if m.tabs.histSeq != 3 || !ts.hist.searching || ts.hist.seq != 3 || !slices.Equal(ts.hist.want.Statuses, []string{"delivered"}) || ts.hist.want.Limit != historyLimit {
		t.Fatalf("searches %d, view %+v", m.tabs.histSeq, ts.hist)
	}
	if st.calls() != 0 {
		t.Fatal("Update called SearchHistory: it belongs in a Cmd")
	}
	if bar := ansi.Strip(statusBar(m, 120)); !strings.Contains(bar, "searching history…") {
		t.Errorf("status bar while searching: %q", bar)
	}
	send(m, historyDelivered(t, 2)) // an older search's answer: dropped
	if ts.hist.shown() {
		t.Fatal("an older search's answer was shown")
	}
	send(m, historyDelivered(t, 3))
	keys(m, "enter")
	scr := plainScreen(m)
	if !strings.Contains(scr, "h-1") || !strings.Contains(scr, "h-2") || !strings.Contains(scr, "k-4") || strings.Contains(scr, "k-1") {
		t.Errorf("history's delivered rows are shown:\n%s", scr)
	}
	bar := ansi.Strip(statusBar(m, 120))
	if !strings.Contains(bar, "history: 3 rows of status:delivered, newest first, at most 10,000") || !strings.Contains(bar, "1/3") {
		t.Errorf("status bar: %q", bar)
	}
	if tabBar := ansi.Strip(m.tabs.tabBar(m.c, 120)); !strings.Contains(tabBar, "2 dead") || strings.Contains(tabBar, "delivered") {
		t.Errorf("the tab bar counts the loaded rows: %q", tabBar)
	}

	// A free-text term narrows history's rows without a new search.
	keys(m, "/")
	typeText(m, " crm")
	if m.tabs.histSeq != 3 || len(ts.visible) != 1 {
		t.Errorf("crm: searches %d, rows %d", m.tabs.histSeq, len(ts.visible))
	}
	keys(m, "enter", "esc")
	if ts.hist.shown() || ts.hist.searching || strings.Contains(ansi.Strip(statusBar(m, 120)), "history") {
		t.Fatalf("esc puts the loaded rows back: %+v", ts.hist)
	}
	if scr := plainScreen(m); !strings.Contains(scr, "k-1") || strings.Contains(scr, "h-1") {
		t.Errorf("the loaded rows:\n%s", scr)
	}
	if len(ts.data.table.Records) != 3 {
		t.Errorf("loaded rows: %d", len(ts.data.table.Records))
	}

	// The Cmd itself asks the store for exactly what the filter asked.
	msg := searchCmd(context.Background(), st, "failed_calls", model.HistorySearch{Statuses: []string{"delivered"}, Limit: historyLimit}, 9)().(historyMsg)
	if msg.err != nil || msg.seq != 9 || len(msg.data.table.Records) != 3 || msg.data.hay == nil || st.calls() != 1 || st.searched[0].Limit != historyLimit {
		t.Errorf("searchCmd: %+v, %+v", msg, st.searched)
	}
}

// A write on a history row goes through Apply with the row's ID, and shows there; a load
// while history's rows are shown keeps them on screen, takes the new loaded rows aside and
// searches again; a failed search says why and keeps the rows.
func TestHistoryRowsAreWrittenAndRefreshed(t *testing.T) {
	st := &histStore{nopStore: nopStore{t: t}}
	open := openWorkbook(t)
	open.Tabs[1] = mustDecode(t, model.RoleDeadLetter, deadRows()[:2]) // fewer loaded rows than history's
	m := newLoaded(t, open, 120, 30, withStore(st))
	keys(m, "2", "/")
	typeText(m, "status:delivered")
	keys(m, "enter")
	send(m, historyDelivered(t, m.tabs.histSeq))
	ts := m.tabs.current()
	keys(m, "j", "s", "1") // h-1 (the second newest), set to dead
	if !m.writes.writing || len(m.writes.inflight.edits) != 1 || m.writes.inflight.edits[0].ID != "h-1" {
		t.Fatalf("the write addresses the history row by its ID: %+v", m.writes.inflight)
	}
	op := *m.writes.inflight
	send(m, appliedMsg{op: op, res: model.ApplyResult{Applied: []model.Applied{{Edit: op.edits[0], Row: 9}}}})
	if r, _, ok := ts.data.record("h-1"); !ok || r.Status != "dead" || slices.Contains(ts.visible, ts.data.byID["h-1"]) {
		t.Errorf("h-1 after the write: %+v; it leaves status:delivered", r)
	}

	seq := m.tabs.histSeq
	wb := openWorkbook(t)
	wb.Tabs[1] = mustDecode(t, model.RoleDeadLetter, deadRows()[:3]) // another person added k-2
	m.startLoad()                                                    // its Cmd isn't run: the load's answer is sent below
	send(m, loaded(m, wb))
	ts = m.tabs.current()
	if !ts.hist.shown() || !ts.hist.searching || m.tabs.histSeq != seq+1 || !strings.Contains(plainScreen(m), "h-2") {
		t.Fatalf("a load keeps history's rows and searches again: %+v", ts.hist)
	}
	send(m, historyMsg{tab: "failed_calls", seq: m.tabs.histSeq, err: errors.New("connection refused")})
	if !strings.Contains(toastTexts(m), "searching the history of failed_calls failed: connection refused") ||
		!strings.Contains(ansi.Strip(statusBar(m, 120)), "history search failed") || !strings.Contains(plainScreen(m), "h-2") {
		t.Errorf("a failed search: %q / %q", toastTexts(m), ansi.Strip(statusBar(m, 120)))
	}
	keys(m, "esc", "esc") // the error toast, then the filter
	if ts.hist.shown() || len(ts.data.table.Records) != 2 {
		t.Errorf("the new loaded rows are back: %d rows, %+v", len(ts.data.table.Records), ts.hist)
	}
}

// A store that loads every row (the sheet) is never searched: the filter runs over the rows,
// dates included.
func TestNoHistoryWithoutASearcher(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 120, 30)
	keys(m, "2", "/")
	typeText(m, "status:delivered after:2025-05-01")
	ts := m.tabs.current()
	if m.tabs.searcher != nil || m.tabs.histSeq != 0 || ts.hist.searching || len(ts.visible) != 1 {
		t.Errorf("no search, the delivered row of May shown: %d rows", len(ts.visible))
	}
}

// historyNote says when the search was capped, and thousands are written with commas.
func TestHistoryNoteCapped(t *testing.T) {
	if got := thousands(1234567); got != "1,234,567" {
		t.Errorf("thousands: %s", got)
	}
	if got := thousands(999); got != "999" {
		t.Errorf("thousands: %s", got)
	}
	recs := make([]model.Record, historyLimit)
	ts := &tabState{data: &tabData{table: &model.Table{Records: recs}}}
	ts.hist.open = ts.data
	ts.hist.want = model.HistorySearch{Statuses: []string{"delivered"}}
	if got := ts.historyNote(); !strings.Contains(got, "the newest 10,000 rows (capped: narrow the dates)") {
		t.Errorf("capped: %q", got)
	}
}

// A date being typed says what a date looks like, under the status bar, until it is one.
func TestFilterNoteOnADateBeingTyped(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 120, 30)
	keys(m, "/")
	typeText(m, "after:2025-05")
	if scr := plainScreen(m); !strings.Contains(scr, "not a date: after:2025-05") {
		t.Errorf("the note:\n%s", scr)
	}
	typeText(m, "-31")
	if scr := plainScreen(m); strings.Contains(scr, "not a date") || m.tabs.current().filter.problem != "" {
		t.Errorf("a date: no note\n%s", scr)
	}
}
