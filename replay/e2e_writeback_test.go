package replay_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
)

// TestWriteBackThroughSheetsStore: outcomes land on the emulated sheet through the real store,
// in at most ceil(N/50)+1 write requests (the +1 is the write before sending: the minted
// keys and the check of every row).
func TestWriteBackThroughSheetsStore(t *testing.T) {
	const n = 120
	rcv := receiver.New()
	faults := map[string]receiver.Fault{}
	// Rejected rows every 10th row; retryable ones every 40th, far enough apart that many
	// delivered rows always finish between two of them (three in a row would halt the run).
	for i := 0; i < n; i += 10 {
		faults[fmt.Sprintf("k-%d", i+3)] = receiver.Fault{Mode: receiver.Status, Status: 410}
	}
	for i := 0; i < n; i += 40 {
		faults[fmt.Sprintf("k-%d", i+7)] = receiver.Fault{Mode: receiver.Unavailable}
	}
	rcv.Rule = byKey(faults)
	srv := serve(t, rcv)
	rows := keyRows(n, "crm", srv.URL+"/hook")
	for i := range rows {
		if i%10 == 5 {
			rows[i].key = "" // minted
		}
	}
	f := newSheetFixture(t, rows)
	tab := f.load(t)
	src := &replay.Source{Name: "crm", URLPrefixes: []string{srv.URL}, MaxAttempts: 2}
	c := fastClient(src)
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	c.Now = func() time.Time { return now }
	f.emu.ResetCounts()
	// FlushInterval out of the way: on a loaded machine the run may take longer than the
	// default 2s, and a timed flush would add write requests; this test counts the batching
	// by size (TestWriteBackFlushInterval covers the timed flush on a fake clock).
	sum := replay.Run(context.Background(), c, f.store, tab, records(tab), replay.RunOptions{Concurrency: 8, FlushInterval: time.Hour})
	if sum.Halted != nil || len(sum.WriteErrors) != 0 || len(sum.WriteConflicts) != 0 {
		t.Fatalf("halted %v, write errors %v, conflicts %v", sum.Halted, sum.WriteErrors, sum.WriteConflicts)
	}
	// The lease, the check before sending, a write-back per 50 rows, the release.
	limit := (n+49)/50 + 3
	if sum.WriteRequests > limit {
		t.Errorf("%d write requests, want ≤ %d", sum.WriteRequests, limit)
	}
	if got := f.emu.Count("spreadsheets.batchUpdate"); got != sum.WriteRequests {
		t.Errorf("emulator saw %d batchUpdates, summary says %d", got, sum.WriteRequests)
	}
	for i := range n {
		k := fmt.Sprintf("k-%d", i)
		status, attempts, errText := "delivered", "2", ""
		switch {
		case i%10 == 3:
			status, errText = "rejected", "410 from crm: rejected"
		case i%40 == 7:
			status, attempts, errText = "dead", "3", "503 Service Unavailable from crm (after 2 attempts)"
		case i%10 == 5:
			k = rows[i].minted()
		}
		got := []string{f.cell(i, cStatus), f.cell(i, cAttempts), f.cell(i, cError), f.cell(i, cReplayedAt), f.cell(i, cKey)}
		want := []string{status, attempts, errText, "2026-05-06T07:08:09Z", k}
		if !strings.HasPrefix(got[2], want[2]) || got[0] != want[0] || got[1] != want[1] || got[3] != want[3] || got[4] != want[4] {
			t.Errorf("row %d: %q, want %q", i+2, got, want)
		}
	}
	// Reloaded: the next bulk run has nothing but the retryable rows to send.
	tab = f.load(t)
	jobs, refused := replay.Plan(tab, records(tab), c.Sources, now, false)
	if len(jobs) != n/40 || len(refused) != n-n/40 {
		t.Errorf("after the run: %d to replay, %d skipped", len(jobs), len(refused))
	}
	t.Logf("%d rows: %d write requests (limit %d), emulator counts %v", n, sum.WriteRequests, limit, f.emu.Counts())
}

