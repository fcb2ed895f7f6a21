package replay_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/replaytest"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/sheetstest"
	"google.golang.org/api/option"
	sheetsapi "google.golang.org/api/sheets/v4"
)

// The store-level adversary (sheets/adversary_test.go), end to end: replay.Run through the
// real sheets.Store on the emulator over HTTP, to the reference receiver over HTTP, while
// another editor moves rows and the answers of some of the store's writes are lost.
//
// Each case (one seed) builds a failed_calls tab of 20-60 rows of source crm: about half hold
// their key in the key cell, the others have none (Run mints it from the row's content and
// writes it before the row's first request: invariant 3); a few are not waiting (delivered,
// rejected, discarded) and must never be sent; and some rows of the other editor's (source
// "other", which no url_prefixes allow) sit among them. The receiver rejects about a third
// of the keys (410, 413 or 451, which the rest preset's outcome table classifies as rejected, on every
// attempt), answers 503 to the first attempt of some others, and accepts the rest, acting
// once per key.
//
// While the first run writes (the pre-send check and the write-backs, batched every 4-16
// rows), the other editor (the emulator's hook, before any Sheets request) sorts the tab by a
// random column either way, inserts rows of its own (some holding a key, a status, an error
// or attempts as a number), and deletes rows of its own; never a fixture row. In "storm" cases
// it also inserts a row before every spreadsheets.batchUpdate. Up to two of the store's
// batchUpdates (writes and fences alike) are applied with their answer lost: the connection
// dropped, or a 503 after the write.
//
// After the first run (each wrong cell saying whether the store reported it as
// model.Damage):
//
//	(a) no payload was sent under two keys, and every attempt carried its own row's key
//	    (the key cell's, or the key minted from the row's content);
//	(b) a key the receiver rejected is never marked delivered, one it accepted is never
//	    marked rejected (and a row marked either was sent and so answered);
//	(c) every key cell holds its original key or, where it was empty, nothing or the key
//	    minted from its own row's content, the very key the receiver saw for that payload
//	    (never another row's); the cells triage never writes are as they were;
//	(d) the other editor's rows are exactly as it made them (values and types), each once,
//	    and no row is no one's.
//
// Then the same replay runs again on a fresh load, as cron would, with no other editor and no
// lost answer: across both runs still no payload under two keys, the receiver acted once per
// accepted key (on its own payload) and never for a rejected one, nothing marked delivered or
// rejected after the first run is sent again, and every fixture row ends as its receiver
// answered, with its own key.
//
// One source lane of width 1 makes every case deterministic: rows finish in plan order, so
// the write-back batches, and with them the Sheets requests and the other editor's moves
// (drawn from the seed only in the hook), are the same on every run. The store's retry sleep
// is a no-op and no fault of the receiver depends on time.
//
// CI runs 40 cases; TRIAGE_REPLAY_ADVERSARY_CASES=1000 runs more, and
// TRIAGE_REPLAY_ADVERSARY_SEED=N runs the one case N (with its step-by-step log on -v).
func TestReplayUnderAdversaryEndToEnd(t *testing.T) {
	cases := 40
	if testing.Short() {
		cases = 10
	}
	if n, err := strconv.Atoi(os.Getenv("TRIAGE_REPLAY_ADVERSARY_CASES")); err == nil && n > 0 {
		cases = n
	}
	seeds := make([]int, cases)
	for i := range seeds {
		seeds[i] = i
	}
	only := os.Getenv("TRIAGE_REPLAY_ADVERSARY_SEED")
	if only != "" {
		n, err := strconv.Atoi(only)
		if err != nil {
			t.Fatalf("TRIAGE_REPLAY_ADVERSARY_SEED=%q: %v", only, err)
		}
		seeds = []int{n}
	}
	stats := map[string]int{}
	var failed []int
	for _, seed := range seeds {
		ok := t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			advCase(t, seed, stats, only != "")
		})
		if !ok {
			failed = append(failed, seed)
		}
	}
	t.Logf("%d cases, %d failed %v: %s", len(seeds), len(failed), failed, advStats(stats))
	if len(seeds) >= 40 && only == "" {
		for _, k := range []string{"mode:storm", "mode:moves", "move:sort", "move:insert", "move:delete", "lost:drop", "lost:503-after",
			"run1:delivered", "run1:rejected", "run1:minted-key-sent", "run2:resent-after-lost-write-back"} {
			if stats[k] == 0 {
				t.Errorf("no case exercised %q", k)
			}
		}
	}
}

// advStats prints the counters sorted by name.
func advStats(m map[string]int) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "\n  %-40s %d", k, m[k])
	}
	return b.String()
}

const (
	advID       = "replay-adversary"
	advSource   = "crm"
	advCRM      = "http://crm.test"
	advOther    = "other"
	advOtherURL = "https://other.example/in"
)

