package replay_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
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
// When rows never stop moving, a write may end with values of triage's it could not put back
// (model.Damage). Those, and only those, may be wrong after the first run: a wrong cell is not
// a failure when the store reported it under its row's identity (column and triage's value)
// and a visible damage sheet "triage: check failed_calls <time>" lists it. Every damaged cell
// of the results must be in the summary's WriteErrors and listed in a damage sheet, exactly;
// if the pre-send check itself reported damage, nothing was sent and every row was refused for
// it. A payload under two keys, or a row the sheet says is someone else's, stays a failure.
//
// Then the same replay runs again on a fresh load, as cron would, with no other editor and no
// lost answer. With no damage: across both runs still no payload under two keys, the receiver
// acted once per accepted key (on its own payload) and never for a rejected one, nothing
// marked delivered or rejected after the first run is sent again, and every fixture row ends
// as its receiver answered, with its own key. With damage, that run sends nothing and writes
// nothing, and each refusal names the damage sheet (or, made before the store is asked, a row
// the sheet lists: two rows sharing a key, a row blank but for a value of triage's). Then the
// test is the person: each listed cell found (the row holding triage's value there and reading
// like the listed row) and set back to what it held, the damage sheets deleted; the tab must
// then read as if nothing had hit a wrong row, and a third, quiet run must pass every check
// above across all three runs.
//
// One source lane of width 1 makes every case deterministic: rows finish in plan order, so
// the write-back batches, and with them the Sheets requests and the other editor's moves
// (drawn from the seed only in the hook), are the same on every run. The store's retry sleep
// is a no-op and no fault of the receiver depends on time.
//
// CI runs 40 cases; TRIAGE_REPLAY_ADVERSARY_CASES=1000 runs more, and
// TRIAGE_REPLAY_ADVERSARY_SEED=N runs the one case N (with its step-by-step log on -v).
func TestReplayUnderAdversaryEndToEnd(t *testing.T) {
	cases := testbed.CaseCount(40, 10, "TRIAGE_REPLAY_ADVERSARY_CASES")
	only := os.Getenv("TRIAGE_REPLAY_ADVERSARY_SEED")
	stats := map[string]int{}
	var seeds, failed []int
	for seed := range testbed.Seeds(t, cases, 0, "TRIAGE_REPLAY_ADVERSARY_SEED") {
		seeds = append(seeds, seed)
		ok := t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			advCase(t, seed, stats, only != "")
		})
		if !ok {
			failed = append(failed, seed)
		}
	}
	t.Logf("%d cases, %d failed %v, %d with damage (%d cells damaged): %s", len(seeds), len(failed), failed,
		stats["damage:cases"], stats["damage:cells"], advStats(stats))
	if len(seeds) >= 40 && only == "" {
		testbed.Exercised(t, stats, "mode:storm", "mode:moves", "move:sort", "move:insert", "move:delete", "lost:drop", "lost:503-after",
			"run1:delivered", "run1:rejected", "run1:minted-key-sent", "run2:resent-after-lost-write-back")
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

// advEditor is the other editor of one case (a testbed.Adversary: before any Sheets request,
// with odds 1 in 3, one or two changes, each a sort by a random column either way (4 in 10),
// an insert of one or two rows of its own (3 in 10) or the delete of one of its own rows (3
// in 10); in storm cases also an insert before every spreadsheets.batchUpdate; and the lost
// answers the case plans), with the case's counters.
type advEditor struct {
	*testbed.Adversary
	emu *emulator.Emulator

	mu    sync.Mutex
	stats map[string]int
}

// newAdvEditor is the case's other editor. Its rows are of source "other", with their own
// payload and timestamp, and sometimes a key, a status, an error, attempts (a number) or
// replayed_at, so that a write of triage's that hits one overwrites something (and must put
// it back exactly).
func newAdvEditor(t *testing.T, seed int, storm bool) *advEditor {
	ad := testbed.NewAdversary(t, uint64(seed), testbed.AdversaryTab{SpreadsheetID: advID, Tab: e2eTab, Anchor: 3,
		NewRow: func(rng *rand.Rand, made int) []any {
			r := make([]any, len(dlHeader))
			r[0] = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.IntN(60*24*60)) * time.Minute).Format(time.RFC3339)
			r[1] = advOther
			r[2] = advOtherURL
			r[3] = fmt.Sprintf(`{"other":%d,"seed":%d}`, made, seed)
			if rng.IntN(3) == 0 {
				r[cError] = "boom"
			}
			if rng.IntN(2) == 0 {
				r[cAttempts] = float64(1 + rng.IntN(3))
			}
			if rng.IntN(2) == 0 {
				r[cKey] = fmt.Sprintf("kf-%d-%d", seed, made)
			}
			r[cStatus] = []any{nil, "dead", "discarded", "delivered"}[rng.IntN(4)]
			if rng.IntN(4) == 0 {
				r[cReplayedAt] = "2026-02-02T00:00:00Z"
			}
			return r
		}},
		testbed.Odds{BeforeRead: 1.0 / 3, BeforeWrite: 1.0 / 3, BeforeOther: 1.0 / 3, Sort: 4, Insert: 3, Delete: 3, Changes: 2, InsertRows: 2, StormWrites: storm})
	return &advEditor{Adversary: ad, stats: map[string]int{}}
}

