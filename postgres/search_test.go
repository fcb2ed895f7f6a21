package postgres_test

import (
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
)

// The TUI's filter reaches into history through NeedsHistory and SearchHistory: a filter
// parsed by model (status and date terms) becomes History's bound parameters, and only a
// filter asking for rows Load leaves out needs a search at all.
func TestSearchHistoryFromAFilter(t *testing.T) {
	url, conn := pgDB(t)
	insert(t, conn, model.RoleDeadLetter, [][]string{
		{"2026-01-01T10:00:00Z", "crm", "u", "{}", "", "", "", "a", "delivered", "", "", ""},
		{"2026-01-02T10:00:00Z", "crm", "u", "{}", "", "", "", "b", "delivered", "", "", ""},
		{"2026-01-03T10:00:00Z", "billing", "u", "{}", "", "", "", "c", "delivered", "", "", ""},
		{"2026-01-02T12:00:00Z", "crm", "u", "{}", "", "", "", "d", "dead", "", "", ""},
		{"2026-01-02T13:00:00Z", "crm", "u", "{}", "", "", "", "e", "rejected", "", "", ""},
		{"2026-01-02T14:00:00Z", "crm", "u", "{}", "", "", "", "f", "discarded", "", "", ""},
	})
	cfg := tabs()
	cfg[1].Name = "Failures" // the tab's name, not its table's, finds it
	st := openStore(t, url, postgres.Options{Tabs: cfg})
	wb, err := st.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	open := wb.TabNamed("Failures")
	for _, c := range []struct {
		q     string
		needs bool
		ids   []string // the search's rows, newest first
	}{
		{"status:delivered", true, []string{"c", "b", "a"}},
		{"status:deliv crm", true, []string{"c", "b", "a"}}, // crm filters the rows, in the TUI
		{"status:delivered|rejected after:2026-01-02 before:2026-01-03", true, []string{"e", "b"}},
		{"after:2026-01-02T11:00:00Z", true, []string{"f", "e", "d", "c"}},
		{"status:d before:2026-01-02", true, []string{"a"}},
		{"status:dead|rejected", false, []string{"e", "d"}},                      // open: loaded already
		{"status:dead after:2026-01-02", false, []string{"d"}},                   // a range over open statuses
		{"crm !status:delivered", false, []string{"f", "e", "d", "c", "b", "a"}}, // nothing to search by
		{"status:x') OR true; --", false, nil},                                   // a value, never SQL
	} {
		q := model.ParseFilter(c.q).Bind(open).History()
		if got := st.NeedsHistory("failures", q); got != c.needs {
			t.Errorf("%q: NeedsHistory %v, want %v", c.q, got, c.needs)
		}
		tab, err := st.SearchHistory(t.Context(), "Failures", q)
		if err != nil {
			t.Fatalf("%q: %v", c.q, err)
		}
		var ids []string
		for _, r := range tab.Records {
			ids = append(ids, r.ID)
		}
		if !equalStrings(ids, c.ids) {
			t.Errorf("%q (%+v): %v, want %v", c.q, q, ids, c.ids)
		}
	}
	q := model.HistorySearch{Statuses: []string{"delivered"}, Limit: 2}
	if tab, err := st.SearchHistory(t.Context(), "Failures", q); err != nil || len(tab.Records) != 2 {
		t.Fatalf("limit 2: %v", err)
	}
	if _, err := st.SearchHistory(t.Context(), "nope", q); err == nil {
		t.Error("an unknown tab searched")
	}
	if st.NeedsHistory("nope", q) {
		t.Error("an unknown tab needs history")
	}

	// A store that loads every row has nothing beyond it.
	all := openStore(t, url, postgres.Options{Tabs: cfg, History: true})
	if all.NeedsHistory("Failures", model.HistorySearch{Statuses: []string{"delivered"}, From: time.Now()}) {
		t.Error("History store needs history")
	}
}
