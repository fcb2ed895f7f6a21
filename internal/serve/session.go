// A session: one person's store and replayer over the hub, where their role is enforced
// before anything is sent, and the channel the hub pushes workbooks to.

package serve

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/tui"
)

// Session is one person's share of the hub: what their TUI reads, writes and replays
// through, and the workbooks pushed to it. Close it when the session ends.
type Session struct {
	// Store reads through the hub (a refresh by anyone serves everyone) and writes through
	// the hub's store as this person, after checking their role.
	Store tui.Store
	// Replayer replays through the hub's replayer as this person, after checking their role
	// and that nobody else replays the same tab; nil when the hub has no replayer.
	Replayer tui.Replayer
	// Updates receives every workbook the hub reads; it holds the newest only, so a slow
	// session skips intermediate ones. It starts with the hub's cached workbook, if any, and
	// is closed by Close.
	Updates <-chan *tui.Prepared
	// Identity is who this is, for the header: "alice · operator".
	Identity string
	// ReadOnlyWhy says why the session can't write, "" when it can.
	ReadOnlyWhy string

	s *session
}

// session is the hub's side of a Session.
type session struct {
	h    *Hub
	u    User
	ch   chan *tui.Prepared
	runs chan struct{} // "the runs changed" (runs.go), closed by Close
	gone chan struct{} // closed by Close: watches waiting return
	once sync.Once
}

// Session opens a session for u: its store, replayer and updates channel.
func (h *Hub) Session(u User) *Session {
	s := &session{h: h, u: u, ch: make(chan *tui.Prepared, 1), runs: make(chan struct{}, 1), gone: make(chan struct{})}
	h.mu.Lock()
	h.sessions[s] = struct{}{}
	if h.cache != nil {
		s.ch <- h.cache // the first screen at once, without a read of its own
	}
	stale := h.stale
	h.stale = false
	h.mu.Unlock()
	if stale {
		// Refreshes were skipped while nobody looked: read now (pushed to every session), a
		// real read, as after a write: the change check (Drive's lagging version, or only the
		// rows after each tab's last) may not show what changed meanwhile.
		h.wrote()
		go h.load(h.ctx, 0)
	}
	out := &Session{
		Store:    &sessionStore{s: s},
		Updates:  s.ch,
		Identity: u.Name + " · " + string(u.Access),
		s:        s,
	}
	if h.replayer != nil {
		out.Replayer = &sessionReplayer{s: s}
	}
	switch {
	case !u.Access.CanWrite():
		out.ReadOnlyWhy = u.Name + " is a " + string(u.Access)
	case h.store.ReadOnly():
		out.ReadOnlyWhy = "the server opened the sheet read-only"
	}
	return out
}

// Options fills in base the parts of a TUI's options that come from the session: its store,
// replayer, updates, identity and role; no refresh of its own (the hub refreshes for everyone) and no
// Initial (the first push is the first screen).
func (s *Session) Options(base tui.Options) tui.Options {
	base.Store = s.Store
	if s.Replayer != nil {
		base.Replayer = s.Replayer
	}
	base.Updates = s.Updates
	base.Identity = s.Identity
	base.ReadOnlyWhy = s.ReadOnlyWhy
	// The role and name: the TUI offers only what the role allows and says which role a key
	// beyond it needs (the store and the replayer check it anyway).
	base.Access, base.User = s.s.u.Access, s.s.u.Name
	base.Refresh = 0
	base.Initial = nil
	return base
}

// Close ends the session: the hub stops pushing to it and its Updates channel closes. It
// can be called more than once.
func (s *Session) Close() {
	s.s.once.Do(func() {
		h := s.s.h
		h.mu.Lock()
		delete(h.sessions, s.s)
		close(s.s.ch)
		close(s.s.runs)
		close(s.s.gone)
		h.mu.Unlock()
	})
}

// push hands p to the session without waiting: a workbook it hasn't taken yet is replaced
// by the newer one. Called with h.mu held (so never after Close, and one pusher at a time).
func (s *session) push(p *tui.Prepared) {
	select {
	case <-s.ch:
	default:
	}
	s.ch <- p
}

// sessionStore is a session's tui.Store.
type sessionStore struct{ s *session }

var (
	_ tui.PreparedLoader  = (*sessionStore)(nil)
	_ tui.HistorySearcher = (*sessionStore)(nil)
)

// NeedsHistory answers for the hub's store when it searches history (a database: the open
// work is loaded, the rest searched, DESIGN §11); a store that loads every row (the sheet)
// never needs it.
func (st *sessionStore) NeedsHistory(tab string, q model.HistorySearch) bool {
	hs, ok := st.s.h.store.(tui.HistorySearcher)
	return ok && hs.NeedsHistory(tab, q)
}

// SearchHistory searches the hub's store for this person (read-only: anyone who may look may
// search). Only asked when NeedsHistory said yes.
func (st *sessionStore) SearchHistory(ctx context.Context, tab string, q model.HistorySearch) (*model.Table, error) {
	hs, ok := st.s.h.store.(tui.HistorySearcher)
	if !ok {
		return nil, fmt.Errorf("search history of %q: this store loads every row; nothing to search", tab)
	}
	return hs.SearchHistory(ctx, tab, q)
}

