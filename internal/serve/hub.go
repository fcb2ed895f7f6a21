// Package serve is `triage serve`: the TUI served over SSH to a team from one process that
// holds the one Sheets credential (DESIGN §9). This file is the hub: the one store, the one
// refresh loop and the one cache every session shares.
//
// The design it follows, and the section (§N) and invariant numbers its comments cite, are in
// docs/DESIGN.md.
package serve

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/store"
	"github.com/triage-dev/triage/tui"
)

// DefaultRefresh is how often the hub reads the sheet when the config doesn't say.
const DefaultRefresh = 60 * time.Second

// freshFor is how young the cache must be for a person's refresh (r) to be answered from it
// rather than by reading the sheet: several people pressing r at once cost one read.
const freshFor = 2 * time.Second

// loadTimeout bounds one read of the sheet, retries included.
const loadTimeout = 2 * time.Minute

// HubOptions configure a Hub.
type HubOptions struct {
	// Store is the one real store (a sheets.Store or a postgres.Store) every session reads
	// and writes through.
	Store tui.Store
	// Replayer replays dead letters for every session (replay.Runner over Store), nil when
	// replays aren't offered. Each session reaches it through a wrapper that enforces the
	// person's role and one run per tab.
	Replayer tui.Replayer
	// Refresh is how often the sheet is read for everyone (DefaultRefresh when 0).
	Refresh time.Duration
	// Logger records every change (who, tab, IDs, old → new) and every refusal; nil discards.
	Logger *slog.Logger
	// Now is the clock of the cache's age (default time.Now).
	Now func() time.Time
	// Initial is a workbook the caller already read from Store (serve's check before it
	// listens): the first cache, so Run doesn't read the sheet again at once.
	Initial *model.Workbook
	// Changes, when set, says the store changed (a database's change notices, DESIGN §11):
	// each value (or burst of values) is one read pushed to every session at once, not at
	// the next interval; while nobody is attached a notice only marks the cache stale. The
	// interval's refresh goes on (where the store can tell, a change check sending nothing).
	Changes <-chan struct{}
}

// Hub is the workbook every session shares: one refresh loop reads the sheet once per
// interval however many sessions there are, prepares it for display once (tui.Prepare) and
// pushes it to every session; a refresh or a write by anyone is pushed to everyone. It is
// safe for concurrent use.
type Hub struct {
	store    tui.Store
	replayer tui.Replayer
	refresh  time.Duration
	log      *slog.Logger
	now      func() time.Time
	ctx      context.Context // the hub's life: reads are not cut short by one session leaving
	// ticks, when set (by tests, before Run), replaces the refresh ticker: each value
	// received is one refresh.
	ticks <-chan time.Time
	// changes is HubOptions.Changes.
	changes <-chan struct{}
	// tickDone, when set (by tests, before Run), is sent to once each tick is dealt with.
	tickDone chan<- struct{}

	mu sync.Mutex
	// gen counts load starts and write landings; a load started at gen g has seen every write
	// that landed at a gen below g.
	gen      uint64
	writeGen uint64 // gen of the latest write that landed
	flight   *flight
	cache    *tui.Prepared // the newest good load
	cacheGen uint64
	cachedAt time.Time
	pushed   uint64 // gen of the newest load pushed (older results are never pushed after it)
	sessions map[*session]struct{}
	// stale says a refresh was skipped because no session was attached: the next session
	// to attach has the sheet read at once.
	stale  bool
	runs   map[string]*tabRun // replays in progress, by tab (lower case)
	runSeq uint64             // numbers the runs (tui.RunInfo.ID)
}

// flight is a read of the sheet in progress; sessions asking for one meanwhile join it.
type flight struct {
	gen  uint64
	done chan struct{}
	p    *tui.Prepared
}

