package replay_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// A replay under a steady stream of sorts by another editor, then a quiet rerun.
//
// A failed_calls tab of a few hundred rows (key cell filled, key cell empty with a payload
// key, key cell empty with a minted key; a few rows already delivered, rejected or
// discarded; and unrelated rows of another source) is replayed through replay.Run, the real
// sheets.Store on the emulator over HTTP, and the reference receiver over HTTP, which rejects
// some calls (410), answers 503 to some first attempts, acts and then drops the connection on
// others, and is down (503 on every attempt) for a few rows during the first run only.
//
// During that first run another editor (the emulator's hook, before the sheet requests of
// Run's Applies) sorts the tab by a random column in either direction, and sometimes inserts
// rows of another source or deletes them (never a fixture row, never a cell edit). It moves
// rows before about half of the reads, and before three writes in four:
//   - "bounded": only the first three writes of each Apply (the store locates an edit again
//     for up to four write rounds, so every edit must be placed: no conflict, no refusal, no
//     write error but the store's report of a row inserted between its read and its write);
//   - "steady": every write, without a bound (conflicts may then be reported; nothing of
//     ours may stay on another row without an error saying so).
//
// Then the receiver is healthy again and a quiet rerun (no hook) replays every row still
// waiting.
//
// Asserted, in both modes:
//   - no payload was ever sent under two keys, and every request carried its own row's key
//     (the key cell's, the payload's id, or the minted one computed from the row's content);
//   - the receiver acted once per key, on that key's own payload, never on a rejected call's,
//     a skipped row's or an unrelated row's;
//   - right after every Apply that returned no error, the sheet is exactly what it was before
//     that Apply plus the edits it reported applied, on their own rows (fixture rows found by
//     their payload, which triage never writes): nothing else changed, every key is on its own
//     row; rows the other editor inserted may only have cells cleared that the Apply reported
//     (model.Damage);
//   - at the end every fixture row is on the sheet once, ends as its receiver answered (410 →
//     rejected with the error; everything else delivered), with its own key and attempts =
//     the attempts before + every request the receiver got for its key (steady: what the last
//     outcome written says, since a conflicting write-back is not written); skipped rows and
//     the other editor's rows are as they were. When an Apply failed ("fix by hand"), the
//     rows that end wrong are summarised in one failure: nobody fixed them before the rerun.
//
// The other editor's rows inserted during the run are blank in the columns triage writes
// (status, error, attempts, key, replayed_at: a row inserted a moment ago), except in the
// "inserted-rows-hold-a-status" case, where they hold a status ("discarded", as a row pasted
// or moved in from elsewhere would).
func TestReplayUnderSortStormThenQuietRerun(t *testing.T) {
	for _, tc := range []struct {
		seed           uint64
		n              int
		steady         bool
		insertedStatus string
	}{
		{1, 140, false, ""}, {2, 200, false, ""}, {3, 300, false, ""},
		{2, 200, false, "discarded"},
		{4, 160, true, ""}, {10, 250, true, ""},
	} {
		name := fmt.Sprintf("bounded-seed%d-%drows", tc.seed, tc.n)
		if tc.steady {
			name = fmt.Sprintf("steady-seed%d-%drows", tc.seed, tc.n)
		}
		if tc.insertedStatus != "" {
			name += "-inserted-rows-hold-a-status"
		}
		if testing.Short() && tc.seed != 1 && tc.seed != 4 {
			continue
		}
		t.Run(name, func(t *testing.T) {
			stormReplay(t, tc.seed, tc.n, tc.steady, tc.insertedStatus)
		})
	}
}

const (
	stormID  = "storm"
	stormTab = "failed_calls"
	// stormOther is the source of the other editor's rows: no url_prefixes are configured
	// for it, and triage never writes them.
	stormOther = "other"
	stormURL   = "https://other.example/in"
)

// The fault a fixture row's calls meet at the receiver.
const (
	fOK      = "ok"       // delivered at once
	fReject  = "reject"   // 410 on every attempt: rejected
	f503Once = "503-once" // 503, then delivered
	fDrop    = "drop"     // acts, drops the connection, then answers duplicate
	fDown    = "down"     // 503 on every attempt of the first run; healthy in the rerun
)

