package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/triage-dev/triage/model"
)

// changes is what Changed knows: whether a notice came since the last Load, from a watch the
// first Changed starts and Close ends.
type changes struct {
	mu       sync.Mutex
	watching bool
	cancel   context.CancelFunc
	// dirty is set by every notice and by a lost watch; Load clears it before it reads.
	dirty atomic.Bool
}

// Changed reports whether a triage table changed since the last Load (store.ChangeChecker,
// as `serve`'s hub asks before each refresh): from the change notices of a watch it starts on
// its first call (Watch), so asking sends no query. It says true until that watch runs, when
// it is lost (then the next call watches again), and for anything noticed since the Load.
func (s *Store) Changed(ctx context.Context) (bool, error) {
	c := &s.changes
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.watching {
		return c.dirty.Load(), nil
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	notices, err := s.Watch(wctx)
	if err != nil {
		cancel()
		return true, fmt.Errorf("watch for changes: %w", err)
	}
	c.watching, c.cancel = true, cancel
	c.dirty.Store(true) // the last Load may be older than the watch
	go func() {
		for range notices {
			c.dirty.Store(true)
		}
		c.mu.Lock()
		c.watching = false
		c.dirty.Store(true)
		c.mu.Unlock()
	}()
	return true, nil
}

// ChangeCheckMode says how refreshes learn of changes, for `config check` and status lines.
func (s *Store) ChangeCheckMode() string {
	return "change notices (LISTEN/NOTIFY: an idle refresh sends no query)"
}

// stopChanges ends Changed's watch.
func (s *Store) stopChanges() {
	c := &s.changes
	c.mu.Lock()
	if c.cancel != nil {
		c.cancel()
	}
	c.mu.Unlock()
}

// LoadTab reads one configured tab (by name, else by role) for a command that works on it
// alone (list, set-status, ...): a workbook holding that tab only.
func (s *Store) LoadTab(ctx context.Context, name string) (*model.Workbook, error) {
	return s.LoadTabRows(ctx, name, nil)
}

// LoadTabRows is LoadTab that also reads the rows whose identity is among ids, settled or
// open: a command names rows to write (set-status of a row marked done, clear-error of a
// rejected call), and the open work alone may not hold them. For a dead-letter tab the rows
// without a key cell are read too (their identity is computed from their content, by
// model.Decode, as the sheet's).
func (s *Store) LoadTabRows(ctx context.Context, name string, ids []string) (*model.Workbook, error) {
	tc, ok := s.tabConfig(name)
	if !ok {
		role := model.Role(strings.ToLower(strings.TrimSpace(name)))
		for _, c := range s.tabs {
			if c.Role == role {
				tc, ok = c, true
				break
			}
		}
		if !ok {
			return nil, fmt.Errorf("load: no tab %q: it is neither a configured tab's name nor a role (inbox, deadletter, queue); configured: %s", name, s.tabNames())
		}
	}
	if len(ids) == 0 || s.history {
		return s.load(ctx, []model.TabConfig{tc})
	}
	t, ok := tables[tc.Role]
	if !ok {
		return nil, fmt.Errorf("load: tab %q has role %q, which has no table", tc.Name, tc.Role)
	}
	dbIDs := make([]string, len(ids))
	for i, id := range ids {
		dbIDs[i] = toDB(id)
	}
	named := "id = ANY($1)"
	if tc.Role == model.RoleDeadLetter {
		named = `btrim("key") = ANY($1) OR "key" IS NULL OR btrim("key") = ''`
	}
	s.changes.dirty.Store(false)
	q := "SELECT " + t.selectList() + " FROM " + t.name + " WHERE (" + t.openFilter() + ") OR " + named + " ORDER BY " + t.rowNo
	tab, err := s.loadTable(ctx, tc, t, q, dbIDs)
	if err != nil {
		return nil, fmt.Errorf("load %s (table %s) from %s: %w", tc.Name, t.name, s.url, err)
	}
	return &model.Workbook{SpreadsheetID: s.url, Title: "PostgreSQL " + s.db, Location: time.UTC, Tabs: []*model.Table{tab}, Loaded: s.now()}, nil
}