func (e *advEditor) logf(format string, a ...any) { e.Logf(format, a...) }

// advStampRE is the time at the end of a damage sheet's title: the store's own clock (time.Now),
// the one thing of a case that is not drawn from its seed.
var advStampRE = regexp.MustCompile(`(triage: check [^"]*?) \d{4}-\d\d-\d\d \d\d:\d\d:\d\d`)

// advNoClock takes the time out of the damage sheets' titles in a line of the log, so that a
// case's fingerprint is the same on every run.
func advNoClock(s string) string { return advStampRE.ReplaceAllString(s, "$1 <time>") }

// count adds to a counter of the case (the store's goroutines count too).
func (e *advEditor) count(k string, n int) {
	e.mu.Lock()
	e.stats[k] += n
	e.mu.Unlock()
}

func (e *advEditor) cells() [][]any { return e.emu.Cells(advID, e2eTab) }

// rows are the contents (typed, advContent) of its rows on the sheet, by payload; gone those
// of the rows it deleted.
func (e *advEditor) rows() map[string]map[string]string { return advContents(e.Own()) }
func (e *advEditor) gone() map[string]map[string]string { return advContents(e.Gone()) }

func advContents(rows map[string][]any) map[string]map[string]string {
	out := map[string]map[string]string{}
	for p, r := range rows {
		out[p] = advContent(dlHeader, r)
	}
	return out
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

// Lease, Renew and Release pass the run's leases through to the store (replay.Leaser), so
// the lease's own writes meet the other editor and the lost answers too.
func (s *advStore) Lease(ctx context.Context, tab string, keys []string) (model.Leases, error) {
	l, err := s.st.(replay.Leaser).Lease(ctx, tab, keys)
	s.ed.logf("%s: lease of %d rows: %d taken, %d held, %d unleased, err %v", s.run, len(keys), len(l.Taken), len(l.Held), len(l.Unleased), err)
	return l, err
}

func (s *advStore) Renew(ctx context.Context, l model.Leases) error {
	return s.st.(replay.Leaser).Renew(ctx, l)
}

func (s *advStore) Release(ctx context.Context, l model.Leases) error {
	return s.st.(replay.Leaser).Release(ctx, l)
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
	rcv := receiver.New()
	rcv.Rule = func(key string, n int) (receiver.Fault, bool) {
		fr, ok := faults[key]
		switch {
		case !ok:
		case fr.fault == advReject:
			return receiver.Fault{Mode: receiver.Status, Status: fr.code}, true
		case fr.fault == adv503Once && n == 1:
			return receiver.Fault{Mode: receiver.Unavailable}, true
		}
		return receiver.Fault{}, false
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
			r.finishAtRandom(rng)
		}
		key := effectiveKey(t, tc, hm, r, i)
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

	storm := seed%4 == 3 // one case in four
	ed := newAdvEditor(t, seed, storm)
	grid := [][]any{anyRow(dlHeader)}
	for _, fr := range fixture {
		if rng.IntN(8) == 0 {
			grid = append(grid, ed.MakeRow())
		}
		grid = append(grid, gridRow(fr.r.cells()))
	}

	// The sheet: the emulator behind a real server, the real store over it, retry sleeps a
	// no-op.
	sh := testbed.NewSheets(t, &emulator.Workbook{SpreadsheetID: advID, Title: "Replay adversary", TimeZone: "Etc/UTC",
		Sheets: []*emulator.Sheet{{Title: e2eTab, Rows: grid, RowCount: len(grid) + 10}}})
	emu := sh.Emu
	st := sh.Store(sheets.Options{SpreadsheetID: advID, Tabs: []model.TabConfig{tc},
		Retry: sheets.RetryPolicy{Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }}})
	ed.emu = emu
	ed.Attach(emu)
	load := func() *model.Table {
		t.Helper()
		return loadDeadLetters(t, st)
	}

	// The case's lost answers: up to two of the first run's batchUpdates.
	fe := 4 + rng.IntN(13)
	lostAt := map[int]testbed.Lost{}
	for range rng.IntN(3) {
		lostAt[1+rng.IntN(3+n/fe)] = []testbed.Lost{testbed.LostDrop, testbed.Lost503After}[rng.IntN(2)]
	}
	mode := "moves"
	if storm {
		mode = "storm"
	}
	ed.count("mode:"+mode, 1)
	lost := slices.Sorted(maps.Keys(lostAt))
	var lostText []string
	for _, w := range lost {
		lostText = append(lostText, fmt.Sprintf("#%d %s", w, lostAt[w]))
	}
	waitingN := 0
	for _, fr := range fixture {
		if fr.waiting {
			waitingN++
		}
	}
	ed.logf("seed %d: %d fixture rows (%d waiting), %d rows of the other editor's, mode %s, flush every %d, lost answers of batchUpdates %v",
		seed, n, waitingN, len(ed.Own()), mode, fe, lostText)
	for i, fr := range fixture {
		ed.logf("  fixture %d: key %s (minted %v), status %q, waiting %v, receiver %s %d, payload %s", i, fr.key, fr.minted, fr.r.status, fr.waiting, fr.fault, fr.code, fr.r.payload)
	}
	ed.logf("(rerun this case alone with TRIAGE_REPLAY_ADVERSARY_SEED=%d)", seed)
	for _, w := range lost {
		ed.LoseAnswer(w, lostAt[w])
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
		for k, v := range ed.Counts() {
			if !strings.HasPrefix(k, "lost:") {
				k = "move:" + k
			}
			stats[k] += v
		}
		h := fnv.New64a()
		for _, l := range ed.Log() {
			h.Write([]byte(advNoClock(l)))
			h.Write([]byte{'\n'})
		}
		if verbose && !t.Failed() {
			// (A failing case's adversary tells its story itself.)
			t.Logf("seed %d, step by step:\n%s", seed, ed.Story())
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
	if rng.IntN(2) == 0 {
		ed.Move("between the load and the run")
	}
	emu.SetHook(ed.Hook)
	rec1 := &advStore{st: st, ed: ed, run: "run 1"}
	sum1 := replay.Run(ctx, c, rec1, tab, records(tab), opts)
	emu.SetHook(nil)
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
	titles, listed := advDamageSheets(t, emu)
	advCheckListed(t, dmg, sum1.WriteErrors, titles, listed)
	ed.count("damage:cases", min(len(dmg), 1))
	ed.count("damage:cells", len(dmg))
	if len(dmg) > 0 {
		ed.logf("run 1: damage sheets %q list %d cells", titles, len(listed))
		if len(rec1.calls) > 0 && len(rec1.calls[0].res.Damaged) > 0 {
			// The pre-send check itself left damage: no key is proven, nothing may be sent.
			ed.count("damage:at-check", 1)
			if n := len(rcv.Attempts()); n > 0 || len(sum1.Rows) > 0 {
				t.Errorf("run 1: the pre-send check reported damage, yet %d requests were sent (%d rows went past the check)", n, len(sum1.Rows))
			}
			refused := map[string]string{}
			for _, rf := range sum1.Refused {
				refused[rf.ID] = rf.Reason
			}
			for _, fr := range fixture {
				if why, ok := refused[fr.key]; fr.waiting && (!ok || !strings.Contains(why, "could not be put back")) {
					t.Errorf("run 1: the pre-send check reported damage, yet row %s was not refused for it (refusal %q)", fr.key, why)
				}
			}
		}
	}
	status1, tolerated := advCheckSheet(t, "after run 1", after1, rcv, fixture, byPayload, ed, dmg, listed, false, now)
	for _, w := range tolerated {
		ed.logf("%s", w)
	}
	ed.count("damage:wrong-cells-listed", len(tolerated))
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

	// quiet is a rerun as cron would do it: a fresh load, nobody else at the sheet, no lost
	// answer. status is each fixture row's status on the sheet it starts from; across names the
	// runs so far. Across them all: still no payload under two keys, the receiver acted once
	// per accepted key (on its own payload) and never for a rejected one, nothing marked
	// delivered or rejected before it is sent again, and every fixture row ends as its receiver
	// answered, with its own key.
	quiet := func(run string, status map[string]string, across string) {
		t.Helper()
		sentBefore := map[string]bool{}
		for _, a := range rcv.Attempts() {
			sentBefore[string(a.Body)] = true
		}
		attemptsBefore := len(rcv.Attempts())
		tab := load()
		rec := &advStore{st: st, ed: ed, run: run}
		sum := replay.Run(ctx, c, rec, tab, records(tab), opts)
		ed.logf("%s: %v; halted %v; %d write requests; write conflicts %d; write errors %q", run, sum.Counts, sum.Halted, sum.WriteRequests, len(sum.WriteConflicts), sum.WriteErrors)
		if sum.Halted != nil || len(sum.WriteConflicts) > 0 || len(sum.WriteErrors) > 0 || len(sum.NotAttempted) > 0 {
			t.Errorf("%s (nobody else at the sheet): halted %v, write conflicts %v, write errors %q, not attempted %v", run, sum.Halted, sum.WriteConflicts, sum.WriteErrors, sum.NotAttempted)
		}
		for _, call := range rec.calls {
			if call.err != nil || len(call.res.Damaged) > 0 {
				t.Errorf("%s: an Apply with nobody else at the sheet: err %v, damage %v", run, call.err, call.res.Damaged)
			}
		}
		for _, rf := range sum.Refused {
			if !rf.Skipped && !strings.Contains(rf.Reason, `source "other" is not configured`) {
				t.Errorf("%s refused a row with nobody else at the sheet: %s", run, rf.Reason)
			}
		}
		attempts := rcv.Attempts()
		for _, a := range attempts[attemptsBefore:] {
			p := string(a.Body)
			switch s := status[p]; s {
			case "delivered", "rejected":
				t.Errorf("%s sent payload %s (key %s) again, though the sheet said %s before it", run, p, a.Key, s)
			}
			if fr := byPayload[p]; fr != nil && !fr.waiting {
				continue // reported by advCheckReceiver
			}
			if fr := byPayload[p]; fr != nil && fr.fault != advReject && status[p] != "delivered" && sentBefore[p] {
				ed.count(run2key(run)+":resent-after-lost-write-back", 1)
			}
		}
		ed.count(run2key(run)+":attempts", len(attempts)-attemptsBefore)
		advCheckReceiver(t, across, attempts, byPayload)
		advCheckEffects(t, rcv, fixture)
		dmg.add(rec.calls)
		advCheckSheet(t, "after "+run, ed.cells(), rcv, fixture, byPayload, ed, dmg, nil, true, now)
	}
	if len(dmg) == 0 {
		quiet("run 2", status1, "both runs")
		return
	}

	// Damage: until someone fixes the cells and deletes the damage sheet, a rerun as cron would
	// do it sends nothing from the tab, writes nothing to it, and says why.
	attemptsBefore := len(rcv.Attempts())
	tab = load()
	rec2 := &advStore{st: st, ed: ed, run: "run 2"}
	sum2 := replay.Run(ctx, c, rec2, tab, records(tab), opts)
	ed.logf("run 2: %v; halted %v; %d write requests; write conflicts %d; write errors %q", sum2.Counts, sum2.Halted, sum2.WriteRequests, len(sum2.WriteConflicts), sum2.WriteErrors)
	if sum2.Halted != nil || len(sum2.WriteConflicts) > 0 || len(sum2.WriteErrors) > 0 || len(sum2.NotAttempted) > 0 || len(sum2.Rows) > 0 {
		t.Errorf("run 2 (a damage sheet on the tab): halted %v, write conflicts %v, write errors %q, not attempted %v, %d rows went past the pre-send check", sum2.Halted, sum2.WriteConflicts, sum2.WriteErrors, sum2.NotAttempted, len(sum2.Rows))
	}
	if n := len(rcv.Attempts()) - attemptsBefore; n > 0 {
		t.Errorf("run 2 sent %d requests from a tab with a damage sheet", n)
	}
	namesSheet := func(s string) bool {
		return slices.ContainsFunc(titles, func(title string) bool { return strings.Contains(s, strconv.Quote(title)) })
	}
	for _, call := range rec2.calls {
		if call.err == nil || !namesSheet(call.err.Error()) || len(call.res.Applied)+len(call.res.Conflicts)+len(call.res.Missing)+len(call.res.Damaged) > 0 {
			t.Errorf("run 2: an Apply setting keys on a tab with a damage sheet: err %v, result %s; want it refused whole, naming the sheet %q", call.err, call.res.Summary(), titles)
		}
	}
	refusedForDamage := 0
	// A row that a listed cell makes unsendable by itself (two rows sharing a key, a row blank
	// but for a value of triage's) is refused before the store is asked: its refusal names a
	// row that holds a listed cell.
	damagedRow := map[int]bool{}
	for _, tg := range advLocate(after1, ed, byPayload, listed) {
		if tg.what == "fix" {
			damagedRow[tg.row+1] = true
		}
	}
	namesDamagedRow := func(s string) bool {
		for _, m := range advRowsRE.FindAllStringSubmatch(s, -1) {
			for n := range strings.SplitSeq(m[1], ", ") {
				if r, err := strconv.Atoi(n); err == nil && damagedRow[r] {
					return true
				}
			}
		}
		return false
	}
	for _, rf := range sum2.Refused {
		switch {
		case rf.Skipped || strings.Contains(rf.Reason, `source "other" is not configured`):
		case namesSheet(rf.Reason):
			refusedForDamage++
		case namesDamagedRow(rf.Reason):
			ed.logf("run 2: refused a row a listed cell made unsendable: %s", rf.Reason)
			ed.count("run2:refused-for-a-listed-cell", 1)
		default:
			t.Errorf("run 2 refused a row, and not for the damage sheet %q nor for a row it lists: %s", titles, rf.Reason)
		}
	}
	ed.logf("run 2: %d rows refused, naming the damage sheet", refusedForDamage)
	ed.count("run2:refused-for-damage", refusedForDamage)
	waitingLeft := 0
	for _, fr := range fixture {
		if st := status1[fr.r.payload]; fr.waiting && (st == "" || st == "dead") {
			waitingLeft++
		}
	}
	if waitingLeft > 0 && refusedForDamage == 0 {
		t.Errorf("run 2: %d fixture rows still waiting on a tab with a damage sheet, and no refusal names it %q", waitingLeft, titles)
	}
	if after2 := ed.cells(); !slices.EqualFunc(after1, after2, func(a, b []any) bool { return slices.Equal(a, b) }) {
		t.Errorf("run 2 changed the tab, which has a damage sheet")
	}
	if again, _ := advDamageSheets(t, emu); !slices.Equal(again, titles) {
		t.Errorf("damage sheets after run 2 %q, after run 1 %q", again, titles)
	}

	// The person: each listed cell set back to what it held, the damage sheets deleted. The
	// tab must then read as if no value of triage's had ever hit a wrong row.
	fixed, gone, left := advFix(t, emu, ed, byPayload, listed)
	ed.count("damage:cells-fixed", fixed)
	ed.count("damage:cells-gone", gone)
	ed.count("damage:cells-left", left)
	for _, title := range titles {
		if err := emu.DeleteSheet(advID, title); err != nil {
			t.Fatal(err)
		}
		ed.logf("the fix: deleted the sheet %q", title)
	}
	statusFixed, _ := advCheckSheet(t, "after the fix", ed.cells(), rcv, fixture, byPayload, ed, dmg, nil, false, now)
	quiet("run 3", statusFixed, "all three runs")
}

// advRowsRE finds the row numbers a refusal names ("row 7:", "rows 7, 12 share").
var advRowsRE = regexp.MustCompile(`\brows? (\d+(?:, \d+)*)`)

// run2key is the counters' prefix of a rerun.
func run2key(run string) string { return strings.ReplaceAll(run, " ", "") }

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
func advCheckReceiver(t *testing.T, when string, attempts []receiver.RecordedAttempt, byPayload map[string]*advRow) {
	t.Helper()
	checkSentUnderOwnKeys(attempts, func(p string) (*row, string, bool) {
		if fr := byPayload[p]; fr != nil {
			return &fr.r, fr.key, fr.waiting
		}
		return nil, "", false
	}, func(format string, a ...any) { t.Errorf(when+": "+format, a...) })
}

// advCheckEffects: after both runs, the receiver acted once for every accepted key, on its
// own payload, and never for a rejected one or any other key.
func advCheckEffects(t *testing.T, rcv *receiver.Receiver, fixture []*advRow) {
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

// advReported is the note of a wrong cell the store reported under its row's identity.
const advReported = " [reported by the store as damage]"

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
			return advReported
		}
		other = append(other, dm.ID)
	}
	if len(other) > 0 {
		return fmt.Sprintf(" [a damage of %s %q reported by the store under another identity: %q]", column, holds, other)
	}
	return " [NOT reported by the store]"
}