// Receiver behaviour of a fixture row's key.
const (
	advOK      = "ok"       // accepted at once
	adv503Once = "503-once" // 503, then accepted
	advReject  = "reject"   // a rejecting 4xx on every attempt
)

// advRow is one fixture row and what must become of it.
type advRow struct {
	r       row
	key     string // its own key: the key cell's, or minted from its content
	minted  bool   // the key cell was empty at the start
	waiting bool   // dead or blank: replayed; else never sent, never written
	fault   string
	code    int // the rejecting status, for advReject
}

// advCell is a cell as text, typed: "n:" a number, "b:" a bool, "s:" text.
func advCell(v any) string {
	s := model.CellString(v)
	switch v.(type) {
	case float64:
		return "n:" + s
	case bool:
		return "b:" + s
	}
	return "s:" + s
}

// advRows reads a tab as rows by header (empty cells left out), typed (advCell), with their
// 1-based sheet rows; blank rows are left out.
func advRows(cells [][]any) (rows []map[string]string, at []int) {
	if len(cells) == 0 {
		return nil, nil
	}
	header := make([]string, len(cells[0]))
	for i, h := range cells[0] {
		header[i] = model.CellString(h)
	}
	for r, raw := range cells[1:] {
		m := advContent(header, raw)
		if len(m) > 0 {
			rows, at = append(rows, m), append(at, r+2)
		}
	}
	return rows, at
}

func advContent(header []string, raw []any) map[string]string {
	m := map[string]string{}
	for c, v := range raw {
		if c < len(header) && model.CellString(v) != "" {
			m[header[c]] = advCell(v)
		}
	}
	return m
}

// advText is a typed cell's text.
func advText(m map[string]string, h string) string {
	v := m[h]
	if len(v) >= 2 && v[1] == ':' {
		return v[2:]
	}
	return v
}

// advEditor is the other editor of one case, and the test's record of its rows.
type advEditor struct {
	t    *testing.T
	emu  *sheetstest.Emulator
	rng  *rand.Rand
	seed int

	mu     sync.Mutex
	on     bool
	storm  bool
	lostAt map[int]string // ordinal of a spreadsheets.batchUpdate while on → "drop" or "503"
	writes int
	reqs   int
	// rows are its rows on the sheet, by payload → content (typed); made counts every row it
	// ever made.
	rows  map[string]map[string]string
	made  int
	log   []string
	stats map[string]int
}

func (e *advEditor) logf(format string, a ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.log = append(e.log, fmt.Sprintf(format, a...))
}

// count adds to a counter of the case (the hook's goroutines count too).
func (e *advEditor) count(k string, n int) {
	e.mu.Lock()
	e.stats[k] += n
	e.mu.Unlock()
}

func (e *advEditor) setOn(on bool) {
	e.mu.Lock()
	e.on = on
	e.mu.Unlock()
}

func (e *advEditor) cells() [][]any { return e.emu.Cells(advID, e2eTab) }

// hook runs before every Sheets request triage sends: a lost answer for it, the storm's
// insert before a write, and with odds 1 in 3 one or two moves.
func (e *advEditor) hook(r sheetstest.Request) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.on {
		return
	}
	e.reqs++
	what := fmt.Sprintf("before request %d (%s", e.reqs, r.Method)
	if r.Method == sheetstest.MethodBatchUpdate {
		e.writes++
		what += fmt.Sprintf(" #%d", e.writes)
		switch e.lostAt[e.writes] {
		case "drop":
			e.emu.InjectFault(sheetstest.Fault{Method: sheetstest.MethodBatchUpdate, Drop: true})
			e.log = append(e.log, fmt.Sprintf("  batchUpdate #%d: applied, its answer dropped", e.writes))
			e.stats["lost:drop"]++
		case "503":
			e.emu.InjectFault(sheetstest.Fault{Method: sheetstest.MethodBatchUpdate, Status: http.StatusServiceUnavailable, After: true})
			e.log = append(e.log, fmt.Sprintf("  batchUpdate #%d: applied, answered 503", e.writes))
			e.stats["lost:503-after"]++
		}
	}
	what += ")"
	if e.storm && r.Method == sheetstest.MethodBatchUpdate {
		e.insert(what+", storm", 1)
	}
	if e.rng.IntN(3) != 0 {
		return
	}
	for range 1 + e.rng.IntN(2) {
		e.move(what)
	}
}

// move is one change of the other editor's; call with e.mu held.
func (e *advEditor) move(what string) {
	cells := e.cells()
	switch x := e.rng.IntN(10); {
	case x < 4:
		col, desc := e.rng.IntN(len(cells[0])), e.rng.IntN(2) == 0
		if err := e.emu.SortRows(advID, e2eTab, col, desc); err != nil {
			e.t.Error(err)
		}
		dir := "ascending"
		if desc {
			dir = "descending"
		}
		e.log = append(e.log, fmt.Sprintf("  %s: sort by %s %s", what, model.CellString(cells[0][col]), dir))
		e.stats["move:sort"]++
	case x < 7:
		e.insert(what, 1+e.rng.IntN(2))
	default:
		e.deleteOwn(what, cells)
	}
}

