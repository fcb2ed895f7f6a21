package postgres_test

import (
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
)

// History reaches past the open work by status and time, newest first, with the values bound
// (a status that is SQL matches nothing and breaks nothing).
func TestHistoryByStatusAndTime(t *testing.T) {
	url, conn := pgDB(t)
	insert(t, conn, model.RoleDeadLetter, [][]string{
		{"2026-01-01T10:00:00Z", "s", "u", "{}", "", "", "", "a", "delivered", "", "", ""},
		{"2026-01-02T10:00:00Z", "s", "u", "{}", "", "", "", "b", "Delivered ", "", "", ""},
		{"2026-01-03T10:00:00Z", "s", "u", "{}", "", "", "", "c", "delivered", "", "", ""},
		{"2026-01-02T12:00:00Z", "s", "u", "{}", "", "", "", "d", "", "", "", ""},
		{"not a date", "s", "u", "{}", "", "", "", "e", "delivered", "", "", ""},
		{"2026-01-02T23:30:00-01:00", "s", "u", "{}", "", "", "", "f", "dead", "", "", ""},
		{"2026-02-30T10:00:00Z", "s", "u", "{}", "", "", "", "g", "dead", "", "", ""},
		{"2026-01-02T09:59:59.5+00:00", "s", "u", "{}", "", "", "", "h", "dead", "", "", ""},
	})
	st := openStore(t, url, postgres.Options{Tabs: tabs()})
	ids := func(q postgres.HistoryQuery) []string {
		t.Helper()
		tab, err := st.History(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range tab.Records {
			out = append(out, r.ID)
		}
		return out
	}
	day := func(d int) time.Time { return time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		q    postgres.HistoryQuery
		want []string
	}{
		{postgres.HistoryQuery{Role: model.RoleDeadLetter, Statuses: []string{"delivered"}}, []string{"e", "c", "b", "a"}},
		{postgres.HistoryQuery{Role: model.RoleDeadLetter, Statuses: []string{"delivered"}, From: day(2), To: day(3)}, []string{"b"}},
		// f is 2026-01-03 00:30 UTC (its offset counts); g's date doesn't exist.
		{postgres.HistoryQuery{Role: model.RoleDeadLetter, From: day(2), To: day(3)}, []string{"h", "d", "b"}},
		{postgres.HistoryQuery{Role: model.RoleDeadLetter, From: day(3)}, []string{"f", "c"}},
		{postgres.HistoryQuery{Role: model.RoleDeadLetter, Statuses: []string{"dead"}}, []string{"h", "g", "f", "d"}},
		{postgres.HistoryQuery{Role: model.RoleDeadLetter, Statuses: []string{"delivered"}, Limit: 2}, []string{"e", "c"}},
		{postgres.HistoryQuery{Role: model.RoleDeadLetter, Statuses: []string{"x') OR true; --"}}, nil},
	} {
		if got := ids(tc.q); !equalStrings(got, tc.want) {
			t.Errorf("%+v: %v, want %v", tc.q, got, tc.want)
		}
	}
	var n int
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM failed_calls").Scan(&n); err != nil || n != 8 {
		t.Fatalf("%d rows, %v", n, err)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
