package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// leaser is the replay lease contract (replay.Leaser), as both stores answer it.
type leaser interface {
	Lease(ctx context.Context, tab string, keys []string) (model.Leases, error)
	Renew(ctx context.Context, l model.Leases) error
	Release(ctx context.Context, l model.Leases) error
}

// leaseBackend is one store's leases over its real backend: the lease contract runs one body
// against each.
type leaseBackend struct {
	name string
	// open is a runner of its own (another process, as far as the backend can tell).
	open func(t *testing.T, actor string) leaser
	// openDead is a runner whose process is gone the moment its Lease returns, without
	// releasing anything (kill -9, an OOM kill).
	openDead func(t *testing.T, actor string) leaser
	// expire makes every lease taken so far run out.
	expire func(t *testing.T)
}

func leaseBackends(t *testing.T) []leaseBackend {
	// The sheet: stores on one emulator; a run's lease is told in Google's clock.
	emu := testbed.NewSheets(t, &emulator.Workbook{SpreadsheetID: "leases", Title: "leases",
		Sheets: []*emulator.Sheet{{Title: "failed_calls", Rows: [][]any{{"timestamp", "source", "url", "payload", "key", "status"}}}}})
	var mu sync.Mutex
	shift := time.Duration(0)
	emu.Emu.SetClock(func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return time.Now().Add(shift)
	})
	sheetStore := func(actor string) *sheets.Store {
		return emu.Store(sheets.Options{SpreadsheetID: "leases", Tabs: []model.TabConfig{model.DefaultTabConfig(model.RoleDeadLetter)}, Actor: actor})
	}
	sheet := leaseBackend{name: "sheets",
		open: func(t *testing.T, actor string) leaser { return sheetStore(actor) },
		openDead: func(t *testing.T, actor string) leaser {
			// The sheet proves a run gone by its PID on this host (sheets' own tests kill
			// one); from here, a run whose own record is gone is the same state to a reader.
			return deadSheetRun{sheetStore(actor), emu.Emu}
		},
		expire: func(t *testing.T) {
			mu.Lock()
			shift += model.LeaseFor + time.Minute
			mu.Unlock()
		},
	}

	url, conn := pgDB(t)
	pg := leaseBackend{name: "postgres",
		open: func(t *testing.T, actor string) leaser {
			return openStore(t, url, postgres.Options{Tabs: tabs(), Actor: actor})
		},
		openDead: func(t *testing.T, actor string) leaser {
			st, err := postgres.Open(t.Context(), url, postgres.Options{Tabs: tabs(), Actor: actor})
			if err != nil {
				t.Fatal(err)
			}
			return dyingStore{st}
		},
		expire: func(t *testing.T) {
			if _, err := conn.Exec(t.Context(), `UPDATE replay_leases SET until = now() - interval '1 second'`); err != nil {
				t.Fatal(err)
			}
		},
	}
	return []leaseBackend{sheet, pg}
}

// dyingStore is a postgres store whose process dies right after its Lease: its connections
// close, and with them the run's advisory lock.
type dyingStore struct{ *postgres.Store }

func (d dyingStore) Lease(ctx context.Context, tab string, keys []string) (model.Leases, error) {
	l, err := d.Store.Lease(ctx, tab, keys)
	postgres.Kill(d.Store)
	return l, err
}

// deadSheetRun is a sheet runner whose run record is gone right after its Lease.
type deadSheetRun struct {
	*sheets.Store
	emu *emulator.Emulator
}

func (d deadSheetRun) Lease(ctx context.Context, tab string, keys []string) (model.Leases, error) {
	l, err := d.Store.Lease(ctx, tab, keys)
	for _, m := range d.emu.DeveloperMetadata("leases") {
		if m.Key == "triage.run" && fmt.Sprintf("%08x", m.MetadataID) == l.Run {
			if derr := d.emu.DeleteDeveloperMetadata("leases", m.MetadataID); derr != nil {
				return l, derr
			}
		}
	}
	return l, err
}

func keyRange(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("k-%02d", i))
	}
	return out
}