// Load is a refresh asked for by this person: the read in flight or a cache younger than
// freshFor (and newer than every write), else one real read, pushed to every session.
func (st *sessionStore) Load(ctx context.Context) (*model.Workbook, error) {
	p, err := st.LoadPrepared(ctx)
	if err != nil {
		return nil, err
	}
	return p.Workbook(), nil
}

// LoadPrepared is Load already prepared for display (shared with every session).
func (st *sessionStore) LoadPrepared(ctx context.Context) (*tui.Prepared, error) {
	p := st.s.h.load(ctx, freshFor)
	if err := p.Err(); err != nil {
		return nil, err
	}
	return p, nil
}

// ReadOnly is the hub's store's read-only, or a role that writes nothing.
func (st *sessionStore) ReadOnly() bool {
	return st.s.h.store.ReadOnly() || !st.s.u.Access.CanWrite()
}

// Apply checks every edit against the person's role first and refuses the whole batch,
// sending nothing, if one isn't theirs to make; else writes through the hub's store as this
// person (triaged_by), then reads the sheet once and pushes it to every session, so the
// change shows everywhere at once.
func (st *sessionStore) Apply(ctx context.Context, edits []model.Edit) (model.ApplyResult, error) {
	h, u := st.s.h, st.s.u
	op := fmt.Sprintf("write %d edit%s", len(edits), words.Plural(len(edits), "", "s"))
	for _, e := range edits {
		if why := refusedEdit(u.Access, e); why != "" {
			h.log.Warn("refused", "who", u.Name, "role", string(u.Access), "key", u.Key, "tab", e.Tab, "ids", editIDs(edits), "why", why)
			return model.ApplyResult{}, fmt.Errorf("%s: %w; nothing was written", op, &model.AccessError{Who: u.Name, Role: u.Access, Why: why})
		}
	}
	res, err := h.store.Apply(model.WithActor(ctx, u.Name), edits)
	if err != nil {
		h.log.Error("write failed", "who", u.Name, "tab", editTab(edits), "ids", editIDs(edits), "err", err)
	}
	for _, a := range res.Applied {
		for _, f := range setFields(a.Edit) {
			h.log.Info("change", "who", u.Name, "tab", a.Edit.Tab, "id", a.Edit.ID, "row", a.Row,
				"field", string(f), "old", a.Edit.Expect[f], "new", a.Edit.Set[f])
		}
	}
	for _, c := range res.Conflicts {
		h.log.Info("conflict", "who", u.Name, "tab", c.Edit.Tab, "id", c.Edit.ID, "why", c.String())
	}
	for _, e := range res.Missing {
		h.log.Info("gone", "who", u.Name, "tab", e.Tab, "id", e.ID)
	}
	// Even a failed write may have landed: everyone reads the sheet as it is now.
	h.wrote()
	h.load(ctx, 0)
	return res, err
}

// refusedEdit is why role a may not make edit e (model.Access.Check), said as a whole
// sentence naming the role that may: "only an operator can requeue a claimed job", "only a
// triager or an operator can change rows"; "" when it may.
func refusedEdit(a model.Access, e model.Edit) string {
	if a.Check(e) == "" {
		return ""
	}
	if model.AccessTriager.Check(e) == "" {
		return "only a triager or an operator can change rows"
	}
	// An operator's edit: the fields a triager may not write, else (each field alone is a
	// triager's) the claim it releases.
	var fields []string
	for _, f := range setFields(e) {
		if model.AccessTriager.Check(model.Edit{Tab: e.Tab, ID: e.ID, Set: map[model.Field]string{f: e.Set[f]}}) != "" {
			fields = append(fields, string(f))
		}
	}
	if len(fields) == 0 {
		return "only an operator can requeue a claimed job"
	}
	return "only an operator can write " + strings.Join(fields, ", ") + " (a triager sets statuses, clears sticky errors and discards)"
}

// setFields are the fields an edit writes, in order, one log line each.
func setFields(e model.Edit) []model.Field {
	fields := make([]model.Field, 0, len(e.Set))
	for f := range e.Set {
		fields = append(fields, f)
	}
	slices.Sort(fields)
	return fields
}

// editIDs lists the edits' IDs for a log line.
func editIDs(edits []model.Edit) string {
	ids := make([]string, len(edits))
	for i, e := range edits {
		ids[i] = e.ID
	}
	return strings.Join(ids, ",")
}

// editTab is the edits' tab (a TUI write is one tab's).
func editTab(edits []model.Edit) string {
	if len(edits) == 0 {
		return ""
	}
	return edits[0].Tab
}

// refuseAll refuses every record with the same reason.
func refuseAll(recs []*model.Record, why string) []model.Refusal {
	out := make([]model.Refusal, 0, len(recs))
	for _, rec := range recs {
		if rec != nil {
			out = append(out, model.Refusal{ID: rec.ID, Row: rec.Row, Reason: why})
		}
	}
	return out
}