// insert puts n rows of its own at a random place; call with e.mu held.
func (e *advEditor) insert(what string, n int) {
	cells := e.cells()
	at := 2 + e.rng.IntN(len(cells))
	var add [][]any
	var names []string
	for range n {
		r := e.newRow()
		add = append(add, r)
		names = append(names, model.CellString(r[3]))
	}
	if err := e.emu.InsertRows(advID, e2eTab, at, add); err != nil {
		e.t.Error(err)
		return
	}
	e.log = append(e.log, fmt.Sprintf("  %s: insert at row %d %s", what, at, strings.Join(names, " ")))
	e.stats["move:insert"]++
}

// deleteOwn deletes one of its own rows, found by payload (triage never writes it); call
// with e.mu held.
func (e *advEditor) deleteOwn(what string, cells [][]any) {
	var own []int
	for r := 1; r < len(cells); r++ {
		if len(cells[r]) > 3 && model.CellString(cells[r][1]) == advOther {
			if _, ok := e.rows[model.CellString(cells[r][3])]; ok {
				own = append(own, r)
			}
		}
	}
	if len(own) == 0 {
		return
	}
	r := own[e.rng.IntN(len(own))]
	p := model.CellString(cells[r][3])
	if err := e.emu.DeleteRow(advID, e2eTab, r+1); err != nil {
		e.t.Error(err)
		return
	}
	delete(e.rows, p)
	e.log = append(e.log, fmt.Sprintf("  %s: delete row %d %s", what, r+1, p))
	e.stats["move:delete"]++
}

// newRow is a fresh row of the other editor's, remembered: its own payload and timestamp,
// sometimes a key, a status, an error, attempts (a number) or replayed_at, so that a write of
// triage's that hits it overwrites something (and must put it back exactly). Call with e.mu
// held.
func (e *advEditor) newRow() []any {
	e.made++
	r := make([]any, len(dlHeader))
	r[0] = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(e.rng.IntN(60*24*60)) * time.Minute).Format(time.RFC3339)
	r[1] = advOther
	r[2] = advOtherURL
	r[3] = fmt.Sprintf(`{"other":%d,"seed":%d}`, e.made, e.seed)
	if e.rng.IntN(3) == 0 {
		r[cError] = "boom"
	}
	if e.rng.IntN(2) == 0 {
		r[cAttempts] = float64(1 + e.rng.IntN(3))
	}
	if e.rng.IntN(2) == 0 {
		r[cKey] = fmt.Sprintf("kf-%d-%d", e.seed, e.made)
	}
	r[cStatus] = []any{nil, "dead", "discarded", "delivered"}[e.rng.IntN(4)]
	if e.rng.IntN(4) == 0 {
		r[cReplayedAt] = "2026-02-02T00:00:00Z"
	}
	e.rows[model.CellString(r[3])] = advContent(dlHeader, r)
	return r
}

// advStore is the store Run writes through: it logs every Apply's outcome and keeps them.
type advStore struct {
	st    replay.Store
	ed    *advEditor
	run   string
	mu    sync.Mutex
	calls []advApply
}

type advApply struct {
	edits []model.Edit
	res   model.ApplyResult
	err   error
}

func (s *advStore) Apply(ctx context.Context, edits []model.Edit) (model.ApplyResult, error) {
	s.mu.Lock()
	n := len(s.calls) + 1
	s.mu.Unlock()
	s.ed.logf("%s: Apply %d (%d edits) starts", s.run, n, len(edits))
	res, err := s.st.Apply(ctx, edits)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: Apply %d: %d applied, %d conflicts, %d missing, %d damaged", s.run, n, len(res.Applied), len(res.Conflicts), len(res.Missing), len(res.Damaged))
	for i, c := range res.Conflicts {
		if i == 3 {
			fmt.Fprintf(&b, "\n    ... %d more conflicts", len(res.Conflicts)-3)
			break
		}
		fmt.Fprintf(&b, "\n    conflict: %s", c.String())
	}
	for _, m := range res.Missing {
		fmt.Fprintf(&b, "\n    missing: %s", m.ID)
	}
	for _, d := range res.Damaged {
		fmt.Fprintf(&b, "\n    damage: %s", d.String())
	}
	if err != nil {
		fmt.Fprintf(&b, "\n    error: %v", err)
	}
	s.ed.logf("%s", b.String())
	s.mu.Lock()
	s.calls = append(s.calls, advApply{edits: slices.Clone(edits), res: res, err: err})
	s.mu.Unlock()
	return res, err
}