// advCheckSheet checks the sheet, row by row, and returns each fixture row's status by
// payload. Each wrong cell says whether the store reported it (model.Damage). A wrong cell
// that the store reported under its row's identity and that a damage sheet lists (listed: the
// same identity, column and value of triage's) is not a failure: it is returned in tolerated,
// for the caller to have it put back. With listed nil every wrong cell is a failure.
//
// Always: each fixture row is on the sheet once, the cells triage never writes as they were,
// its key cell its original key, or (minted) nothing or its own minted key, which it must hold
// if it was sent; a row marked delivered was accepted by the receiver, one marked rejected was
// rejected by it; a row not waiting is as it was (values and types). The other editor's rows
// are as it made them, each once; no row is no one's. final (after the quiet rerun): every
// waiting row ends as its receiver answered, with its own key, replayed_at and error.
func advCheckSheet(t *testing.T, when string, cells [][]any, rcv *receiver.Receiver, fixture []*advRow, byPayload map[string]*advRow, ed *advEditor, dmg advDamage, listed advListing, final bool, now time.Time) (status map[string]string, tolerated []string) {
	t.Helper()
	hm, _ := model.MapHeaders(dlConfig, dlHeader)
	// bad reports a wrong cell: the cell of column of the row whose identity is id, holding
	// holds.
	bad := func(id, column, holds, msg string) {
		t.Helper()
		note := dmg.note(id, column, holds)
		if note == advReported && listed != nil {
			if listed.has(id, column, holds) {
				tolerated = append(tolerated, msg+note+" [listed in the damage sheet]")
				return
			}
			note += " [but listed in no damage sheet]"
		}
		t.Errorf("%s%s", msg, note)
	}
	rows, at := advRows(cells)
	sent := map[string]bool{}
	answered := map[string]bool{} // payload → the receiver gave a final answer (not the 503)
	for _, a := range rcv.Attempts() {
		p := string(a.Body)
		sent[p] = true
		if fr := byPayload[p]; fr != nil && (fr.fault != adv503Once || a.Mode != receiver.Unavailable) {
			answered[p] = true
		}
	}
	others := ed.rows()
	status = map[string]string{}
	seen := map[string]int{}
	for j, r := range rows {
		p := advText(r, "payload")
		seen[p]++
		if want, ok := others[p]; ok {
			cells := make([]string, len(dlHeader))
			for c, h := range dlHeader {
				cells[c] = advText(want, h)
			}
			advSame(fmt.Sprintf("%s: row %d, the other editor's %s,", when, at[j], p), model.RowIdentity(dlConfig, hm, cells), want, r, bad)
			continue
		}
		fr := byPayload[p]
		if fr == nil {
			// No one's: every cell of it is wrong (it held nothing). Only a value of triage's
			// that hit a blank row makes one, and the store reads no identity from such a row.
			for _, h := range slices.Sorted(maps.Keys(r)) {
				bad("", h, advText(r, h), fmt.Sprintf("%s: row %d is no one's (no fixture row's, not the other editor's or one it deleted): %s; its %s", when, at[j], sortedMap(r), h))
			}
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
			advSame(what+", not waiting,", fr.key, want, r, bad)
			continue
		}
		// The cells triage never writes.
		for c, h := range dlHeader {
			switch c {
			case cError, cAttempts, cKey, cStatus, cReplayedAt:
				continue
			}
			if v := fr.r.cells()[c]; advText(r, h) != v {
				bad(fr.key, h, advText(r, h), fmt.Sprintf("%s: %s = %q, was %q: triage never writes it", what, h, advText(r, h), v))
			}
		}
		// (c) its own key.
		key := advText(r, "key")
		switch {
		case !fr.minted && key != fr.r.key:
			bad(fr.key, "key", key, fmt.Sprintf("%s: key cell %q, its key is %q", what, key, fr.r.key))
		case fr.minted && key != "" && key != fr.key:
			bad(fr.key, "key", key, fmt.Sprintf("%s: key cell %q, its minted key is %q", what, key, fr.key))
		case fr.minted && key == "" && (sent[p] || final):
			bad(fr.key, "key", key, fmt.Sprintf("%s: sent with its minted key, yet its key cell is empty", what))
		}
		// (b) the status as the receiver answered, or as it was.
		switch st {
		case "delivered":
			if fr.fault == advReject {
				bad(fr.key, "status", st, fmt.Sprintf("%s: marked delivered, but the receiver rejected its key (%d)", what, fr.code))
			} else if !answered[p] {
				bad(fr.key, "status", st, fmt.Sprintf("%s: marked delivered, but the receiver never accepted it", what))
			}
		case "rejected":
			if fr.fault != advReject {
				bad(fr.key, "status", st, fmt.Sprintf("%s: marked rejected, but the receiver accepted its key", what))
			} else if !answered[p] {
				bad(fr.key, "status", st, fmt.Sprintf("%s: marked rejected, but it was never sent", what))
			} else if e := advText(r, "error"); !strings.HasPrefix(e, strconv.Itoa(fr.code)+" ") {
				bad(fr.key, "error", e, fmt.Sprintf("%s: rejected with error %q, want the receiver's %d", what, e, fr.code))
			}
		case fr.r.status:
			if final {
				t.Errorf("%s: still %q after the quiet rerun (receiver: %s)", what, st, fr.fault)
			}
		default:
			bad(fr.key, "status", st, fmt.Sprintf("%s: status %q, was %q: neither, nor an outcome", what, st, fr.r.status))
		}
		if final && (st == "delivered" || st == "rejected") {
			if got := advText(r, "replayed_at"); got != model.FormatTime(now) {
				bad(fr.key, "replayed_at", got, fmt.Sprintf("%s: replayed_at %q", what, got))
			}
			if e := advText(r, "error"); st == "delivered" && e != "" {
				bad(fr.key, "error", e, fmt.Sprintf("%s: delivered with error %q", what, e))
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
	return status, tolerated
}

// advSame reports (bad) each cell of a row that is not as it was: its text, or only its type
// (text "2" become the number 2: the same text, but not the cell it was).
func advSame(what, id string, want, got map[string]string, bad func(id, column, holds, msg string)) {
	for _, k := range slices.Sorted(maps.Keys(advMergeKeys(want, got))) {
		w, g := want[k], got[k]
		switch {
		case w == g:
		case advText(want, k) == advText(got, k):
			bad(id, k, advText(got, k), fmt.Sprintf("%s %s cell: %s, was %s: same text, another type (a value of triage's that hit it was not put back exactly)", what, k, g, w))
		default:
			bad(id, k, advText(got, k), fmt.Sprintf("%s %s = %q, was %q", what, k, advText(got, k), advText(want, k)))
		}
	}
}

func advMergeKeys(a, b map[string]string) map[string]bool {
	m := map[string]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return m
}

// advListed is one cell a damage sheet lists (a row from its third on): the row it was on when
// last seen, its row's identity, the column (its header, quoted), triage's value, what it held.
type advListed struct {
	sheet                         string
	row, id, column, ours, before string
}

func (l advListed) String() string {
	return fmt.Sprintf("row %s (%s) %s: %q, held %q", l.row, l.id, l.column, l.ours, l.before)
}

// advListing is what the damage sheets list; nil (not an empty listing) tolerates nothing.
type advListing []advListed

// has says whether a damage sheet lists the cell of column (a header) of the row whose
// identity is id, holding triage's value holds.
func (l advListing) has(id, column, holds string) bool {
	return slices.ContainsFunc(l, func(x advListed) bool {
		return x.id == id && x.column == strconv.Quote(column) && x.ours == holds
	})
}

// advDamageHeader is the header row of a damage sheet.
var advDamageHeader = []string{"row (when last seen)", "ID", "column", "triage's value", "what it held"}

// advDamageSheets reads the damage sheets of the tab ("triage: check failed_calls <time>"):
// their titles and every cell they list (never nil). A damage sheet must be visible and
// read as one: a sentence, the header, then the cells.
func advDamageSheets(t *testing.T, emu *emulator.Emulator) (titles []string, listed advListing) {
	t.Helper()
	listed = advListing{}
	for _, sh := range emu.Workbook(advID).Sheets {
		if !strings.HasPrefix(sh.Title, "triage: check ") {
			continue
		}
		if !strings.HasPrefix(sh.Title, "triage: check "+e2eTab+" ") {
			t.Errorf("a damage sheet %q of no configured tab", sh.Title)
			continue
		}
		titles = append(titles, sh.Title)
		if sh.HiddenTab {
			t.Errorf("damage sheet %q is hidden", sh.Title)
		}
		cells := emu.Cells(advID, sh.Title)
		text := func(r, c int) string {
			if r < len(cells) && c < len(cells[r]) {
				return model.CellString(cells[r][c])
			}
			return ""
		}
		if text(0, 0) == "" || !strings.Contains(text(0, 0), strconv.Quote(e2eTab)) {
			t.Errorf("damage sheet %q: the first row %q does not say what it is", sh.Title, text(0, 0))
		}
		for c, h := range advDamageHeader {
			if text(1, c) != h {
				t.Errorf("damage sheet %q: header cell %d is %q, want %q", sh.Title, c+1, text(1, c), h)
			}
		}
		if len(cells) < 3 {
			t.Errorf("damage sheet %q lists no cell", sh.Title)
		}
		for r := 2; r < len(cells); r++ {
			listed = append(listed, advListed{sheet: sh.Title, row: text(r, 0), id: text(r, 1), column: text(r, 2), ours: text(r, 3), before: text(r, 4)})
		}
	}
	return titles, listed
}

// advCheckListed checks the store's three reports of damage against each other: every damaged
// cell of the result (run 1's) is in the summary's WriteErrors and listed, exactly, in a damage
// sheet; every listed cell is one of the result's; there is a damage sheet iff there is damage.
func advCheckListed(t *testing.T, dmg advDamage, writeErrors []string, titles []string, listed advListing) {
	t.Helper()
	count := map[advListed]int{}
	for _, l := range listed {
		l.sheet = ""
		count[l]++
	}
	for _, d := range dmg {
		if !slices.Contains(writeErrors, d.String()) {
			t.Errorf("damage the store reported is not among run 1's write errors: %s", d.String())
		}
		l := advListed{row: strconv.Itoa(d.Row), id: d.ID, column: d.Column, ours: d.Ours, before: d.Before}
		if count[l] == 0 {
			t.Errorf("damage the store reported is in no damage sheet (%q): %s", titles, d.String())
			continue
		}
		count[l]--
	}
	for _, l := range listed {
		k := l
		k.sheet = ""
		if count[k] > 0 {
			count[k]--
			t.Errorf("damage sheet %q lists a cell the store never reported: %s", l.sheet, l)
		}
	}
	if len(dmg) > 0 && len(titles) == 0 {
		t.Errorf("the store reported %d damaged cells, and there is no damage sheet", len(dmg))
	}
	if len(dmg) == 0 && len(titles) > 0 {
		t.Errorf("damage sheets %q, and the store reported no damage", titles)
	}
}

// advTarget is where advLocate found a listed cell: the row (0-based in the tab's cells) that
// holds it, and the value to type back; or why there is none.
type advTarget struct {
	l     advListed
	row   int    // -1: none
	col   int    // the column, -1 if the tab has none of that header
	value any    // what to type back (nil: clear it)
	what  string // "fix", "gone" (the other editor deleted its row), "left" (its row no longer holds triage's value), "ambiguous", "nowhere"
	note  string
}

// advLocate is the person reading a damage sheet: for each cell it lists, the row that holds
// triage's value in that column and otherwise reads like the listed row (its identity with the
// cell as it held; where the listed row has none, a row blank but for the listed cells; where
// rows read alike, one the test knows may have held that value, then the listed row number),
// and the value to type back, typed as the test knows the cell (a number stays a number). Key
// cells first: the other cells' rows are told by an identity read with the key, as the fix
// leaves it. A listed cell on a row the other editor has deleted since is gone; one whose row
// no longer holds triage's value is left as it is (a later write of the row's own may have set
// it). cells is not changed.
func advLocate(cells [][]any, ed *advEditor, byPayload map[string]*advRow, listed advListing) []advTarget {
	cells = slices.Clone(cells)
	for i := range cells {
		cells[i] = slices.Clone(cells[i])
	}
	header := make([]string, len(cells[0]))
	for i, h := range cells[0] {
		header[i] = model.CellString(h)
	}
	hm, _ := model.MapHeaders(dlConfig, header)
	pcol := slices.Index(header, "payload")
	text := func(raw []any, c int) string {
		if c >= 0 && c < len(raw) {
			return model.CellString(raw[c])
		}
		return ""
	}
	// reads says whether a row, with column c holding v, reads like a listed row of identity
	// id: that identity, or ("") nothing a row's identity is read from.
	reads := func(raw []any, c int, v, id string) bool {
		s := make([]string, len(header))
		for i := range s {
			s[i] = text(raw, i)
		}
		s[c] = v
		if id != "" {
			return model.RowIdentity(dlConfig, hm, s) == id
		}
		for _, f := range []model.Field{model.FID, model.FKey, model.FPayload, model.FSource, model.FURL, model.FTimestamp} {
			if i := hm.Col(f); i >= 0 && strings.TrimSpace(s[i]) != "" {
				return false
			}
		}
		return true
	}
	others := ed.rows()
	var gones []map[string]string
	for _, m := range ed.gone() {
		gones = append(gones, m)
	}
	// could says whether the test knows that the cell of column c of a row may have held v (a
	// row or cell it knows nothing of: yes).
	could := func(raw []any, c int, v string) bool {
		p := text(raw, pcol)
		if want, ok := others[p]; ok {
			return advText(want, header[c]) == v
		}
		fr := byPayload[p]
		if fr == nil {
			return true
		}
		switch {
		case !fr.waiting:
			return fr.r.cells()[c] == v
		case c == cKey && fr.minted:
			return v == "" || v == fr.key
		case c == cKey:
			return v == fr.r.key
		case c == cStatus && fr.fault == advReject:
			return v == fr.r.status || v == "rejected"
		case c == cStatus:
			return v == fr.r.status || v == "delivered"
		case c == cError || c == cAttempts || c == cReplayedAt:
			return true // triage writes them: anything it may have written
		}
		return fr.r.cells()[c] == v
	}
	// typed is the value to type back into column c of a row, where it held v.
	typed := func(raw []any, c int, v string) any {
		if v == "" {
			return nil
		}
		if c < len(raw) && model.CellString(raw[c]) == v {
			// Only its type is wrong: the other type.
			if _, isNum := raw[c].(float64); isNum {
				return v
			}
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				return f
			}
		}
		p := text(raw, pcol)
		if want, ok := others[p]; ok && advText(want, header[c]) == v {
			switch w := want[header[c]]; {
			case strings.HasPrefix(w, "n:"):
				f, _ := strconv.ParseFloat(v, 64)
				return f
			case strings.HasPrefix(w, "b:"):
				return v == "TRUE"
			}
			return v
		}
		if fr := byPayload[p]; fr != nil && fr.r.cells()[c] != v && c == cAttempts {
			if n, err := strconv.Atoi(v); err == nil {
				return float64(n) // attempts as triage writes them
			}
		}
		return v
	}
	order := slices.Clone(listed)
	slices.SortStableFunc(order, func(a, b advListed) int {
		ak, bk := a.column == strconv.Quote("key"), b.column == strconv.Quote("key")
		switch {
		case ak && !bk:
			return -1
		case bk && !ak:
			return 1
		}
		return 0
	})
	var out []advTarget
	for _, l := range order {
		tg := advTarget{l: l, row: -1}
		tg.col = slices.IndexFunc(header, func(h string) bool { return strconv.Quote(h) == l.column })
		if tg.col < 0 {
			tg.what, tg.note = "nowhere", "the tab has no column "+l.column
			out = append(out, tg)
			continue
		}
		c := tg.col
		var like, holds []int // rows that read like it; those of them holding triage's value
		for r := 1; r < len(cells); r++ {
			if reads(cells[r], c, l.before, l.id) {
				like = append(like, r)
				if text(cells[r], c) == l.ours {
					holds = append(holds, r)
				}
			}
		}
		if len(holds) > 1 {
			if known := slices.DeleteFunc(slices.Clone(holds), func(r int) bool { return !could(cells[r], c, l.before) }); len(known) > 0 {
				holds = known
			}
		}
		if len(holds) > 1 {
			if at := slices.IndexFunc(holds, func(r int) bool { return strconv.Itoa(r+1) == l.row }); at >= 0 {
				holds = holds[at : at+1]
			}
		}
		switch {
		case len(holds) == 1:
			r := holds[0]
			tg.row, tg.what, tg.value = r, "fix", typed(cells[r], c, l.before)
			for len(cells[r]) <= c {
				cells[r] = append(cells[r], nil)
			}
			cells[r][c] = tg.value
		case len(holds) > 1:
			var rows []int
			for _, r := range holds {
				rows = append(rows, r+1)
			}
			tg.what, tg.note = "ambiguous", fmt.Sprintf("rows %v all read like it", rows)
		case len(like) > 0:
			tg.what, tg.note = "left", fmt.Sprintf("its row (%d) holds %q", like[0]+1, text(cells[like[0]], c))
		default:
			deleted := slices.ContainsFunc(gones, func(m map[string]string) bool {
				s := make([]string, len(header))
				for i, h := range header {
					s[i] = advText(m, h)
				}
				return model.RowIdentity(dlConfig, hm, s) == l.id
			})
			tg.what = "nowhere"
			if deleted {
				tg.what = "gone"
			}
		}
		out = append(out, tg)
	}
	return out
}

// advFix is the person at the sheet after a damage sheet: each listed cell advLocate finds set
// back to what it held. It returns how many cells were fixed, gone and left.
func advFix(t *testing.T, emu *emulator.Emulator, ed *advEditor, byPayload map[string]*advRow, listed advListing) (fixed, gone, left int) {
	t.Helper()
	for _, tg := range advLocate(emu.Cells(advID, e2eTab), ed, byPayload, listed) {
		switch tg.what {
		case "fix":
			if err := emu.SetCell(advID, e2eTab, tg.row+1, tg.col, tg.value); err != nil {
				t.Fatal(err)
			}
			ed.logf("the fix: %s: row %d set back to %q (%s)", tg.l, tg.row+1, tg.l.before, advCell(tg.value))
			fixed++
		case "gone":
			ed.logf("the fix: %s: the other editor deleted its row since: gone", tg.l)
			gone++
		case "left":
			ed.logf("the fix: %s: %s, not triage's value: left", tg.l, tg.note)
			left++
		case "ambiguous":
			t.Errorf("damage sheet %q lists %s, and %s: which one to set back?", tg.l.sheet, tg.l, tg.note)
		default:
			t.Errorf("damage sheet %q lists %s, and no row reads like it %s", tg.l.sheet, tg.l, tg.note)
		}
	}
	return fixed, gone, left
}