// stormRow is one fixture row and what must become of it.
type stormRow struct {
	r       row
	key     string // its own key: key cell, payload id, or minted
	origin  string // "cell", "payload", "minted"
	fault   string
	waiting bool // dead or blank: replayed; else skipped and never written
}

// stormSheet is the emulator behind a real server with a real store over it.
type stormSheet struct {
	emu   *emulator.Emulator
	store *sheets.Store
	tc    model.TabConfig
}

func newStormSheet(t *testing.T, tc model.TabConfig, grid [][]any) *stormSheet {
	t.Helper()
	sh := testbed.NewSheets(t, &emulator.Workbook{SpreadsheetID: stormID, Title: "Storm", TimeZone: "Etc/UTC",
		Sheets: []*emulator.Sheet{{Title: stormTab, Rows: grid, RowCount: len(grid) + 20}}})
	return &stormSheet{emu: sh.Emu, store: sh.Store(sheets.Options{SpreadsheetID: stormID, Tabs: []model.TabConfig{tc}}), tc: tc}
}

func (s *stormSheet) load(t *testing.T) *model.Table {
	t.Helper()
	return loadDeadLetters(t, s.store)
}

// stormContent is a tab as text rows by lower-cased header (empty cells left out), and the
// 1-based row of each.
func stormContent(cells [][]any) (rows []map[string]string, at []int) {
	if len(cells) == 0 {
		return nil, nil
	}
	var header []string
	for _, h := range cells[0] {
		header = append(header, strings.ToLower(model.CellString(h)))
	}
	for r, raw := range cells[1:] {
		m := map[string]string{}
		for c, v := range raw {
			if c < len(header) {
				if sv := model.CellString(v); sv != "" {
					m[header[c]] = sv
				}
			}
		}
		if len(m) > 0 {
			rows, at = append(rows, m), append(at, r+2)
		}
	}
	return rows, at
}

// recordingStore is the store Run writes through: it records every Apply, its result, and
// the sheet right before and right after it (the other editor moves rows only inside the
// Apply, before its requests, and never edits a cell).
type recordingStore struct {
	st      replay.Store
	snap    func() [][]any
	onStart func()
	mu      sync.Mutex
	calls   []recordedApply
}

type recordedApply struct {
	edits         []model.Edit
	res           model.ApplyResult
	err           error
	before, after [][]any
}

func (r *recordingStore) Apply(ctx context.Context, edits []model.Edit) (model.ApplyResult, error) {
	before := r.snap()
	if r.onStart != nil {
		r.onStart()
	}
	res, err := r.st.Apply(ctx, edits)
	after := r.snap()
	r.mu.Lock()
	r.calls = append(r.calls, recordedApply{edits: slices.Clone(edits), res: res, err: err, before: before, after: after})
	r.mu.Unlock()
	return res, err
}

func (r *recordingStore) recorded() []recordedApply {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// stormEditor is the other editor of a storm: it moves rows as another person in the Sheets
// UI would, sorting by a random column in either direction (7 in 10 changes), inserting rows
// of another source (2 in 10), deleting rows of another source (1 in 10), one or two changes
// at a time, before half the reads and three writes in four. It never edits a cell and never
// deletes a fixture row. status is the status cell of the rows it makes; perApply bounds the
// writes of one Apply that it moves rows before (0: no bound).
func stormEditor(t *testing.T, seed uint64, perApply int, status *string) *testbed.Adversary {
	return testbed.NewAdversary(t, seed, testbed.AdversaryTab{SpreadsheetID: stormID, Tab: stormTab, Anchor: 3,
		NewRow: func(rng *rand.Rand, n int) []any {
			p := fmt.Sprintf(`{"other":%d,"r":%d}`, n, rng.IntN(1e6))
			ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.IntN(60*24*30)) * time.Minute).Format(time.RFC3339)
			row := []any{ts, stormOther, stormURL, p, nil, nil, nil, nil, nil, nil}
			if *status != "" {
				row[cStatus] = *status
			}
			return row
		}},
		testbed.Odds{BeforeRead: 0.5, BeforeWrite: 0.75, WritesPerRound: perApply, Sort: 7, Insert: 2, Delete: 1, Changes: 2, InsertRows: 2})
}