// advCase is one seed.
func advCase(t *testing.T, seed int, stats map[string]int, verbose bool) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0xad7e))
	ctx := context.Background()

	// The receiver: per-key faults, decided below before any request.
	faults := map[string]advRow{}
	rcv := replaytest.NewReceiver()
	rcv.Rule = func(key string, n int) (replaytest.Fault, bool) {
		fr, ok := faults[key]
		switch {
		case !ok:
		case fr.fault == advReject:
			return replaytest.Fault{Mode: replaytest.Status, Status: fr.code}, true
		case fr.fault == adv503Once && n == 1:
			return replaytest.Fault{Mode: replaytest.Unavailable}, true
		}
		return replaytest.Fault{}, false
	}
	srv := serve(t, rcv)
	// The rows name the receiver by a fixed host (a minted key hashes the url, and the other
	// editor may sort by the key or url column: the case must not depend on the port); every
	// connection goes to the receiver's socket.
	url := advCRM + "/crm/hook"
	var dialer net.Dialer
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return dialer.DialContext(ctx, network, srv.Listener.Addr().String())
	}}
	t.Cleanup(tr.CloseIdleConnections)

	// The fixture.
	tc := dlConfig
	hm, err := model.MapHeaders(tc, dlHeader)
	if err != nil {
		t.Fatal(err)
	}
	n := 20 + rng.IntN(41)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var fixture []*advRow
	byPayload := map[string]*advRow{}
	byKey := map[string]*advRow{}
	for i := range n {
		r := row{
			ts:       base.Add(time.Duration(rng.IntN(60*24*60)) * time.Minute).Format(time.RFC3339),
			source:   advSource,
			url:      url,
			payload:  fmt.Sprintf(`{"order":%d,"seed":%d,"amount":%d}`, i, seed, rng.IntN(1000)),
			attempts: strconv.Itoa(rng.IntN(3)),
			status:   []string{"dead", "dead", ""}[rng.IntN(3)],
		}
		fr := &advRow{waiting: true}
		if rng.IntN(2) == 0 {
			r.key = fmt.Sprintf("k-%d-%d", seed, i)
		} else {
			fr.minted = true
		}
		if rng.IntN(10) == 0 {
			fr.waiting = false
			if fr.minted {
				r.key, fr.minted = r.minted(), false
			}
			switch rng.IntN(3) {
			case 0:
				r.status = "delivered"
			case 1:
				r.status, r.errText = "rejected", "410 from crm: rejected"
			default:
				r.status = "discarded"
			}
		}
		key, _, problem := model.EffectiveKey(tc, hm, r.cells())
		if problem != "" {
			t.Fatalf("fixture row %d: %s", i, problem)
		}
		fr.r, fr.key = r, key
		if fr.waiting {
			switch x := rng.IntN(12); {
			case x < 4:
				fr.fault, fr.code = advReject, []int{http.StatusGone, http.StatusRequestEntityTooLarge, http.StatusUnavailableForLegalReasons}[rng.IntN(3)]
			case x < 6:
				fr.fault = adv503Once
			default:
				fr.fault = advOK
			}
			faults[key] = *fr
		}
		if byPayload[r.payload] != nil || byKey[key] != nil {
			t.Fatalf("fixture: payload or key twice: %s", r.payload)
		}
		byPayload[r.payload], byKey[key] = fr, fr
		fixture = append(fixture, fr)
	}

	ed := &advEditor{t: t, rng: rng, seed: seed, rows: map[string]map[string]string{}, lostAt: map[int]string{}, stats: map[string]int{}}
	grid := [][]any{anyRow(dlHeader)}
	for _, fr := range fixture {
		if rng.IntN(8) == 0 {
			grid = append(grid, ed.newRow())
		}
		cells := fr.r.cells()
		out := make([]any, len(cells))
		for i, c := range cells {
			if c != "" {
				out[i] = c
			}
		}
		grid = append(grid, out)
	}

	// The sheet: the emulator behind a real server, the real store over it, retry sleeps a
	// no-op.
	emu := sheetstest.New()
	emu.AddWorkbook(&sheetstest.Workbook{SpreadsheetID: advID, Title: "Replay adversary", TimeZone: "Etc/UTC",
		Sheets: []*sheetstest.Sheet{{Title: e2eTab, Rows: grid, RowCount: len(grid) + 10}}})
	ssrv := httptest.NewServer(emu)
	t.Cleanup(ssrv.Close)
	svc, err := sheetsapi.NewService(ctx, option.WithEndpoint(ssrv.URL+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatalf("sheets service: %v", err)
	}
	st := sheets.New(ctx, svc, sheets.Options{SpreadsheetID: advID, Tabs: []model.TabConfig{tc},
		Retry: sheets.RetryPolicy{Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }}})
	ed.emu = emu
	load := func() *model.Table {
		t.Helper()
		wb, err := st.Load(ctx)
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		tab := wb.Tab(model.RoleDeadLetter)
		if tab == nil {
			t.Fatalf("no dead-letter tab: missing %v broken %v", wb.Missing, wb.Broken)
		}
		return tab
	}

	// The case's adversary.
	ed.storm = seed%4 == 3 // one case in four
	fe := 4 + rng.IntN(13)
	for range rng.IntN(3) {
		ed.lostAt[1+rng.IntN(3+n/fe)] = []string{"drop", "503"}[rng.IntN(2)]
	}
	mode := "moves"
	if ed.storm {
		mode = "storm"
	}
	ed.count("mode:"+mode, 1)
	lost := slices.Sorted(maps.Keys(ed.lostAt))
	var lostText []string
	for _, w := range lost {
		lostText = append(lostText, fmt.Sprintf("#%d %s", w, ed.lostAt[w]))
	}
	waitingN := 0
	for _, fr := range fixture {
		if fr.waiting {
			waitingN++
		}
	}
	ed.logf("seed %d: %d fixture rows (%d waiting), %d rows of the other editor's, mode %s, flush every %d, lost answers of batchUpdates %v",
		seed, n, waitingN, len(ed.rows), mode, fe, lostText)
	for i, fr := range fixture {
		ed.logf("  fixture %d: key %s (minted %v), status %q, waiting %v, receiver %s %d, payload %s", i, fr.key, fr.minted, fr.r.status, fr.waiting, fr.fault, fr.code, fr.r.payload)
	}
	defer func() {
		ed.mu.Lock()
		defer ed.mu.Unlock()
		if t.Failed() {
			ed.stats["failed:"+mode]++
		}
		for k, v := range ed.stats {
			stats[k] += v
		}
		h := fnv.New64a()
		for _, l := range ed.log {
			h.Write([]byte(l))
			h.Write([]byte{'\n'})
		}
		if t.Failed() || verbose {
			t.Logf("seed %d, step by step (rerun with TRIAGE_REPLAY_ADVERSARY_SEED=%d):\n%s", seed, seed, strings.Join(ed.log, "\n"))
		}
		t.Logf("seed %d: mode %s, %d rows, lost %v, fingerprint %016x", seed, mode, n, lostText, h.Sum64())
	}()

	crm := &replay.Source{Name: advSource, URLPrefixes: []string{advCRM + "/crm/"}, MaxAttempts: 3, Concurrency: 1}
	c := fastClient(crm)
	c.HTTP = &http.Client{Transport: tr}
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	c.Now = func() time.Time { return now }
	opts := replay.RunOptions{Concurrency: 4, FlushEvery: fe, FlushInterval: time.Hour}

	// The first run, under the adversary.
	tab := load()
	ed.setOn(true)
	if rng.IntN(2) == 0 {
		ed.mu.Lock()
		ed.move("between the load and the run")
		ed.mu.Unlock()
	}
	emu.SetHook(ed.hook)
	rec1 := &advStore{st: st, ed: ed, run: "run 1"}
	sum1 := replay.Run(ctx, c, rec1, tab, records(tab), opts)
	emu.SetHook(nil)
	ed.setOn(false)
	emu.ClearFaults()
	ed.logf("run 1: %v; halted %v; %d write requests; write conflicts %d; write errors %q", sum1.Counts, sum1.Halted, sum1.WriteRequests, len(sum1.WriteConflicts), sum1.WriteErrors)
	for _, rf := range sum1.Refused {
		if !rf.Skipped && !strings.Contains(rf.Reason, `source "other" is not configured`) {
			ed.logf("run 1: refused %s", rf.Reason)
			ed.count("run1:refused-at-check", 1)
		}
	}
	ed.count("run1:write-conflicts", len(sum1.WriteConflicts))
	ed.count("run1:write-errors", len(sum1.WriteErrors))
	for _, call := range rec1.calls {
		ed.count("run1:damaged-cells", len(call.res.Damaged))
		if call.err != nil {
			ed.count("run1:apply-errors", 1)
		}
	}
	if sum1.Halted != nil {
		t.Errorf("run 1 halted: %v (no answer of the receiver is systemic, and every retryable one is followed by an acceptance)", sum1.Halted)
	}
	after1 := ed.cells()
	advCheckRun1(t, sum1, byKey)
	advCheckReceiver(t, "run 1", rcv.Attempts(), byPayload)
	var dmg advDamage
	dmg.add(rec1.calls)
	status1 := advCheckSheet(t, "after run 1", after1, rcv, fixture, byPayload, ed, dmg, false, now)
	for _, fr := range fixture {
		if !fr.waiting {
			continue
		}
		switch status1[fr.r.payload] {
		case "delivered":
			ed.count("run1:delivered", 1)
		case "rejected":
			ed.count("run1:rejected", 1)
		default:
			ed.count("run1:left-waiting", 1)
		}
	}
	sent1 := map[string]bool{}
	for _, a := range rcv.Attempts() {
		sent1[string(a.Body)] = true
	}
	for _, fr := range fixture {
		if fr.minted && sent1[fr.r.payload] {
			ed.count("run1:minted-key-sent", 1)
		}
	}

	// The rerun, as cron would: a fresh load, nobody else at the sheet, no lost answer.
	attemptsBefore := len(rcv.Attempts())
	tab = load()
	rec2 := &advStore{st: st, ed: ed, run: "run 2"}
	sum2 := replay.Run(ctx, c, rec2, tab, records(tab), opts)
	ed.logf("run 2: %v; halted %v; %d write requests; write conflicts %d; write errors %q", sum2.Counts, sum2.Halted, sum2.WriteRequests, len(sum2.WriteConflicts), sum2.WriteErrors)
	if sum2.Halted != nil || len(sum2.WriteConflicts) > 0 || len(sum2.WriteErrors) > 0 || len(sum2.NotAttempted) > 0 {
		t.Errorf("run 2 (nobody else at the sheet): halted %v, write conflicts %v, write errors %q, not attempted %v", sum2.Halted, sum2.WriteConflicts, sum2.WriteErrors, sum2.NotAttempted)
	}
	for _, call := range rec2.calls {
		if call.err != nil || len(call.res.Damaged) > 0 {
			t.Errorf("run 2: an Apply with nobody else at the sheet: err %v, damage %v", call.err, call.res.Damaged)
		}
	}
	for _, rf := range sum2.Refused {
		if !rf.Skipped && !strings.Contains(rf.Reason, `source "other" is not configured`) {
			t.Errorf("run 2 refused a row with nobody else at the sheet: %s", rf.Reason)
		}
	}
	attempts := rcv.Attempts()
	for _, a := range attempts[attemptsBefore:] {
		p := string(a.Body)
		switch s := status1[p]; s {
		case "delivered", "rejected":
			t.Errorf("run 2 sent payload %s (key %s) again, though the sheet said %s after run 1", p, a.Key, s)
		}
		if fr := byPayload[p]; fr != nil && !fr.waiting {
			continue // reported by advCheckReceiver
		}
		if fr := byPayload[p]; fr != nil && fr.fault != advReject && status1[p] != "delivered" && sent1[p] {
			ed.count("run2:resent-after-lost-write-back", 1)
		}
	}
	ed.count("run2:attempts", len(attempts)-attemptsBefore)
	advCheckReceiver(t, "both runs", attempts, byPayload)
	advCheckEffects(t, rcv, fixture)
	dmg.add(rec2.calls)
	advCheckSheet(t, "after run 2", ed.cells(), rcv, fixture, byPayload, ed, dmg, true, now)
}

