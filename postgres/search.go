package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/triage-dev/triage/model"
)

// This file is the TUI's reach into history (tui.HistorySearcher): a filter whose status or
// date terms ask for rows Load leaves out (the settled ones) runs as History, in SQL with
// bound parameters.

// NeedsHistory reports whether q selects rows of the tab named tab that Load doesn't return:
// a settled status (delivered, discarded, done, spam), or a time range over any status. A
// range over open statuses only, or a store opened with History (it loads every row), needs
// none. It answers from the schema, without a query (the TUI asks it in Update).
func (s *Store) NeedsHistory(tab string, q model.HistorySearch) bool {
	tc, ok := s.tabNamed(tab)
	t, known := tables[tc.Role]
	if !ok || !known || s.history || q.IsZero() {
		return false
	}
	if len(q.Statuses) == 0 {
		return true // a time range over every status
	}
	for _, st := range q.Statuses {
		if slices.Contains(t.closed, model.NormStatus(tc.Role, st)) {
			return true
		}
	}
	return false
}

// SearchHistory runs q over the tab named tab (History: its statuses and time range as
// bound parameters), newest first, at most q.Limit rows (History's default when 0). The rows
// carry their IDs, so the TUI writes them as any other.
func (s *Store) SearchHistory(ctx context.Context, tab string, q model.HistorySearch) (*model.Table, error) {
	tc, ok := s.tabNamed(tab)
	if !ok {
		return nil, fmt.Errorf("search history: no configured tab is called %q", tab)
	}
	return s.History(ctx, HistoryQuery{Role: tc.Role, Statuses: q.Statuses, From: q.From, To: q.To, Limit: q.Limit})
}

// tabNamed returns the configured tab of a name (any case).
func (s *Store) tabNamed(name string) (model.TabConfig, bool) {
	for _, tc := range s.tabs {
		if strings.EqualFold(tc.Name, name) {
			return tc, true
		}
	}
	return model.TabConfig{}, false
}
