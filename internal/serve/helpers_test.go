package serve

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
	"github.com/triage-dev/triage/tui"
)

const sheetID = "hub-sheet"

// API method names as the emulator counts them.
const (
	mGet         = "spreadsheets.get"
	mBatchGet    = "values.batchGet"
	mBatchUpdate = "spreadsheets.batchUpdate"
)

var dlHeader = []any{"timestamp", "source", "url", "payload", "error", "attempts", "method", "key", "status", "replayed_at", "triaged_by"}

// fixture is the Sheets emulator behind HTTP, a real sheets.Store over it, a replay
// destination whose calls can be held, and a hub over the store (not yet running).
type fixture struct {
	emu   *emulator.Emulator
	store *sheets.Store
	rcv   *receiver.Receiver
	gate  *testbed.Gate
	hub   *Hub
	clock *clock
	log   *testbed.Buffer
}

// clock is the hub's cache clock, moved by the test.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// workbookDL is the spreadsheet: an Inbox and a failed_calls tab with triaged_by columns, and
// a Jobs tab with a claimed job. Its dlRows failed_calls rows (k-1, k-2, ...) go to dst.
func workbookDL(dst string, inboxRows, dlRows int) *emulator.Workbook {
	rows := [][]any{{"Timestamp", "Name", "Email", "Message", "Status", "ID", "triaged_by"}}
	for i := range inboxRows {
		rows = append(rows, []any{fmt.Sprintf("2025-05-%02dT09:00:00Z", 1+i%28), fmt.Sprintf("Person %d", i),
			fmt.Sprintf("p%d@example.com", i), fmt.Sprintf("Message number %d", i), "new", fmt.Sprintf("id-%d", i), nil})
	}
	dl := [][]any{dlHeader}
	for i := 1; i <= dlRows; i++ {
		dl = append(dl, []any{fmt.Sprintf("2025-05-%02dT09:00:00Z", 10+i), "crm", dst + "/hook",
			fmt.Sprintf(`{"id":"k-%d"}`, i), "503", "1", "POST", fmt.Sprintf("k-%d", i), "dead", nil, nil})
	}
	return &emulator.Workbook{SpreadsheetID: sheetID, Title: "Acme Support", Sheets: []*emulator.Sheet{
		{Title: "Inbox", Rows: rows},
		{Title: "failed_calls", Rows: dl},
		{Title: "Jobs", Rows: [][]any{
			{"id", "type", "payload", "status", "claimedBy", "claimedAt", "lastError", "updatedAt", "attempts"},
			{"job-1", "email", `{}`, "claimed", "worker-7", "2025-06-01T10:00:00Z", "", "", "1"},
			{"job-2", "email", `{}`, "error", "worker-2", "2025-06-01T09:00:00Z", "quota", "", "3"},
		}},
	}}
}

// newFixture builds the emulator, the store and a hub refreshing every refresh (not running:
// call run).
func newFixture(t testing.TB, refresh time.Duration, inboxRows int) *fixture {
	t.Helper()
	return newFixtureDL(t, refresh, inboxRows, 2, 0)
}

// newFixtureDL is newFixture with dlRows dead letters, replayed at most conc at a time (0:
// the runner's default).
func newFixtureDL(t testing.TB, refresh time.Duration, inboxRows, dlRows, conc int) *fixture {
	t.Helper()
	rcv := receiver.New()
	g := testbed.NewGate()
	dst := testbed.Serve(t, g.Wrap(rcv))
	sh := testbed.NewSheets(t, workbookDL(dst.URL, inboxRows, dlRows))
	emu := sh.Emu
	// Every refresh reads the whole sheet (no change check, a full read each time): these
	// tests are of the hub; idle_test.go's are of what a refresh asks first.
	store := sh.Store(sheets.Options{SpreadsheetID: sheetID, Actor: "service-account", FullReadEvery: time.Nanosecond})
	client := &replay.Client{Sources: map[string]*replay.Source{"crm": {Name: "crm", URLPrefixes: []string{dst.URL + "/"}, Concurrency: conc}},
		Base: time.Millisecond, Cap: 10 * time.Millisecond}
	f := &fixture{emu: emu, store: store, rcv: rcv, gate: g, clock: &clock{now: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}, log: &testbed.Buffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f.hub = NewHub(ctx, HubOptions{Store: store, Replayer: &replay.Runner{Client: client, Store: store}, Refresh: refresh,
		Logger: slog.New(slog.NewTextHandler(f.log, nil)), Now: f.clock.Now})
	return f
}

// run starts the hub's refresh loop until the test ends, and waits for its first read.
func (f *fixture) run(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.hub.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	deadline := time.Now().Add(5 * time.Second)
	for f.hub.Cached() == nil {
		if time.Now().After(deadline) {
			t.Fatal("the hub's first read never landed")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// total is the emulator's request count.
func (f *fixture) total() int {
	n := 0
	for _, c := range f.emu.Counts() {
		n += c
	}
	return n
}

// cell is the emulator's cell of tab at the row whose column idCol holds id.
func (f *fixture) cell(tab string, idCol int, id string, col int) string {
	for _, row := range f.emu.Cells(sheetID, tab) {
		if idCol < len(row) && model.CellString(row[idCol]) == id {
			if col < len(row) {
				return model.CellString(row[col])
			}
			return ""
		}
	}
	return "<no row " + id + ">"
}

// next waits for the next workbook pushed on ch.
func next(t testing.TB, ch <-chan *tui.Prepared) *tui.Prepared {
	t.Helper()
	select {
	case p, ok := <-ch:
		if !ok {
			t.Fatal("the updates channel closed")
		}
		return p
	case <-time.After(5 * time.Second):
		t.Fatal("nothing was pushed within 5s")
	}
	return nil
}

// status is a record's status in a pushed workbook.
func status(t testing.TB, p *tui.Prepared, tab, id string) string {
	t.Helper()
	if p.Err() != nil {
		t.Fatalf("pushed a failure: %v", p.Err())
	}
	tb := p.Workbook().TabNamed(tab)
	if tb == nil {
		t.Fatalf("no tab %s", tab)
	}
	i := tb.Index(id)
	if i < 0 {
		t.Fatalf("no %s in %s", id, tab)
	}
	return tb.Records[i].Status
}

func setStatus(tab, id, from, to string) model.Edit {
	return model.Edit{Tab: tab, ID: id, Expect: map[model.Field]string{model.FStatus: from}, Set: map[model.Field]string{model.FStatus: to}}
}

var (
	alice = User{Name: "alice", Access: model.AccessOperator, Key: "SHA256:alice"}
	tom   = User{Name: "tom", Access: model.AccessTriager, Key: "SHA256:tom"}
	vera  = User{Name: "vera", Access: model.AccessViewer, Key: "SHA256:vera"}
)