// advCheckRun1: what the first run reports for each row it planned: its own key, and the
// state its receiver's answer gives.
func advCheckRun1(t *testing.T, sum model.ReplaySummary, byKey map[string]*advRow) {
	t.Helper()
	for _, r := range sum.Rows {
		fr := byKey[r.ID]
		if fr == nil {
			t.Errorf("run 1: a row result of %q (key %q), no fixture row's key", r.ID, r.Key)
			continue
		}
		if r.Key != fr.key {
			t.Errorf("run 1: row of payload %s carried key %q, its own is %q", fr.r.payload, r.Key, fr.key)
		}
		if !fr.waiting {
			t.Errorf("run 1: planned a row that is not waiting (%s): %s", fr.r.status, fr.key)
		}
		var want model.RowState
		switch fr.fault {
		case advReject:
			want = model.StateRejected
		default:
			want = model.StateDelivered
		}
		if r.State == model.StateRefused || r.State == model.StateNotAttempted {
			continue
		}
		if r.State != want && !(want == model.StateDelivered && r.State == model.StateDuplicate) {
			t.Errorf("run 1: row %s (%s): state %q after %d attempts (%s), want %q", fr.key, fr.fault, r.State, r.Attempts, r.Detail, want)
		}
	}
}

// advCheckReceiver: (a) every request carried its own row's key, came from a waiting fixture
// row, and no payload went out under two keys.
func advCheckReceiver(t *testing.T, when string, attempts []replaytest.RecordedAttempt, byPayload map[string]*advRow) {
	t.Helper()
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
		fr := byPayload[p]
		switch {
		case fr == nil:
			t.Errorf("%s: the receiver got a body that is no fixture row's payload: %.200q (key %q)", when, p, a.Key)
		case !fr.waiting:
			t.Errorf("%s: a row that is not waiting (%s) was sent: %s", when, fr.r.status, fr.key)
		case a.Key != fr.key:
			t.Errorf("%s: payload %s sent under key %q, its own is %q (minted %v)", when, p, a.Key, fr.key, fr.minted)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(keys)) {
		if ks := keys[p]; len(ks) > 1 {
			t.Errorf("%s: payload %s was sent under %d keys: %v", when, p, len(ks), slices.Sorted(maps.Keys(ks)))
		}
	}
}

