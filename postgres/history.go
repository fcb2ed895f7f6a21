package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/triage-dev/triage/model"
)

// HistoryQuery selects rows of one tab beyond the open work Load returns: by status and by
// time, newest first. Every value is a bound parameter, never written into the SQL.
type HistoryQuery struct {
	// Role is the tab's role.
	Role model.Role
	// Statuses, when set, keeps rows whose status (trimmed, any case; blank reads as the
	// role's waiting status) is one of them.
	Statuses []string
	// From and To, when set, keep rows whose time (timestamp; a job's claimedAt) is at or
	// after From and before To. A row whose time can't be read is left out by either.
	From, To time.Time
	// Limit caps the rows (default 10,000).
	Limit int
}

// History runs q and returns its rows decoded as Load decodes a tab, newest first; the
// table's Records carry their row numbers, so a write finds them as any other.
func (s *Store) History(ctx context.Context, q HistoryQuery) (*model.Table, error) {
	tc, ok := s.roleConfig(q.Role)
	t, known := tables[q.Role]
	if !ok || !known {
		return nil, fmt.Errorf("history: no configured tab has role %q", q.Role)
	}
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if len(q.Statuses) > 0 {
		norm := make([]string, len(q.Statuses))
		for i, st := range q.Statuses {
			norm[i] = model.NormStatus(q.Role, st)
		}
		blank := model.NormStatus(q.Role, "")
		where = append(where, "(CASE WHEN btrim(status) = '' THEN "+arg(blank)+" ELSE lower(btrim(status)) END) = ANY("+arg(norm)+")")
	}
	timeCol := `"timestamp"`
	if q.Role == model.RoleQueue {
		timeCol = "claimedat"
	}
	// triage_utc is indexed (migration 3); it compares in UTC, without a zone.
	utc := func(t time.Time) string { return arg(t.UTC().Format("2006-01-02 15:04:05.999999999")) + "::timestamp" }
	if !q.From.IsZero() {
		where = append(where, "triage_utc("+timeCol+") >= "+utc(q.From))
	}
	if !q.To.IsZero() {
		where = append(where, "triage_utc("+timeCol+") < "+utc(q.To))
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 10_000
	}
	sql := "SELECT " + t.selectList() + " FROM " + t.name
	if len(where) > 0 {
		sql += " WHERE " + strings.Join(where, " AND ")
	}
	sql += " ORDER BY " + t.rowNo + " DESC LIMIT " + arg(limit)
	tab, err := s.loadTable(ctx, tc, t, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("history of %s from %s: %w", tc.Name, s.url, err)
	}
	return tab, nil
}

// roleConfig returns the configured tab of a role.
func (s *Store) roleConfig(r model.Role) (model.TabConfig, bool) {
	for _, tc := range s.tabs {
		if tc.Role == r {
			return tc, true
		}
	}
	return model.TabConfig{}, false
}