// keyWatch is a receiver that, as each request arrives, looks for its key in the emulated
// sheet's key column (set f before the run), and keeps the keys it did not find there.
type keyWatch struct {
	rcv  *receiver.Receiver
	f    *sheetFixture
	mu   sync.Mutex
	miss []string
}

func (k *keyWatch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key")
	found := false
	for _, row := range k.f.emu.Cells(k.f.id, e2eTab) {
		if len(row) > cKey && model.CellString(row[cKey]) == key {
			found = true
		}
	}
	if !found {
		k.mu.Lock()
		k.miss = append(k.miss, key)
		k.mu.Unlock()
	}
	k.rcv.ServeHTTP(w, r)
}

// missing are the keys of requests that arrived before their key was on the sheet.
func (k *keyWatch) missing() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.miss...)
}

// TestMintedKeyOnEmulatedSheetBeforeRequest: when each request arrives, the receiver finds its
// key in the emulated sheet's key column.
func TestMintedKeyOnEmulatedSheetBeforeRequest(t *testing.T) {
	kw := &keyWatch{rcv: receiver.New()}
	srv := serve(t, kw)
	rows := keyRows(12, "crm", srv.URL+"/hook")
	for i := range rows {
		rows[i].key = ""
	}
	f := newSheetFixture(t, rows)
	kw.f = f
	tab := f.load(t)
	src := &replay.Source{Name: "crm", URLPrefixes: []string{srv.URL}}
	sum := replay.Run(context.Background(), fastClient(src), f.store, tab, records(tab), replay.RunOptions{Concurrency: 4})
	if missing := kw.missing(); len(missing) > 0 {
		t.Fatalf("requests arrived before their key was on the sheet: %v", missing)
	}
	if sum.Counts["delivered"] != 12 || len(kw.rcv.Effects()) != 12 {
		t.Fatalf("counts %v, effects %d", sum.Counts, len(kw.rcv.Effects()))
	}
	for i := range rows {
		if k := f.cell(i, cKey); k != rows[i].minted() {
			t.Errorf("row %d key cell %q, want %q", i+2, k, rows[i].minted())
		}
	}
}

// TestPayloadKeyOnEmulatedSheetBeforeRequest: through the real store, a key taken from the
// payload is in the key cell when the request arrives, written in the same request as the
// minted key; a key cell another session filled with the same key meanwhile is fine.
func TestPayloadKeyOnEmulatedSheetBeforeRequest(t *testing.T) {
	kw := &keyWatch{rcv: receiver.New()}
	srv := serve(t, kw)
	u := srv.URL + "/hook"
	rows := []row{
		{source: "form", url: u, payload: `{"id":"p-1","x":1}`, status: "dead"},
		{source: "form", url: u, payload: `{"x":2}`, status: "dead"},
		{source: "form", url: u, payload: `{"id":"p-3"}`, status: "dead"}, // saved by another session
	}
	tc := formKeys()
	f := newSheetFixtureTC(t, tc, rows)
	kw.f = f
	tab := f.load(t)
	if err := f.emu.SetCell(f.id, e2eTab, 4, cKey, "p-3"); err != nil {
		t.Fatal(err)
	}
	f.emu.ResetCounts()
	src := &replay.Source{Name: "form", URLPrefixes: []string{srv.URL}}
	sum := replay.Run(context.Background(), fastClient(src), f.store, tab, records(tab), replay.RunOptions{FlushInterval: time.Hour})
	if missing := kw.missing(); len(missing) > 0 {
		t.Fatalf("requests arrived before their key was on the sheet: %v", missing)
	}
	if sum.Counts["delivered"] != 3 || len(sum.Refused) != 0 || len(sum.WriteConflicts) != 0 || len(sum.WriteErrors) != 0 {
		t.Fatalf("counts %v refused %+v conflicts %v errors %v", sum.Counts, sum.Refused, sum.WriteConflicts, sum.WriteErrors)
	}
	// The rows' lease, one write before sending (the keys and the check of every row), one
	// outcome write, and the lease's release.
	if n := f.emu.Count("spreadsheets.batchUpdate"); n != 4 || sum.WriteRequests != 4 {
		t.Errorf("%d batchUpdates (summary %d), want 4", n, sum.WriteRequests)
	}
	for i, want := range []string{"p-1", rows[1].minted(), "p-3"} {
		if k := f.cell(i, cKey); k != want {
			t.Errorf("row %d key cell %q, want %q", i+2, k, want)
		}
		if s := f.cell(i, cStatus); s != "delivered" {
			t.Errorf("row %d status %q", i+2, s)
		}
	}
}