// advCheckEffects: after both runs, the receiver acted once for every accepted key, on its
// own payload, and never for a rejected one or any other key.
func advCheckEffects(t *testing.T, rcv *replaytest.Receiver, fixture []*advRow) {
	t.Helper()
	eff := rcv.Effects()
	own := map[string]*advRow{}
	for _, fr := range fixture {
		own[fr.key] = fr
	}
	for _, k := range slices.Sorted(maps.Keys(eff)) {
		fr := own[k]
		switch {
		case fr == nil:
			t.Errorf("the receiver acted for key %q, no fixture row's", k)
		case eff[k] != 1:
			t.Errorf("the receiver acted %d times for key %q", eff[k], k)
		case fr.fault == advReject || !fr.waiting:
			t.Errorf("the receiver acted for key %q (%s, waiting %v)", k, fr.fault, fr.waiting)
		case string(rcv.EffectBody(k)) != fr.r.payload:
			t.Errorf("the receiver acted for key %q on %q, its row's payload is %q", k, rcv.EffectBody(k), fr.r.payload)
		}
	}
	for _, fr := range fixture {
		if fr.waiting && fr.fault != advReject && eff[fr.key] != 1 {
			t.Errorf("row %s (%s) was never accepted by the receiver after both runs", fr.key, fr.fault)
		}
	}
}

