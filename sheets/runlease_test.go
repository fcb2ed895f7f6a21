package sheets_test

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// leaseFixture is a dead-letter tab and two stores of two runners on it.
func leaseFixture(t *testing.T) (*fixture, *sheets.Store, *sheets.Store) {
	t.Helper()
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "lease", Title: "lease", Sheets: []*emulator.Sheet{{Title: "failed_calls",
		Rows: [][]any{{"timestamp", "source", "url", "payload", "key", "status"}}}}})
	tc := deadTab("failed_calls")
	a := f.store(sheets.Options{Tabs: []model.TabConfig{tc}, Actor: "ops"})
	b := f.store(sheets.Options{Tabs: []model.TabConfig{tc}, Actor: "cron"})
	return f, a, b
}

func keysN(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("k-%d", i))
	}
	return out
}

// One runner per row: a row leased to a live run is held for every other run, which is told
// whose it is and since when; released, it is free again; a row of neither is leased to
// whoever asks.
func TestLeaseOneRunnerPerRow(t *testing.T) {
	f, a, b := leaseFixture(t)
	la, err := a.Lease(ctx(t), "failed_calls", keysN(5))
	if err != nil {
		t.Fatal(err)
	}
	if len(la.Taken) != 5 || len(la.Held) != 0 {
		t.Fatalf("first run: taken %v held %v", la.Taken, la.Held)
	}
	lb, err := b.Lease(ctx(t), "failed_calls", append(keysN(5)[3:], "k-9"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(lb.Taken, []string{"k-9"}) || len(lb.Held) != 2 {
		t.Fatalf("second run: taken %v held %v, want k-9 taken, k-3 and k-4 held", lb.Taken, lb.Held)
	}
	for k, h := range lb.Held {
		if !strings.HasPrefix(h.By, "ops@") || h.Since.IsZero() || !h.Until.After(h.Since) {
			t.Errorf("%s held by %+v: want ops@host, since and until", k, h)
		}
	}
	groups := model.GroupHeld(lb.Held)
	if len(groups) != 1 || !strings.Contains(groups[0].String(), "2 rows are being replayed by ops@") {
		t.Errorf("summary %v", groups)
	}
	if err := a.Release(ctx(t), la); err != nil {
		t.Fatal(err)
	}
	lb2, err := b.Lease(ctx(t), "failed_calls", keysN(5))
	if err != nil {
		t.Fatal(err)
	}
	if len(lb2.Taken) != 5 {
		t.Errorf("after the release: taken %v held %v", lb2.Taken, lb2.Held)
	}
	if err := b.Release(ctx(t), lb); err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx(t), lb2); err != nil {
		t.Fatal(err)
	}
	if md := f.emu.DeveloperMetadata("lease"); len(md) != 0 {
		t.Errorf("metadata left after every run released: %+v", md)
	}
}

// Two runs reading at the same moment: the second's batch is refused whole because the
// first's created the same lease IDs first; it reads again and learns the rows are held. No
// row is leased to both.
func TestLeaseRaceTheSecondBatchIsRefused(t *testing.T) {
	f, a, b := leaseFixture(t)
	var fired atomic.Bool
	var la model.Leases
	var aerr error
	f.emu.SetHook(func(r emulator.Request) {
		if r.Method != mBatchUpdate || !fired.CompareAndSwap(false, true) {
			return
		}
		// b has read the metadata and is sending its batch: a gets there first.
		la, aerr = a.Lease(ctx(t), "failed_calls", keysN(4))
	})
	lb, err := b.Lease(ctx(t), "failed_calls", keysN(6))
	f.emu.SetHook(nil)
	if err != nil || aerr != nil {
		t.Fatal(err, aerr)
	}
	if len(la.Taken) != 4 {
		t.Fatalf("first: %+v", la)
	}
	if !slices.Equal(lb.Taken, []string{"k-4", "k-5"}) || len(lb.Held) != 4 {
		t.Errorf("second: taken %v held %v, want k-4, k-5 taken and k-0..k-3 held", lb.Taken, lb.Held)
	}
}

// A run that is gone gives its rows up: once its lease has run out in Google's clock (plus
// the skew), or at once when its process is provably gone on this host. Its release, late,
// deletes only its own leases, never the run's that took them over.
func TestLeaseOfAGoneRunIsTakenOver(t *testing.T) {
	t.Run("ran out", func(t *testing.T) {
		f, a, b := leaseFixture(t)
		la, err := a.Lease(ctx(t), "failed_calls", keysN(3))
		if err != nil {
			t.Fatal(err)
		}
		lb, err := b.Lease(ctx(t), "failed_calls", keysN(3))
		if err != nil || len(lb.Held) != 3 {
			t.Fatalf("within the lease: %+v %v", lb, err)
		}
		later := time.Now().Add(model.LeaseFor + time.Minute)
		f.emu.SetClock(func() time.Time { return later })
		lb, err = b.Lease(ctx(t), "failed_calls", keysN(3))
		if err != nil || len(lb.Taken) != 3 {
			t.Fatalf("after the lease ran out: %+v %v", lb, err)
		}
		if err := a.Release(ctx(t), la); err != nil {
			t.Fatal(err)
		}
		c := f.store(sheets.Options{Tabs: []model.TabConfig{deadTab("failed_calls")}, Actor: "third"})
		lc, err := c.Lease(ctx(t), "failed_calls", keysN(3))
		if err != nil || len(lc.Held) != 3 {
			t.Errorf("the late release of the gone run freed the rows it had lost: %+v %v", lc, err)
		}
		for _, h := range lc.Held {
			if !strings.HasPrefix(h.By, "cron@") {
				t.Errorf("held by %s, want cron", h.By)
			}
		}
	})
	t.Run("process gone", func(t *testing.T) {
		_, a, b := leaseFixture(t)
		sheets.SetWriterPID(a, deadPID(t))
		if _, err := a.Lease(ctx(t), "failed_calls", keysN(3)); err != nil {
			t.Fatal(err)
		}
		lb, err := b.Lease(ctx(t), "failed_calls", keysN(3))
		if err != nil || len(lb.Taken) != 3 {
			t.Fatalf("a dead process's rows: %+v %v", lb, err)
		}
	})
}

// A lease batch whose answer is lost may have landed: the next read shows the leases under
// this run's token, and they are this run's (not held by "someone else", not created twice).
func TestLeaseLostAnswerIsReadBack(t *testing.T) {
	f, a, _ := leaseFixture(t)
	f.emu.InjectFault(emulator.Fault{Method: mBatchUpdate, Status: 503, After: true, Times: 1})
	la, err := a.Lease(ctx(t), "failed_calls", keysN(4))
	if err != nil {
		t.Fatal(err)
	}
	if len(la.Taken) != 4 || len(la.Held) != 0 {
		t.Errorf("after a lost answer: %+v", la)
	}
	if n := len(f.emu.DeveloperMetadata("lease")); n != 5 {
		t.Errorf("%d metadata, want 4 leases and the run's", n)
	}
}

// The sheet's metadata holds 30,000 characters in all: a run leases what fits beside room
// for journal entries, and says why the rest wait.
func TestLeaseWithinTheMetadataBudget(t *testing.T) {
	_, a, _ := leaseFixture(t)
	la, err := a.Lease(ctx(t), "failed_calls", keysN(3000))
	if err != nil {
		t.Fatal(err)
	}
	if len(la.Taken) == 0 || len(la.Unleased) == 0 || len(la.Taken)+len(la.Unleased) != 3000 {
		t.Fatalf("taken %d, unleased %d", len(la.Taken), len(la.Unleased))
	}
	for _, why := range la.Unleased {
		if !strings.Contains(why, "next run") {
			t.Errorf("unleased because %q", why)
		}
		break
	}
	t.Logf("%d leased, %d wait", len(la.Taken), len(la.Unleased))
	// A journal entry still fits beside them: writes (here a dead letter's, journaled and
	// fenced like every write) still work.
	for i := range 3 {
		l := model.DeadLetter{Timestamp: time.Now(), Source: "crm", URL: "https://crm.example/in", Payload: fmt.Sprintf(`{"n":%d}`, i), Key: fmt.Sprintf("dl-%d", i)}
		if err := a.DeadLetter(ctx(t), []model.DeadLetter{l}); err != nil {
			t.Fatalf("a write beside the leases: %v", err)
		}
	}
}

// Google over quota: the lease's batch answered 429 (nothing applied) is read again and sent
// again within the store's retry budget, not given up on (every row of the run refused).
func TestLeaseRetriesAQuotaRefusal(t *testing.T) {
	f, a, _ := leaseFixture(t)
	f.emu.InjectFault(emulator.Fault{Method: mBatchUpdate, Status: 429, Times: 2})
	la, err := a.Lease(ctx(t), "failed_calls", keysN(4))
	if err != nil {
		t.Fatalf("a lease after two 429s: %v", err)
	}
	if len(la.Taken) != 4 {
		t.Errorf("taken %v", la.Taken)
	}
	if n := len(f.emu.DeveloperMetadata("lease")); n != 5 {
		t.Errorf("%d metadata, want 4 leases and the run's", n)
	}
}
