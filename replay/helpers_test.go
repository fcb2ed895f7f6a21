package replay_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
)

// dlHeader is the dead-letter header row the tests use.
var dlHeader = []string{"timestamp", "source", "url", "payload", "error", "attempts", "method", "key", "status", "replayed_at"}

// row is one dead-letter row to build.
type row struct {
	ts, source, url, payload, errText, attempts, method, key, status string
}

// defaultTS is the timestamp of rows that don't set one.
const defaultTS = "2026-01-01T10:00:00Z"

func (r row) cells() []string {
	return []string{r.timestamp(), r.source, r.url, r.payload, r.errText, r.attempts, r.method, r.key, r.status, ""}
}

func (r row) timestamp() string {
	if r.ts == "" {
		return defaultTS
	}
	return r.ts
}

// formKeys is dlConfig with the "form" source's key read from its payload's "id" field.
func formKeys() model.TabConfig {
	tc := dlConfig
	tc.BodyKeyFields = map[string]string{"form": "id"}
	return tc
}

// destination is a reference receiver behind a real server, and the URL of its hook.
func destination(t testing.TB) (*receiver.Receiver, *httptest.Server, string) {
	t.Helper()
	rcv := receiver.New()
	srv := serve(t, rcv)
	return rcv, srv, srv.URL + "/hook"
}

// checkSentUnderOwnKeys holds invariant 3 at the receiver: every attempt (echoes aside)
// carried a fixture row's payload (rowOf finds the row, its key and whether it was waiting),
// that row was waiting, and the attempt carried the row's own key; and no payload went out
// under two keys. Each problem goes to errorf.
func checkSentUnderOwnKeys(attempts []receiver.RecordedAttempt, rowOf func(payload string) (r *row, key string, waiting bool), errorf func(string, ...any)) {
	keys := map[string]map[string]bool{}
	for _, a := range attempts {
		if a.Echo {
			continue
		}
		p := string(a.Body)
		if keys[p] == nil {
			keys[p] = map[string]bool{}
		}
		keys[p][a.Key] = true
		r, key, waiting := rowOf(p)
		switch {
		case r == nil:
			errorf("the receiver got a body that is no fixture row's payload: %.200q (key %q)", p, a.Key)
		case !waiting:
			errorf("a row that is not waiting (%s) was sent: %s", r.status, key)
		case a.Key != key:
			errorf("payload %s sent under key %q, its own is %q (key cell %q)", p, a.Key, key, r.key)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(keys)) {
		if ks := keys[p]; len(ks) > 1 {
			errorf("payload %s was sent under %d keys: %v", p, len(ks), slices.Sorted(maps.Keys(ks)))
		}
	}
}

// crmDestination is destination with the crm source that sends there.
func crmDestination(t testing.TB) (*receiver.Receiver, *httptest.Server, *replay.Source) {
	t.Helper()
	rcv, srv, _ := destination(t)
	return rcv, srv, &replay.Source{Name: "crm", URLPrefixes: []string{srv.URL}}
}

// formDestination is a reference receiver behind a real server, the form source that sends
// there, and the URL of its hook.
func formDestination(t testing.TB) (*receiver.Receiver, *replay.Source, string) {
	t.Helper()
	rcv, srv, u := destination(t)
	return rcv, &replay.Source{Name: "form", URLPrefixes: []string{srv.URL}}, u
}

// ttlClient replays the crm source (srv) under a 24-hour key lifetime, its clock stopped at
// 2026-01-03 12:00 UTC.
func ttlClient(srv string) *replay.Client {
	c := fastClient(&replay.Source{Name: "crm", URLPrefixes: []string{srv}, KeyTTL: 24 * time.Hour})
	c.Now = func() time.Time { return time.Date(2026, 1, 3, 12, 0, 0, 0, time.UTC) }
	return c
}

// finishAtRandom gives the row, at random, an end state a run skips: delivered, rejected
// (with its error) or discarded.
func (r *row) finishAtRandom(rng *rand.Rand) {
	switch rng.IntN(3) {
	case 0:
		r.status = "delivered"
	case 1:
		r.status, r.errText = "rejected", "410 from crm: rejected"
	default:
		r.status = "discarded"
	}
}

// effectiveKey is the key a run sends fixture row i under, failing the test if it has none.
func effectiveKey(t testing.TB, tc model.TabConfig, hm model.HeaderMap, r row, i int) string {
	t.Helper()
	key, _, problem := model.EffectiveKey(tc, hm, r.cells())
	if problem != "" {
		t.Fatalf("fixture row %d: %s", i, problem)
	}
	return key
}

// minted is the key model mints for the row.
func (r row) minted() string { return model.MintKey(r.source, r.url, r.payload, r.timestamp()) }

// memStore is an in-memory dead-letter tab that writes the way sheets.Store does: each edit's
// row is located by identity (model.RowIdentity) at write time, an Expect that no longer holds
// is a conflict, a vanished identity is Missing.
type memStore struct {
	mu      sync.Mutex
	tc      model.TabConfig
	rows    [][]string // rows[0] is the header
	applies int
	edits   [][]model.Edit
	fail    error // returned by every Apply when set (after the first failAfter)
	// failAfter is how many Applies succeed before fail applies (0: fail from the first).
	failAfter int
	onApply   func(edits []model.Edit)
}

func newMemStore(tc model.TabConfig, rows []row) *memStore {
	m := &memStore{tc: tc, rows: [][]string{append([]string(nil), dlHeader...)}}
	for _, r := range rows {
		m.rows = append(m.rows, r.cells())
	}
	return m
}

// table decodes the tab as a Load would.
func (m *memStore) table(t testing.TB) *model.Table {
	m.mu.Lock()
	defer m.mu.Unlock()
	raw := make([][]any, len(m.rows))
	for i, r := range m.rows {
		raw[i] = make([]any, len(r))
		for j, c := range r {
			raw[i][j] = c
		}
	}
	tab, err := model.Decode(m.tc, raw, time.UTC)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return tab
}

func (m *memStore) hm() model.HeaderMap {
	hm, _ := model.MapHeaders(m.tc, m.rows[0])
	return hm
}

// cell returns a field of the row whose identity is id.
func (m *memStore) cell(id string, f model.Field) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	hm := m.hm()
	for _, r := range m.rows[1:] {
		if model.RowIdentity(m.tc, hm, r) == id {
			return r[hm.Col(f)], true
		}
	}
	return "", false
}