// advDamage is what the store reported it could not put back (model.Damage).
type advDamage []model.Damage

func (d *advDamage) add(calls []advApply) {
	for _, c := range calls {
		*d = append(*d, c.res.Damaged...)
	}
}

// note says whether a wrong cell (of the row whose identity is id, holding holds) is one the
// store reported: under that identity, or under another (a damaged row's identity is read
// from the row as triage left it, which may hold another value of triage's).
func (d advDamage) note(id, column, holds string) string {
	var other []string
	for _, dm := range d {
		if dm.Column != strconv.Quote(column) || dm.Ours != holds { // Column is the header quoted
			continue
		}
		if dm.ID == id {
			return " [reported by the store as damage]"
		}
		other = append(other, dm.ID)
	}
	if len(other) > 0 {
		return fmt.Sprintf(" [a damage of %s %q reported by the store under another identity: %q]", column, holds, other)
	}
	return " [NOT reported by the store]"
}

// advCheckSheet checks the sheet, row by row, and returns each fixture row's status by
// payload. Each wrong cell says whether the store reported it (model.Damage).
//
// Always: each fixture row is on the sheet once, the cells triage never writes as they were,
// its key cell its original key, or (minted) nothing or its own minted key, which it must hold
// if it was sent; a row marked delivered was accepted by the receiver, one marked rejected was
// rejected by it; a row not waiting is as it was (values and types). The other editor's rows
// are as it made them, each once; no row is no one's. final (after the quiet rerun): every
// waiting row ends as its receiver answered, with its own key, replayed_at and error.
func advCheckSheet(t *testing.T, when string, cells [][]any, rcv *replaytest.Receiver, fixture []*advRow, byPayload map[string]*advRow, ed *advEditor, dmg advDamage, final bool, now time.Time) map[string]string {
	t.Helper()
	hm, _ := model.MapHeaders(dlConfig, dlHeader)
	rows, at := advRows(cells)
	sent := map[string]bool{}
	answered := map[string]bool{} // payload → the receiver gave a final answer (not the 503)
	for _, a := range rcv.Attempts() {
		p := string(a.Body)
		sent[p] = true
		if fr := byPayload[p]; fr != nil && (fr.fault != adv503Once || a.Mode != replaytest.Unavailable) {
			answered[p] = true
		}
	}
	ed.mu.Lock()
	others := map[string]map[string]string{}
	for p, m := range ed.rows {
		others[p] = maps.Clone(m)
	}
	ed.mu.Unlock()
	status := map[string]string{}
	seen := map[string]int{}
	for j, r := range rows {
		p := advText(r, "payload")
		seen[p]++
		if want, ok := others[p]; ok {
			cells := make([]string, len(dlHeader))
			for c, h := range dlHeader {
				cells[c] = advText(want, h)
			}
			advSame(t, fmt.Sprintf("%s: row %d, the other editor's %s,", when, at[j], p), model.RowIdentity(dlConfig, hm, cells), want, r, dmg)
			continue
		}
		fr := byPayload[p]
		if fr == nil {
			t.Errorf("%s: row %d is no one's (no fixture row's, not the other editor's or one it deleted): %s", when, at[j], sortedMap(r))
			continue
		}
		what := fmt.Sprintf("%s: row %d (%s, payload %s)", when, at[j], fr.key, p)
		st := advText(r, "status")
		status[p] = st
		if !fr.waiting {
			want := map[string]string{}
			for c, v := range fr.r.cells() {
				if v != "" {
					want[dlHeader[c]] = "s:" + v
				}
			}
			advSame(t, what+", not waiting,", fr.key, want, r, dmg)
			continue
		}
		// The cells triage never writes.
		for c, h := range dlHeader {
			switch c {
			case cError, cAttempts, cKey, cStatus, cReplayedAt:
				continue
			}
			if v := fr.r.cells()[c]; advText(r, h) != v {
				t.Errorf("%s: %s = %q, was %q: triage never writes it%s", what, h, advText(r, h), v, dmg.note(fr.key, h, advText(r, h)))
			}
		}
		// (c) its own key.
		key := advText(r, "key")
		switch {
		case !fr.minted && key != fr.r.key:
			t.Errorf("%s: key cell %q, its key is %q%s", what, key, fr.r.key, dmg.note(fr.key, "key", key))
		case fr.minted && key != "" && key != fr.key:
			t.Errorf("%s: key cell %q, its minted key is %q%s", what, key, fr.key, dmg.note(fr.key, "key", key))
		case fr.minted && key == "" && (sent[p] || final):
			t.Errorf("%s: sent with its minted key, yet its key cell is empty%s", what, dmg.note(fr.key, "key", key))
		}
		// (b) the status as the receiver answered, or as it was.
		switch st {
		case "delivered":
			if fr.fault == advReject {
				t.Errorf("%s: marked delivered, but the receiver rejected its key (%d)%s", what, fr.code, dmg.note(fr.key, "status", st))
			} else if !answered[p] {
				t.Errorf("%s: marked delivered, but the receiver never accepted it%s", what, dmg.note(fr.key, "status", st))
			}
		case "rejected":
			if fr.fault != advReject {
				t.Errorf("%s: marked rejected, but the receiver accepted its key%s", what, dmg.note(fr.key, "status", st))
			} else if !answered[p] {
				t.Errorf("%s: marked rejected, but it was never sent%s", what, dmg.note(fr.key, "status", st))
			} else if e := advText(r, "error"); !strings.HasPrefix(e, strconv.Itoa(fr.code)+" ") {
				t.Errorf("%s: rejected with error %q, want the receiver's %d%s", what, e, fr.code, dmg.note(fr.key, "error", e))
			}
		case fr.r.status:
			if final {
				t.Errorf("%s: still %q after the quiet rerun (receiver: %s)", what, st, fr.fault)
			}
		default:
			t.Errorf("%s: status %q, was %q: neither, nor an outcome%s", what, st, fr.r.status, dmg.note(fr.key, "status", st))
		}
		if final && (st == "delivered" || st == "rejected") {
			if got := advText(r, "replayed_at"); got != model.FormatTime(now) {
				t.Errorf("%s: replayed_at %q%s", what, got, dmg.note(fr.key, "replayed_at", got))
			}
			if e := advText(r, "error"); st == "delivered" && e != "" {
				t.Errorf("%s: delivered with error %q%s", what, e, dmg.note(fr.key, "error", e))
			}
		}
	}
	for _, fr := range fixture {
		if seen[fr.r.payload] != 1 {
			t.Errorf("%s: fixture row %s is on the sheet %d times (nobody deletes or copies it)", when, fr.key, seen[fr.r.payload])
		}
	}
	for _, p := range slices.Sorted(maps.Keys(others)) {
		if seen[p] != 1 {
			t.Errorf("%s: the other editor's row %s is on the sheet %d times", when, p, seen[p])
		}
	}
	return status
}

// advSame reports each cell of a row that is not as it was: its text, or only its type (text
// "2" become the number 2: the same text, but not the cell it was).
func advSame(t *testing.T, what, id string, want, got map[string]string, dmg advDamage) {
	t.Helper()
	for _, k := range slices.Sorted(maps.Keys(mergeKeys(want, got))) {
		w, g := want[k], got[k]
		switch {
		case w == g:
		case advText(want, k) == advText(got, k):
			t.Errorf("%s %s cell: %s, was %s: same text, another type (a value of triage's that hit it was not put back exactly)%s", what, k, g, w, dmg.note(id, k, advText(got, k)))
		default:
			t.Errorf("%s %s = %q, was %q%s", what, k, advText(got, k), advText(want, k), dmg.note(id, k, advText(got, k)))
		}
	}
}

func mergeKeys(a, b map[string]string) map[string]bool {
	m := map[string]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return m
}
