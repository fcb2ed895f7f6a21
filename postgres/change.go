package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

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

// Changed reports whether a triage table changed since the last Load (sheets.ChangeChecker,
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
	return s.load(ctx, []model.TabConfig{tc})
}