// TestStaleRowsNotSentThroughSheetsStore: through the real store, rows changed on the sheet
// since the load are refused by the one write before sending, and left as they are: a key
// cell corrected (k-1 → k-1b), a row discarded, one delivered by another session, and a
// minted-key row whose key another session saved before discarding it (the store reports the
// key cell's conflict first, so only the separate status check catches it).
func TestStaleRowsNotSentThroughSheetsStore(t *testing.T) {
	rcv, srv, u := destination(t)
	rows := keyRows(5, "crm", u)
	rows[4].key = ""
	f := newSheetFixture(t, rows)
	tab := f.load(t)
	minted := rows[4].minted()
	for _, c := range []struct {
		row, col int
		v        string
	}{{3, cKey, "k-1b"}, {4, cStatus, "discarded"}, {5, cStatus, "delivered"}, {6, cKey, minted}, {6, cStatus, "discarded"}} {
		if err := f.emu.SetCell(f.id, e2eTab, c.row, c.col, c.v); err != nil {
			t.Fatal(err)
		}
	}
	f.emu.ResetCounts()
	src := &replay.Source{Name: "crm", URLPrefixes: []string{srv.URL}}
	sum := replay.Run(context.Background(), fastClient(src), f.store, tab, records(tab), replay.RunOptions{FlushInterval: time.Hour})
	got := attemptsByKey(rcv)
	if len(got) != 1 || len(got["k-0"]) != 1 {
		t.Fatalf("sent %v, want only k-0", keysOf(got))
	}
	want := map[int]string{
		3: `no row has the key "k-1" any more`,
		4: `status was "dead" when you looked, is "discarded" now`,
		5: `status was "dead" when you looked, is "delivered" now`,
		6: `status was "dead" when you looked, is "discarded" now`,
	}
	if len(sum.Refused) != len(want) {
		t.Fatalf("refused %+v", sum.Refused)
	}
	for _, r := range sum.Refused {
		if !strings.Contains(r.Reason, "its row changed since it was loaded") || !strings.Contains(r.Reason, want[r.Row]) {
			t.Errorf("row %d refused %q, want %q", r.Row, r.Reason, want[r.Row])
		}
	}
	// The check before sending finds every key already in its cell: it reads, and writes
	// nothing (only changed cells are written); the outcomes are one write, between the
	// rows' lease and its release.
	if n := f.emu.Count("spreadsheets.batchUpdate"); n != 3 || sum.WriteRequests != 4 || len(sum.WriteConflicts) != 0 || len(sum.WriteErrors) != 0 {
		t.Errorf("%d batchUpdates (summary %d), conflicts %v, errors %v", n, sum.WriteRequests, sum.WriteConflicts, sum.WriteErrors)
	}
	for i, w := range [][]string{{"delivered", "2", "k-0"}, {"dead", "1", "k-1b"}, {"discarded", "1", "k-2"}, {"delivered", "1", "k-3"}, {"discarded", "1", minted}} {
		if g := []string{f.cell(i, cStatus), f.cell(i, cAttempts), f.cell(i, cKey)}; strings.Join(g, ",") != strings.Join(w, ",") {
			t.Errorf("row %d: %q, want %q", i+2, g, w)
		}
	}
}