// rowAt returns the cells of data row i (0-based).
func (m *memStore) rowAt(i int) map[model.Field]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	hm := m.hm()
	out := map[model.Field]string{}
	for f, c := range hm.Index {
		out[f] = m.rows[i+1][c]
	}
	return out
}

func (m *memStore) applyCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.applies
}

func (m *memStore) Apply(ctx context.Context, edits []model.Edit) (model.ApplyResult, error) {
	if m.onApply != nil {
		m.onApply(edits)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.applies++
	m.edits = append(m.edits, edits)
	if m.fail != nil && m.applies > m.failAfter {
		return model.ApplyResult{}, m.fail
	}
	hm := m.hm()
	var res model.ApplyResult
	for _, e := range edits {
		idx := -1
		for i, r := range m.rows[1:] {
			if model.RowIdentity(m.tc, hm, r) == e.ID {
				idx = i + 1
				break
			}
		}
		if idx < 0 {
			res.Missing = append(res.Missing, e)
			continue
		}
		r := m.rows[idx]
		conflict := false
		for f, want := range e.Expect {
			if c := hm.Col(f); c >= 0 && r[c] != want {
				res.Conflicts = append(res.Conflicts, model.Conflict{Edit: e, Row: idx + 1, Field: f, Saw: want, Now: r[c]})
				conflict = true
				break
			}
		}
		if conflict {
			continue
		}
		for f, v := range e.Set {
			if c := hm.Col(f); c >= 0 {
				r[c] = v
			}
		}
		res.Applied = append(res.Applied, model.Applied{Edit: e, Row: idx + 1})
	}
	return res, nil
}

// setCell changes data row i's (0-based) cell in column c, as another user would.
func (m *memStore) setCell(i, c int, v string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rows[i+1][c] = v
}

// keyWrites counts the edits that write a new value to a key cell (the keys saved before
// sending); the check edits write the key cell back as it was.
func keyWrites(edits []model.Edit) int {
	n := 0
	for _, e := range edits {
		if v, ok := e.Set[model.FKey]; ok && v != e.Expect[model.FKey] {
			n++
		}
	}
	return n
}

// records returns pointers to every record of a table.
func records(t *model.Table) []*model.Record {
	out := make([]*model.Record, len(t.Records))
	for i := range t.Records {
		out[i] = &t.Records[i]
	}
	return out
}

// serve starts a real-socket server for h, closed (after its handlers finish) at cleanup.
func serve(t testing.TB, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// fastClient returns a client with tiny backoff for real-socket tests.
func fastClient(sources ...*replay.Source) *replay.Client {
	m := map[string]*replay.Source{}
	for _, s := range sources {
		m[s.Name] = s
	}
	return &replay.Client{Sources: m, Base: 2 * time.Millisecond, Cap: 20 * time.Millisecond,
		Getenv: func(string) string { return "" }}
}

// payload returns a JSON payload for row i.
func payload(i int) string {
	return fmt.Sprintf(`{"order":%d, "note":"row %d ünïcode"}`, i, i)
}

// keyRows builds n dead rows of one source, each with its key in the key cell.
func keyRows(n int, source, url string) []row {
	rows := make([]row, n)
	for i := range rows {
		rows[i] = row{source: source, url: url, payload: payload(i), key: "k-" + strconv.Itoa(i), attempts: "1", status: "dead"}
	}
	return rows
}

// attemptsByKey groups a receiver's non-echo requests by key.
func attemptsByKey(rc *receiver.Receiver) map[string][]receiver.RecordedAttempt {
	out := map[string][]receiver.RecordedAttempt{}
	for _, a := range rc.Attempts() {
		if !a.Echo {
			out[a.Key] = append(out[a.Key], a)
		}
	}
	return out
}

// probeCheck stands in front of a source's destination and tells the requests its probe sends
// (those that arrive before the destination has answered one with success) from the rest:
// those are served by first, and each must be the only one unanswered when it arrives
// (Overlaps counts those that were not); every later request goes to then. A request counts
// as answered from the moment its answer starts (WriteHeader), before the client can have
// it, so an overlap seen here was one in the client too.
type probeCheck struct {
	first, then http.Handler

	mu         sync.Mutex
	opened     bool // a success was answered
	unanswered int  // probe requests arrived and not yet answered
	probes     int
	overlaps   int
}

func (p *probeCheck) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	if p.opened {
		p.mu.Unlock()
		p.then.ServeHTTP(w, r)
		return
	}
	p.probes++
	if p.unanswered > 0 {
		p.overlaps++
	}
	p.unanswered++
	p.mu.Unlock()
	pw := &probeWriter{ResponseWriter: w, p: p}
	defer pw.answered(0)
	p.first.ServeHTTP(pw, r)
}

// Probes is how many requests arrived before the first success was answered (that one
// included); Overlaps how many of them found another unanswered.
func (p *probeCheck) Probes() (probes, overlaps int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.probes, p.overlaps
}

// probeWriter is a probe request's ResponseWriter: it tells its probeCheck when the answer
// starts, and whether it is a success.
type probeWriter struct {
	http.ResponseWriter
	p    *probeCheck
	done bool
}

func (w *probeWriter) answered(code int) {
	if w.done {
		return
	}
	w.done = true
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	w.p.unanswered--
	if code >= 200 && code < 300 {
		w.p.opened = true
	}
}

func (w *probeWriter) WriteHeader(code int) {
	w.answered(code)
	w.ResponseWriter.WriteHeader(code)
}

func (w *probeWriter) Write(b []byte) (int, error) {
	w.answered(http.StatusOK)
	return w.ResponseWriter.Write(b)
}
