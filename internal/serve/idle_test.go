package serve

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
	drive "google.golang.org/api/drive/v3"
	"google.golang.org/api/option"
	sheetsapi "google.golang.org/api/sheets/v4"
)

const mDrive = "drive.files.get"

// idleHub is a hub over a store over the emulator, started as `triage serve` starts it: one
// Load before listening, handed to the hub as its first cache; its refreshes are ticked by the
// test, which waits for each to be dealt with.
type idleHub struct {
	emu   *emulator.Emulator
	store *sheets.Store
	hub   *Hub
	ticks chan time.Time
	done  chan struct{}
}

func newIdleHub(t *testing.T, withDrive bool) *idleHub {
	t.Helper()
	emu := emulator.New()
	emu.AddWorkbook(workbookDL("http://127.0.0.1:9", 20, 2))
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	svc, err := sheetsapi.NewService(context.Background(), option.WithEndpoint(srv.URL+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	var tabs []model.TabConfig
	for _, r := range model.Roles {
		tabs = append(tabs, model.DefaultTabConfig(r))
	}
	store := sheets.New(context.Background(), svc, sheets.Options{SpreadsheetID: sheetID, Tabs: tabs})
	if withDrive {
		dsvc, err := drive.NewService(context.Background(), option.WithEndpoint(srv.URL+"/drive/v3/"), option.WithoutAuthentication())
		if err != nil {
			t.Fatal(err)
		}
		store.WithDrive(dsvc)
		if _, err := store.Changed(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	wb, err := store.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &idleHub{emu: emu, store: store, ticks: make(chan time.Time), done: make(chan struct{})}
	h.hub = NewHub(ctx, HubOptions{Store: store, Initial: wb, Refresh: time.Hour})
	h.hub.ticks, h.hub.tickDone = h.ticks, h.done
	done := make(chan struct{})
	go func() { h.hub.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	emu.ResetCounts()
	return h
}

// newAttachedIdleHub is newIdleHub with the Drive change check and tom's session attached,
// its first push taken; the session closes when the test ends.
func newAttachedIdleHub(t *testing.T) (*idleHub, *Session) {
	t.Helper()
	h := newIdleHub(t, true)
	s := h.hub.Session(tom)
	t.Cleanup(s.Close)
	next(t, s.Updates)
	return h, s
}

// tick refreshes n times, each dealt with before the next.
func (h *idleHub) tick(n int) {
	for range n {
		h.ticks <- time.Now()
		<-h.done
	}
}

func (h *idleHub) total() int {
	n := 0
	for _, c := range h.emu.Counts() {
		n += c
	}
	return n
}

// `triage serve` reads the workbook once as it starts: the hub's first cache is that read,
// and Run sends nothing of its own.
func TestServeStartReadsOnce(t *testing.T) {
	h := newIdleHub(t, false)
	h.tick(1) // the loop is running, past any first read, and nobody is attached
	if n := h.total(); n != 0 {
		t.Errorf("the hub read again after the start's read: %v", h.emu.Counts())
	}
	if h.hub.Cached() == nil || h.hub.Cached().Workbook().TabNamed("Inbox") == nil {
		t.Fatal("the start's read is not the hub's cache")
	}
}

// With no session attached the hub reads nothing, however many refreshes pass; the first
// session to attach gets the cache at once and the sheet read at once (pushed to it).
func TestIdleHubDoesNotPoll(t *testing.T) {
	h := newIdleHub(t, false)
	h.tick(5)
	if n := h.total(); n != 0 {
		t.Fatalf("5 refreshes with nobody attached sent %v", h.emu.Counts())
	}
	if err := h.emu.SetCell(sheetID, "Inbox", 2, 1, "Renamed"); err != nil {
		t.Fatal(err)
	}
	s := h.hub.Session(tom)
	defer s.Close()
	first := next(t, s.Updates)
	if first.Workbook().TabNamed("Inbox").Records[0].Cells[1] == "Renamed" {
		t.Fatal("the first screen is not the cache")
	}
	fresh := next(t, s.Updates)
	if got := fresh.Workbook().TabNamed("Inbox").Records[0].Cells[1]; got != "Renamed" {
		t.Errorf("the read on attach shows %q, want the change", got)
	}
	if c := h.emu.Counts(); c[mBatchGet] != 1 {
		t.Errorf("attaching read %v, want one batchGet", c)
	}
	// Attached: a refresh reads.
	h.emu.ResetCounts()
	h.tick(1)
	if c := h.emu.Counts(); c[mBatchGet] != 1 {
		t.Errorf("a refresh with a session attached read %v, want one batchGet", c)
	}
}

// With the change check, a refresh in which nothing changed costs one Drive files.get and the
// tail probe (one batchGet of the row after each tab's last); a change (made outside triage)
// is read and pushed at the next refresh.
func TestHubChangeCheck(t *testing.T) {
	h, s := newAttachedIdleHub(t)
	h.tick(3)
	if c := h.emu.Counts(); c[mBatchGet] != 3 || c[mGet] != 0 || c[mDrive] != 3 {
		t.Fatalf("3 refreshes of an unchanged sheet sent %v, want 3 %s, 3 tail probes and nothing else", c, mDrive)
	}
	h.emu.ResetCounts()
	if err := h.emu.SetCell(sheetID, "Inbox", 2, 1, "Changed"); err != nil {
		t.Fatal(err)
	}
	h.tick(1)
	if got := next(t, s.Updates).Workbook().TabNamed("Inbox").Records[0].Cells[1]; got != "Changed" {
		t.Errorf("pushed %q after a change, want it", got)
	}
	if c := h.emu.Counts(); c[mBatchGet] != 1 {
		t.Errorf("a changed sheet was read %d times, want once: %v", c[mBatchGet], c)
	}
	// The read made the store current: the next idle refresh is a version check again.
	h.emu.ResetCounts()
	h.tick(1)
	if c := h.emu.Counts(); c[mBatchGet] != 1 || c[mGet] != 0 || c[mDrive] != 1 {
		t.Errorf("after the read, an unchanged refresh sent %v", c)
	}
	if mode := h.store.ChangeCheckMode(); mode[:6] != "change" {
		t.Errorf("mode %q", mode)
	}
}

// Drive refusing the credential (403: no Drive scope) turns the check off and says so: that
// refresh reads the whole sheet, and the next ones the tail probe alone (the whole sheet again
// once full_refresh has passed).
func TestHubChangeCheckRefused(t *testing.T) {
	h, _ := newAttachedIdleHub(t)
	h.emu.InjectFault(emulator.Fault{Method: mDrive, Status: 403, Message: "Request had insufficient authentication scopes."})
	h.tick(2)
	if c := h.emu.Counts(); c[mBatchGet] != 2 || c[mGet] != 1 || c[mDrive] != 1 {
		t.Errorf("2 refreshes after a refused check sent %v, want the one refused check, a read (get and batchGet) and a tail probe", c)
	}
	if mode := h.store.ChangeCheckMode(); !strings.HasPrefix(mode, "tail probe and full reads") {
		t.Errorf("mode %q, want the tail probe and full reads", mode)
	}
}