// NewHub returns a hub over opts.Store. It reads nothing until Run (or a session's refresh);
// ctx bounds every read it makes.
func NewHub(ctx context.Context, opts HubOptions) *Hub {
	h := &Hub{
		store:    opts.Store,
		replayer: opts.Replayer,
		refresh:  opts.Refresh,
		log:      opts.Logger,
		now:      opts.Now,
		ctx:      ctx,
		changes:  opts.Changes,
		sessions: map[*session]struct{}{},
		runs:     map[string]*tabRun{},
	}
	if h.refresh <= 0 {
		h.refresh = DefaultRefresh
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.now == nil {
		h.now = time.Now
	}
	if opts.Initial != nil {
		h.gen++
		h.cache, h.cacheGen, h.cachedAt, h.pushed = tui.Prepare(opts.Initial, nil), h.gen, h.now(), h.gen
	}
	return h
}

// Run is the refresh loop: one read at once (unless HubOptions.Initial is the first cache),
// then one per interval, and one per burst of HubOptions.Changes, while a session is
// attached, each pushed to every session, until ctx is done. While nobody is attached nothing
// is read (a session attaching has a stale cache read at once), and where the store can tell
// (store.ChangeChecker: the sheet's Drive version, the database's change notices) an
// interval in which nothing changed costs a change check, not a read. A read a session asked for meanwhile is joined, not repeated.
func (h *Hub) Run(ctx context.Context) {
	ticks := h.ticks
	if ticks == nil {
		t := time.NewTicker(h.refresh)
		defer t.Stop()
		ticks = t.C
	}
	changes := h.changes
	if h.Cached() == nil {
		h.load(ctx, 0)
	}
	for {
		tick := false
		select {
		case <-ctx.Done():
			return
		case <-ticks:
			tick = true
		case _, ok := <-changes:
			if !ok {
				// The notices ended (their context did): the interval carries on alone.
				changes = nil
				continue
			}
			drainSignals(changes)
			// Someone's write landed: the cache no longer counts as fresh, so the read that
			// follows reads rather than asking the store's own change check, which may not
			// have heard of it yet.
			h.wrote()
		}
		h.mu.Lock()
		idle := len(h.sessions) == 0
		if idle {
			h.stale = true
		}
		h.mu.Unlock()
		if !idle {
			h.load(ctx, 0)
		}
		if tick && h.tickDone != nil {
			h.tickDone <- struct{}{}
		}
	}
}

// drainSignals takes the change signals already queued: a burst is one read.
func drainSignals(ch <-chan struct{}) {
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		default:
			return
		}
	}
}

// Cached is the newest good workbook, nil before the first good read.
func (h *Hub) Cached() *tui.Prepared {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cache
}

// load returns a read of the sheet no older than maxAge that has seen every write so far:
// the cache when it is, the read in flight when one started after the last write, else one
// real read. Every real read's result is pushed to every session. An error comes back as a
// Prepared carrying it (sessions show it as a failed refresh).
func (h *Hub) load(ctx context.Context, maxAge time.Duration) *tui.Prepared {
	h.mu.Lock()
	if h.cache != nil && maxAge > 0 && h.cacheGen > h.writeGen && h.now().Sub(h.cachedAt) < maxAge {
		p := h.cache
		h.mu.Unlock()
		return p
	}
	f := h.flight
	if f == nil || f.gen < h.writeGen {
		h.gen++
		f = &flight{gen: h.gen, done: make(chan struct{})}
		h.flight = f
		go h.read(f)
	}
	h.mu.Unlock()
	select {
	case <-f.done:
		return f.p
	case <-ctx.Done():
		return tui.Prepare(nil, ctx.Err())
	}
}

// read is one real Load, prepared once, cached and pushed to everyone, unless a write landed
// since it started (the read after that write is the one to show).
func (h *Hub) read(f *flight) {
	ctx, cancel := context.WithTimeout(h.ctx, loadTimeout)
	defer cancel()
	if h.unchanged(ctx, f) {
		return
	}
	wb, err := h.store.Load(ctx)
	if err != nil {
		h.log.Warn("reading the sheet failed", "err", err)
	}
	f.p = tui.Prepare(wb, err)
	h.mu.Lock()
	if h.flight == f {
		h.flight = nil
	}
	if f.gen > h.writeGen && f.gen > h.pushed {
		h.pushed = f.gen
		if err == nil {
			h.cache, h.cacheGen, h.cachedAt = f.p, f.gen, h.now()
		}
		for s := range h.sessions {
			s.push(f.p)
		}
	}
	h.mu.Unlock()
	close(f.done)
}

// unchanged ends flight f with the cache when the store says nothing changed since the
// cache's read and no write of ours landed since (store.ChangeChecker, which both stores
// keep): the change check instead of a full read. It reports whether it did.
func (h *Hub) unchanged(ctx context.Context, f *flight) bool {
	cc, ok := h.store.(store.ChangeChecker)
	if !ok {
		return false
	}
	h.mu.Lock()
	p := h.cache
	fresh := p != nil && h.cacheGen > h.writeGen
	h.mu.Unlock()
	if !fresh {
		return false
	}
	changed, err := cc.Changed(ctx)
	if err != nil {
		h.log.Warn("checking the sheet for changes failed; reading it whole", "err", err)
		return false
	}
	if changed {
		return false
	}
	h.mu.Lock()
	if f.gen <= h.writeGen {
		// A write landed during the check: the read after it is the one to show.
		h.mu.Unlock()
		return false
	}
	h.cacheGen, h.cachedAt = f.gen, h.now()
	if h.flight == f {
		h.flight = nil
	}
	f.p = p
	h.mu.Unlock()
	close(f.done)
	return true
}

// wrote records that a write landed: reads started before it no longer count as fresh.
func (h *Hub) wrote() {
	h.mu.Lock()
	h.gen++
	h.writeGen = h.gen
	h.mu.Unlock()
}

// Sessions is how many sessions are open.
func (h *Hub) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// tabKey is how tabs are told apart (Sheets titles are unique regardless of case).
func tabKey(name string) string { return strings.ToLower(strings.TrimSpace(name)) }