// The lease contract, one body for both stores: a row is leased to one live run at a time;
// another run is told who holds it and since when; a released, expired or dead run's rows are
// free again (the dead one's at once), and a late release never frees rows another run took
// over; runners leasing the same rows at the same instant split them, none shared.
func TestLeaseContract(t *testing.T) {
	const tab = "failed_calls"
	for _, lb := range leaseBackends(t) {
		t.Run(lb.name, func(t *testing.T) {
			ctx := t.Context()
			must := func(l model.Leases, err error) model.Leases {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			a, b := lb.open(t, "ops"), lb.open(t, "cron")
			la := must(a.Lease(ctx, tab, keyRange(0, 5)))
			if len(la.Taken) != 5 {
				t.Fatalf("a free row not leased: %+v", la)
			}
			lb1 := must(b.Lease(ctx, tab, keyRange(3, 6)))
			if !slices.Equal(lb1.Taken, keyRange(5, 6)) || len(lb1.Held) != 2 {
				t.Fatalf("a held row leased again: taken %v, held %v", lb1.Taken, lb1.Held)
			}
			for k, h := range lb1.Held {
				if !strings.HasPrefix(h.By, "ops@") || h.Since.IsZero() || !h.Until.After(h.Since) {
					t.Errorf("%s held by %+v, want ops@host with since and until", k, h)
				}
			}
			if err := a.Renew(ctx, la); err != nil {
				t.Error(err)
			}
			if err := a.Release(ctx, la); err != nil {
				t.Fatal(err)
			}
			if lb2 := must(b.Lease(ctx, tab, keyRange(0, 5))); len(lb2.Taken) != 5 {
				t.Errorf("released rows not free: %+v", lb2)
			} else if err := b.Release(ctx, lb2); err != nil {
				t.Error(err)
			}
			if err := b.Release(ctx, lb1); err != nil {
				t.Error(err)
			}

			// A run whose process is gone: its rows are free at once.
			must(lb.openDead(t, "dead").Lease(ctx, tab, keyRange(10, 13)))
			c := lb.open(t, "next")
			lc := must(c.Lease(ctx, tab, keyRange(10, 13)))
			if len(lc.Taken) != 3 {
				t.Errorf("a dead run's rows not taken over: %+v", lc)
			}
			if err := c.Release(ctx, lc); err != nil {
				t.Error(err)
			}

			// A run that stopped renewing: its rows are free once its lease runs out, and its
			// late release leaves the run that took them over holding them.
			slow := lb.open(t, "slow")
			ls := must(slow.Lease(ctx, tab, keyRange(20, 22)))
			lb.expire(t)
			fresh := lb.open(t, "fresh")
			if lf := must(fresh.Lease(ctx, tab, keyRange(20, 22))); len(lf.Taken) != 2 {
				t.Errorf("expired rows not taken over: %+v", lf)
			}
			if err := slow.Release(ctx, ls); err != nil {
				t.Error(err)
			}
			if lh := must(lb.open(t, "third").Lease(ctx, tab, keyRange(20, 22))); len(lh.Held) != 2 {
				t.Errorf("a late release freed rows another run took over: %+v", lh)
			} else {
				for _, h := range lh.Held {
					if !strings.HasPrefix(h.By, "fresh@") {
						t.Errorf("held by %s, want fresh", h.By)
					}
				}
			}

			// Runners leasing the same rows at once split them.
			keys := keyRange(30, 50)
			const runners = 4
			var wg sync.WaitGroup
			got := make([]model.Leases, runners)
			errs := make([]error, runners)
			stores := make([]leaser, runners)
			for i := range runners {
				stores[i] = lb.open(t, fmt.Sprintf("r%d", i))
			}
			for i := range runners {
				wg.Go(func() { got[i], errs[i] = stores[i].Lease(ctx, tab, keys) })
			}
			wg.Wait()
			owner := map[string]int{}
			for i := range runners {
				if errs[i] != nil {
					t.Fatalf("runner %d: %v", i, errs[i])
				}
				for _, k := range got[i].Taken {
					if j, ok := owner[k]; ok {
						t.Errorf("%s leased to runners %d and %d", k, j, i)
					}
					owner[k] = i
				}
				if len(got[i].Taken)+len(got[i].Held) != len(keys) {
					t.Errorf("runner %d: %d taken + %d held of %d", i, len(got[i].Taken), len(got[i].Held), len(keys))
				}
			}
			if len(owner) != len(keys) {
				t.Errorf("%d of %d rows leased to anyone", len(owner), len(keys))
			}
		})
	}
}