// stormOthers is what the other editor's rows hold, by payload, as text by lower-cased
// header: those still on the sheet (on) and every one it made (made); and each one's identity
// (id: minted keys, as their key cells are empty).
type stormOthers struct {
	on, made map[string]map[string]string
	id       map[string]string
}

func othersOf(ed *testbed.Adversary) stormOthers {
	content := func(rows map[string][]any) map[string]map[string]string {
		out := map[string]map[string]string{}
		for p, row := range rows {
			m, _ := stormContent([][]any{anyRow(dlHeader), row})
			out[p] = m[0]
		}
		return out
	}
	o := stormOthers{on: content(ed.Own()), made: content(ed.Made()), id: map[string]string{}}
	for p, m := range o.made {
		o.id[p] = model.MintKey(stormOther, stormURL, p, m["timestamp"])
	}
	return o
}

func stormReplay(t *testing.T, seed uint64, n int, steady bool, insertedStatus string) {
	rng := rand.New(rand.NewPCG(seed, 0x5047))
	var phase atomic.Int32 // 1: the stormy run; 2: the quiet rerun
	phase.Store(1)

	rcv := receiver.New()
	faults := map[string]string{} // key → fault
	var fmu sync.Mutex
	rcv.Rule = func(key string, attempt int) (receiver.Fault, bool) {
		fmu.Lock()
		f := faults[key]
		fmu.Unlock()
		switch f {
		case fReject:
			return receiver.Fault{Mode: receiver.Status, Status: http.StatusGone}, true
		case f503Once:
			if attempt == 1 {
				return receiver.Fault{Mode: receiver.Unavailable}, true
			}
		case fDrop:
			if attempt == 1 {
				return receiver.Fault{Mode: receiver.DropAfterAct}, true
			}
		case fDown:
			if phase.Load() == 1 {
				return receiver.Fault{Mode: receiver.Unavailable}, true
			}
		}
		return receiver.Fault{}, false
	}
	srv := serve(t, rcv)

	tc := dlConfig
	tc.BodyKeyFields = map[string]string{"crm": "id"}
	hm, err := model.MapHeaders(tc, dlHeader)
	if err != nil {
		t.Fatal(err)
	}

	// The fixture.
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var fixture []stormRow
	waitingN := 0
	for i := range n {
		r := row{
			ts:       base.Add(time.Duration(rng.IntN(60*24*60)) * time.Minute).Format(time.RFC3339),
			source:   "crm",
			url:      srv.URL + "/crm/hook",
			attempts: strconv.Itoa(rng.IntN(3)),
			status:   []string{"dead", "dead", ""}[rng.IntN(3)],
		}
		sr := stormRow{waiting: true}
		switch x := rng.IntN(10); {
		case x < 4:
			r.key = fmt.Sprintf("k-%d-%d", seed, i)
			r.payload = fmt.Sprintf(`{"order":%d,"amount":%d}`, i, rng.IntN(1000))
			sr.origin = "cell"
		case x < 7:
			r.payload = fmt.Sprintf(`{"id":"p-%d-%d","order":%d}`, seed, i, i)
			sr.origin = "payload"
		default:
			r.payload = fmt.Sprintf(`{"order":%d,"note":"minted ünïcode %d"}`, i, rng.IntN(1000))
			sr.origin = "minted"
		}
		if rng.IntN(12) == 0 {
			// Not waiting: skipped by the run, never written.
			sr.waiting = false
			if sr.origin == "minted" {
				r.key, sr.origin = r.minted(), "cell"
			}
			r.finishAtRandom(rng)
		}
		key := effectiveKey(t, tc, hm, r, i)
		sr.key, sr.r = key, r
		if sr.waiting {
			waitingN++
			switch x := rng.IntN(10); {
			case waitingN%37 == 0:
				// Spaced out: three retryable rows in a row would halt the run.
				sr.fault = fDown
			case x == 0:
				sr.fault = fReject
			case x == 1:
				sr.fault = f503Once
			case x == 2:
				sr.fault = fDrop
			default:
				sr.fault = fOK
			}
			faults[key] = sr.fault
		}
		fixture = append(fixture, sr)
	}
	byPayload := map[string]*stormRow{}
	byKey := map[string]*stormRow{}
	for i := range fixture {
		fr := &fixture[i]
		if byPayload[fr.r.payload] != nil || byKey[fr.key] != nil {
			t.Fatalf("fixture: payload or key twice: %s", fr.r.payload)
		}
		byPayload[fr.r.payload], byKey[fr.key] = fr, fr
	}

	// The grid: header, fixture rows, and some rows of the other editor's among them.
	perApply, status := 3, "discarded"
	if steady {
		perApply = 0
	}
	ed := stormEditor(t, seed, perApply, &status)
	grid := [][]any{anyRow(dlHeader)}
	for _, fr := range fixture {
		if rng.IntN(8) == 0 {
			grid = append(grid, ed.MakeRow())
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
	sh := newStormSheet(t, tc, grid)
	ed.Attach(sh.emu)
	snap := func() [][]any { return sh.emu.Cells(stormID, stormTab) }

	// One source, one row at a time: rows finish in plan order, so every write-back batch,
	// and with it every move of the other editor (its rng is drawn only in the hook, before
	// the sheet requests, which are sequential), is the same on every run.
	crm := &replay.Source{Name: "crm", URLPrefixes: []string{srv.URL + "/crm/"}, Concurrency: 1}
	c := fastClient(crm)
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	c.Now = func() time.Time { return now }

	// The stormy run: one move between the load and the run, then the hook.
	tab := sh.load(t)
	status = insertedStatus
	ed.Move("between the load and the run")
	sh.emu.SetHook(ed.Hook)
	rec := &recordingStore{st: sh.store, snap: snap, onStart: ed.StartRound}
	sum1 := replay.Run(context.Background(), c, rec, tab, records(tab), replay.RunOptions{Concurrency: 6, FlushInterval: time.Hour})
	sh.emu.SetHook(nil)
	t.Logf("stormy run: %v; halted %v; %d writes; other editor: %v", sum1.Counts, sum1.Halted, sum1.WriteRequests, ed.Counts())

	calls := rec.recorded()
	failed := checkEveryApply(t, "stormy run", calls, byPayload, byKey, othersOf(ed), 0)
	checkStormRun(t, sum1, calls, byKey, steady)

	// The quiet rerun of everything still waiting.
	phase.Store(2)
	tab = sh.load(t)
	rec2 := &recordingStore{st: sh.store, snap: snap}
	sum2 := replay.Run(context.Background(), c, rec2, tab, records(tab), replay.RunOptions{Concurrency: 6, FlushInterval: time.Hour})
	t.Logf("quiet rerun: %v; halted %v; %d writes", sum2.Counts, sum2.Halted, sum2.WriteRequests)
	calls2 := rec2.recorded()
	failed += checkEveryApply(t, "quiet rerun", calls2, byPayload, byKey, othersOf(ed), failed)
	for _, call := range calls2 {
		if len(call.res.Damaged) > 0 {
			t.Errorf("quiet rerun: nothing moved, yet damage was reported: %v", call.res.Damaged)
		}
	}
	if sum2.Halted != nil || len(sum2.WriteConflicts) > 0 || len(sum2.WriteErrors) > 0 || len(sum2.NotAttempted) > 0 {
		t.Errorf("quiet rerun: halted %v, conflicts %v, write errors %.500q, not attempted %v", sum2.Halted, sum2.WriteConflicts, sum2.WriteErrors, sum2.NotAttempted)
	}
	var refused2 []string
	for _, rf := range sum2.Refused {
		// The other editor's rows with a blank status are waiting rows of a source that is
		// not configured.
		if !rf.Skipped && !strings.Contains(rf.Reason, `source "other" is not configured`) {
			refused2 = append(refused2, rf.Reason)
		}
	}
	if len(refused2) > 0 {
		t.Errorf("quiet rerun refused %d rows; the first: %s", len(refused2), strings.Join(refused2[:min(3, len(refused2))], "\n  "))
	}

	checkStormReceiver(t, rcv, byPayload, byKey)
	wrong := checkStormFinal(t, snap(), rcv, othersOf(ed), append(calls, calls2...), byPayload, steady, now)
	if len(wrong) > 0 {
		if failed > 0 {
			t.Errorf("%d rows end wrong after %d Applies that failed and said to fix rows by hand (nobody did: values of ours, keys included, stayed on other rows into the quiet rerun); the first:\n%s",
				len(wrong), failed, strings.Join(wrong[:min(5, len(wrong))], "\n"))
		} else {
			for _, w := range wrong {
				t.Error(w)
			}
		}
	}
}

// checkEveryApply compares the sheet right after each Apply with the sheet right before it
// plus the edits it reported applied, and returns how many Applies failed.
func checkEveryApply(t *testing.T, run string, calls []recordedApply, byPayload, byKey map[string]*stormRow, others stormOthers, failedBefore int) int {
	t.Helper()
	inserted := others.id
	otherID := map[string]bool{}
	for _, id := range inserted {
		otherID[id] = true
	}
	failed := 0
	for i, call := range calls {
		label := fmt.Sprintf("%s, Apply %d of %d (%d edits)", run, i+1, len(calls), len(call.edits))
		broken := failedBefore+failed > 0
		if n := len(call.res.Applied) + len(call.res.Conflicts) + len(call.res.Missing); call.err == nil && n != len(call.edits) {
			t.Errorf("%s: %d edits, %d outcomes", label, len(call.edits), n)
		}
		damaged := map[string]bool{}
		for _, d := range call.res.Damaged {
			damaged[d.ID] = true
			if !otherID[d.ID] && !broken {
				t.Errorf("%s: damage reported on a row the other editor did not insert: %s", label, d)
			}
		}
		// The rows as they must be: before, plus what was reported applied.
		beforeRows, _ := stormContent(call.before)
		want := map[string]map[string]string{}
		for _, r := range beforeRows {
			want[r["payload"]] = r
		}
		if call.err != nil {
			failed++
			t.Errorf("%s failed: %v", label, call.err)
			continue
		}
		if broken {
			// An earlier Apply failed and said to fix rows by hand: keys may be on other
			// rows, so an edit's ID no longer names its fixture row.
			continue
		}
		for _, a := range call.res.Applied {
			fr := byKey[a.Edit.ID]
			if fr == nil {
				t.Errorf("%s: applied an edit of %q, no fixture row's key", label, a.Edit.ID)
				continue
			}
			w := want[fr.r.payload]
			for f, v := range a.Edit.Set {
				if v == "" {
					delete(w, string(f))
				} else {
					w[string(f)] = v
				}
			}
		}
		reported := map[string]string{}
		for _, cf := range call.res.Conflicts {
			reported[cf.Edit.ID] = "conflict: " + cf.String()
		}
		for _, m := range call.res.Missing {
			reported[m.ID] = "missing"
		}
		afterRows, at := stormContent(call.after)
		seen := map[string]bool{}
		for j, r := range afterRows {
			p := r["payload"]
			seen[p] = true
			w, known := want[p]
			switch {
			case byPayload[p] != nil:
				if !maps.Equal(w, r) {
					fr := byPayload[p]
					why := reported[fr.key]
					if why == "" {
						why = "reported applied, or not in this Apply"
					}
					t.Errorf("%s: row %d (%s) right after the Apply:\n  holds %s\n  want  %s\n  (its edit: %s)", label, at[j], fr.key, sortedMap(r), sortedMap(w), why)
				}
			case r["source"] == stormOther:
				orig, ok := inserted[p]
				if !ok {
					t.Errorf("%s: a row of source other the other editor never made: %v", label, r)
					continue
				}
				if !known {
					continue // inserted during this Apply: compared with what it was made with below
				}
				if maps.Equal(w, r) {
					continue
				}
				if !damaged[orig] {
					t.Errorf("%s: row %d of the other editor's changed, no damage reported:\n  holds %s\n  held  %s", label, at[j], sortedMap(r), sortedMap(w))
					continue
				}
				for k, v := range r {
					if w[k] != v {
						t.Errorf("%s: damaged row %d holds %s=%q, it held %q (a damaged cell is cleared, never left with our value)", label, at[j], k, v, w[k])
					}
				}
			default:
				t.Errorf("%s: a row that is no one's: %v", label, r)
			}
		}
		for p := range want {
			if byPayload[p] != nil && !seen[p] {
				t.Errorf("%s: fixture row of payload %s is gone", label, p)
			}
		}
		// Rows the other editor inserted during this Apply hold what it made them with, or
		// less where damage was reported.
		for _, r := range afterRows {
			p := r["payload"]
			if _, known := want[p]; known || r["source"] != stormOther {
				continue
			}
			made := others.made[p]
			for k, v := range r {
				if made[k] != v {
					t.Errorf("%s: a row inserted during the Apply holds %s=%q, it was made with %q", label, k, v, made[k])
				}
			}
			if !maps.Equal(made, r) && !damaged[inserted[p]] {
				t.Errorf("%s: a row inserted during the Apply lost cells, no damage reported: %s, made %s", label, sortedMap(r), sortedMap(made))
			}
		}
	}
	return failed
}

// checkStormRun: what the first run reports. Bounded: nothing the other editor can't have
// caused (the one write error it can cause is the store's report of damage to a row it
// inserted), and every row ends its run as its receiver answered. Steady: conflicts and
// refusals say rows kept moving.
func checkStormRun(t *testing.T, sum model.ReplaySummary, calls []recordedApply, byKey map[string]*stormRow, steady bool) {
	t.Helper()
	if sum.Halted != nil && sum.Halted.Cause == "systemic" {
		t.Errorf("stormy run halted: %v", sum.Halted)
	}
	damageText := map[string]bool{}
	for _, call := range calls {
		for _, d := range call.res.Damaged {
			damageText[d.String()] = true
		}
	}
	var otherErrors []string
	for _, e := range sum.WriteErrors {
		if !damageText[e] {
			otherErrors = append(otherErrors, e)
		}
	}
	var refused []string
	for _, rf := range sum.Refused {
		if !rf.Skipped && !strings.Contains(rf.Reason, `source "other" is not configured`) {
			refused = append(refused, rf.Reason)
		}
	}
	if steady {
		t.Logf("steady: %d write conflicts, %d write errors, %d refused", len(sum.WriteConflicts), len(otherErrors), len(refused))
		for _, c := range sum.WriteConflicts {
			if !strings.Contains(c.Reason, "kept changing") {
				t.Errorf("write-back conflict that is not rows moving past the bound (no cell was edited): %s", c)
			}
		}
		return
	}
	if len(sum.WriteConflicts) > 0 || len(otherErrors) > 0 {
		t.Errorf("stormy run: write conflicts %v, write errors %.1000q (rows only moved, within the store's bound)", sum.WriteConflicts, otherErrors)
	}
	if len(refused) > 0 {
		t.Errorf("stormy run refused %d rows the other editor only moved; the first: %s", len(refused), refused[0])
	}
	for _, r := range sum.Rows {
		fr := byKey[r.ID]
		if fr == nil {
			t.Errorf("run row %q (key %q) is no fixture row's", r.ID, r.Key)
			continue
		}
		if r.Key != fr.key {
			t.Errorf("row of payload %s was sent with key %q, its own is %q", fr.r.payload, r.Key, fr.key)
		}
		if r.State == model.StateNotAttempted && sum.Halted != nil || r.State == model.StateRefused {
			continue
		}
		want := map[string]model.RowState{fOK: "delivered", f503Once: "delivered", fDrop: "duplicate", fReject: "rejected", fDown: "retryable"}[fr.fault]
		if r.State != want {
			t.Errorf("row %s (%s): state %q after %d attempts (%s), want %q", fr.key, fr.fault, r.State, r.Attempts, r.Detail, want)
		}
	}
}

// checkStormReceiver: no payload under two keys, every request under its row's own key, one
// effect per key on its own payload.
func checkStormReceiver(t *testing.T, rcv *receiver.Receiver, byPayload, byKey map[string]*stormRow) {
	t.Helper()
	n := 0
	errorf := func(format string, a ...any) {
		if n++; n <= 12 {
			t.Errorf(format, a...)
		}
	}
	defer func() {
		if n > 12 {
			t.Errorf("... and %d more problems at the receiver", n-12)
		}
	}()
	checkSentUnderOwnKeys(rcv.Attempts(), func(p string) (*row, string, bool) {
		if fr := byPayload[p]; fr != nil {
			return &fr.r, fr.key, fr.waiting
		}
		return nil, "", false
	}, errorf)
	eff := rcv.Effects()
	for k, n := range eff {
		fr := byKey[k]
		switch {
		case n != 1:
			errorf("the receiver acted %d times for key %q", n, k)
		case fr == nil:
			errorf("the receiver acted for key %q, no fixture row's", k)
		case string(rcv.EffectBody(k)) != fr.r.payload:
			errorf("the receiver acted for key %q on %q, its row's payload is %q", k, rcv.EffectBody(k), fr.r.payload)
		case fr.fault == fReject || !fr.waiting:
			errorf("the receiver acted for %q (%s, waiting %v)", k, fr.fault, fr.waiting)
		}
	}
	for _, fr := range byPayload {
		if fr.waiting && fr.fault != fReject && eff[fr.key] != 1 {
			errorf("row %s (%s) never acted at the receiver", fr.key, fr.fault)
		}
	}
}

// checkStormFinal: the sheet at the end, row by row.
//
// The attempts cell: bounded, every outcome was written back, so it is the attempts before
// plus every request the receiver got for the row's key. Steady, an outcome that was a
// conflict was not written (replaying again is harmless, and did happen), so it is what the
// last outcome written for the row says.
func checkStormFinal(t *testing.T, cells [][]any, rcv *receiver.Receiver, others stormOthers, calls []recordedApply, byPayload map[string]*stormRow, steady bool, now time.Time) (wrong []string) {
	t.Helper()
	errorf := func(format string, a ...any) { wrong = append(wrong, fmt.Sprintf(format, a...)) }
	damaged := map[string]bool{}
	lastAttempts := map[string]string{}
	for _, call := range calls {
		for _, d := range call.res.Damaged {
			damaged[d.ID] = true
		}
		for _, a := range call.res.Applied {
			if v, ok := a.Edit.Set[model.FAttempts]; ok {
				lastAttempts[a.Edit.ID] = v
			}
		}
	}
	rows, _ := stormContent(cells)
	perKey := attemptsByKey(rcv)
	seen := map[string]int{}
	for _, r := range rows {
		p := r["payload"]
		seen[p]++
		if r["source"] == stormOther {
			want, ok := others.on[p]
			switch {
			case !ok:
				errorf("a row of the other editor's that it deleted or never made: %v", r)
			case maps.Equal(want, r):
			case !damaged[others.id[p]]:
				errorf("a row of the other editor's changed, no damage reported for it: it holds %s, it held %s", sortedMap(r), sortedMap(want))
			}
			continue
		}
		fr := byPayload[p]
		if fr == nil {
			errorf("a row that is no fixture row's: %v", r)
			continue
		}
		want := map[string]string{}
		for c, v := range fr.r.cells() {
			if v != "" {
				want[dlHeader[c]] = v
			}
		}
		if fr.waiting {
			prev, _ := strconv.Atoi(fr.r.attempts)
			want["key"] = fr.key
			want["attempts"] = strconv.Itoa(prev + len(perKey[fr.key]))
			if steady {
				want["attempts"] = lastAttempts[fr.key]
				if n, _ := strconv.Atoi(r["attempts"]); n > prev+len(perKey[fr.key]) {
					errorf("row %s: attempts %d, more than the %d before and the %d requests sent", fr.key, n, prev, len(perKey[fr.key]))
				}
			}
			want["replayed_at"] = model.FormatTime(now)
			delete(want, "error")
			if fr.fault == fReject {
				want["status"] = "rejected"
				want["error"] = r["error"]
				if !strings.HasPrefix(r["error"], "410 ") {
					errorf("rejected row %s: error %q", fr.key, r["error"])
				}
			} else {
				want["status"] = "delivered"
			}
		}
		if !maps.Equal(want, r) {
			errorf("row %s (%s, %s, waiting %v) ends\n  %s\nwant\n  %s", fr.key, fr.origin, fr.fault, fr.waiting, sortedMap(r), sortedMap(want))
		}
	}
	for p, fr := range byPayload {
		if seen[p] != 1 {
			errorf("fixture row %s is on the sheet %d times", fr.key, seen[p])
		}
	}
	for p := range others.on {
		if seen[p] != 1 {
			errorf("the other editor's row %s is on the sheet %d times", p, seen[p])
		}
	}
	return wrong
}
