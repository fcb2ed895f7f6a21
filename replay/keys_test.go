package replay_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
)

// TestPayloadKeySavedSoItNeverChanges (invariant 3): a key taken from the payload is written
// to the key cell before the first request leaves, in the same single write as the minted
// keys. So when the row is replayed again after the config stops reading the payload's key
// field, or after someone fixes the row's source cell, it still carries the same key, and the
// receiver acts once.
func TestPayloadKeySavedSoItNeverChanges(t *testing.T) {
	changes := []struct {
		name   string
		change func(st *memStore)
	}{
		// The config drops `key = "body:id"`: without the saved key cell the row would get a
		// minted key now.
		{"config drops body:id", func(st *memStore) { st.tc = dlConfig }},
		// The source cell is corrected to another configured source, which doesn't read a
		// body key: the payload key no longer applies, and a minted key would differ anyway.
		{"source cell fixed", func(st *memStore) { st.rows[1][1] = "form2" }},
	}
	for _, ch := range changes {
		t.Run(ch.name, func(t *testing.T) {
			rcv := receiver.New() // dedupes by the Idempotency-Key header
			srv := serve(t, rcv)
			u := srv.URL + "/hook"
			tc := formKeys()
			form := &replay.Source{Name: "form", URLPrefixes: []string{srv.URL},
				Key: []replay.KeySpec{{In: "body", Name: "id"}, {In: "header", Name: "Idempotency-Key"}}}
			form2 := &replay.Source{Name: "form2", URLPrefixes: []string{srv.URL}}
			rows := []row{
				{source: "form", url: u, payload: `{"id":"p-1", "x":1}`, status: "dead"}, // key from the payload
				{source: "form", url: u, payload: `{"x":2}`, status: "dead"},             // minted
				{source: "form", url: u, payload: `{"x":3}`, key: "cell-3", status: "dead"},
			}
			st := newMemStore(tc, rows)
			tab := st.table(t)
			if tab.Records[0].KeyOrigin != model.KeyPayload || tab.Records[1].KeyOrigin != model.KeyMinted {
				t.Fatalf("origins %v %v", tab.Records[0].KeyOrigin, tab.Records[1].KeyOrigin)
			}
			sentAtFirstApply := -1
			st.onApply = func([]model.Edit) {
				if sentAtFirstApply < 0 {
					sentAtFirstApply = len(rcv.Attempts())
				}
			}
			c := fastClient(form, form2)
			sum := replay.Run(context.Background(), c, st, tab, records(tab), replay.RunOptions{})
			if sum.Counts["delivered"] != 3 {
				t.Fatalf("first run: counts %v refused %+v", sum.Counts, sum.Refused)
			}
			// One write, before any request, holding the payload key and the minted one (not
			// the key that already was in its cell) and the check of every row.
			if sentAtFirstApply != 0 || keyWrites(st.edits[0]) != 2 || len(st.edits[0]) != 5 {
				t.Fatalf("first write after %d requests with %d key writes (%d edits), want both keys before any request",
					sentAtFirstApply, keyWrites(st.edits[0]), len(st.edits[0]))
			}
			if k := st.rowAt(0)[model.FKey]; k != "p-1" {
				t.Fatalf("key cell of the payload-key row %q, want p-1", k)
			}
			if k := st.rowAt(1)[model.FKey]; k != rows[1].minted() {
				t.Fatalf("key cell of the minted row %q, want %q", k, rows[1].minted())
			}

			// Later: the config or the row changes, and the row is put back to dead.
			ch.change(st)
			st.rows[1][8] = "dead"
			tab = st.table(t)
			if tab.Records[0].ID != "p-1" || tab.Records[0].KeyOrigin != model.KeyCell {
				t.Fatalf("after the change the row's key is %q (%v), want p-1 from the key cell", tab.Records[0].ID, tab.Records[0].KeyOrigin)
			}
			sum = replay.Run(context.Background(), c, st, tab, records(tab)[:1], replay.RunOptions{})
			if sum.Counts["duplicate"] != 1 {
				t.Errorf("second run: counts %v refused %+v, want the receiver to recognise the key (duplicate)", sum.Counts, sum.Refused)
			}
			got := attemptsByKey(rcv)
			if len(got["p-1"]) != 2 || len(got) != 3 {
				t.Errorf("keys at the receiver %v, want p-1 twice and no new key", keysOf(got))
			}
			if eff := rcv.Effects(); eff["p-1"] != 1 || len(eff) != 3 {
				t.Errorf("effects %v, want one per row", eff)
			}
		})
	}
}

func keysOf(m map[string][]receiver.RecordedAttempt) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		out[k] = len(v)
	}
	return out
}

// TestPayloadKeyNotSavedIsNotSent: when the store can't take the key write, a row whose key
// came from the payload isn't sent (its key isn't pinned), and neither is a row whose key is
// in its key cell already: the same write was its check against the sheet.
func TestPayloadKeyNotSavedIsNotSent(t *testing.T) {
	rcv, src, u := formDestination(t)
	tc := formKeys()
	st := newMemStore(tc, []row{
		{source: "form", url: u, payload: `{"id":"p-1"}`, status: "dead"},
		{source: "form", url: u, payload: `{"x":2}`, key: "cell-2", status: "dead"},
	})
	tab := st.table(t)
	st.fail = errors.New("quota exceeded")
	sum := replay.Run(context.Background(), fastClient(src), st, tab, records(tab), replay.RunOptions{})
	got := attemptsByKey(rcv)
	if len(got) != 0 {
		t.Fatalf("sent %v, want nothing", keysOf(got))
	}
	if len(sum.Refused) != 2 || sum.Refused[0].Row != 2 || !strings.Contains(sum.Refused[0].Reason, "quota exceeded") ||
		!strings.Contains(sum.Refused[0].Reason, "payload") ||
		sum.Refused[1].Row != 3 || !strings.Contains(sum.Refused[1].Reason, "could not be checked against the sheet before sending (quota exceeded)") {
		t.Errorf("refused %+v", sum.Refused)
	}
}

// TestPayloadKeyWithoutKeyColumn: on a tab without a key column a payload key is still sent
// (the payload carries it), while a minted key, which would live nowhere, is refused.
func TestPayloadKeyWithoutKeyColumn(t *testing.T) {
	rcv, src, u := formDestination(t)
	tc := formKeys()
	st := newMemStore(tc, []row{
		{source: "form", url: u, payload: `{"id":"p-1"}`, status: "dead"},
		{source: "form", url: u, payload: `{"x":2}`, status: "dead"},
	})
	dropColumn(st, 7) // key
	tab := st.table(t)
	if tab.Header.Has(model.FKey) {
		t.Fatal("the tab still has a key column")
	}
	sum := replay.Run(context.Background(), fastClient(src), st, tab, records(tab), replay.RunOptions{})
	got := attemptsByKey(rcv)
	if len(got) != 1 || len(got["p-1"]) != 1 {
		t.Fatalf("sent %v, want only p-1", keysOf(got))
	}
	if len(sum.Refused) != 1 || sum.Refused[0].Row != 3 || !strings.Contains(sum.Refused[0].Reason, "no key column") {
		t.Errorf("refused %+v", sum.Refused)
	}
	for i, es := range st.edits {
		for _, e := range es {
			if _, ok := e.Set[model.FKey]; ok {
				t.Errorf("write %d sets a key cell the tab doesn't have: %+v", i, e)
			}
		}
	}
	if s := st.rowAt(0)[model.FStatus]; s != "delivered" {
		t.Errorf("status %q", s)
	}
}

// dropColumn removes column c from every row of the store (header included).
func dropColumn(st *memStore, c int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for i, r := range st.rows {
		st.rows[i] = append(append([]string(nil), r[:c]...), r[c+1:]...)
	}
}

// TestSameKeyTwiceIsRefused: a second row with the key of a row already planned is refused
// with a reason naming both rows (replaying both would be one call), not dropped silently. A
// decoded tab already blanks a duplicate's ID (model.Decode), but records patched in place
// after the load (a key cell edited from the TUI) or gathered otherwise reach Plan with equal
// keys. A record listed twice, or a copy of it, is just planned once.
func TestSameKeyTwiceIsRefused(t *testing.T) {
	rcv, srv, src := crmDestination(t)
	rows := keyRows(4, "crm", srv.URL+"/x")
	rows[3].key = ""
	st := newMemStore(dlConfig, rows)
	st.rows = append(st.rows, append([]string(nil), st.rows[4]...)) // row 6: row 5 again, same minted key
	tab := st.table(t)
	// Row 4's key cell edited to k-0 after the load, its record patched in place.
	st.rows[3][7] = "k-0"
	r4 := &tab.Records[2]
	r4.Cells[tab.Header.Col(model.FKey)], r4.ID = "k-0", "k-0"
	recs := records(tab)
	copy3 := tab.Records[1]
	recs = append(recs, recs[1], &copy3) // row 3 listed twice, and a copy of it

	jobs, refused := replay.Plan(tab, recs, map[string]*replay.Source{"crm": src}, time.Now(), false)
	if len(jobs) != 2 {
		t.Errorf("%d jobs, want 2 (rows 2 and 3)", len(jobs))
	}
	want := map[int]string{
		4: "row 4: same key as row 2: replaying both would be one call",
		5: "row 5: can't be replayed: rows 5, 6 share the idempotency key", // both flagged by Decode
		6: "row 6: can't be replayed: rows 5, 6 share the idempotency key",
	}
	if len(refused) != len(want) {
		t.Fatalf("refused %+v", refused)
	}
	for _, r := range refused {
		if !strings.HasPrefix(r.Reason, want[r.Row]) || r.Skipped {
			t.Errorf("row %d refused %q (skipped %v), want %q", r.Row, r.Reason, r.Skipped, want[r.Row])
		}
	}

	sum := replay.Run(context.Background(), fastClient(src), st, tab, recs, replay.RunOptions{})
	if n := len(rcv.Attempts()); n != 2 || sum.Counts["delivered"] != 2 || len(sum.Refused) != 3 || sum.ExitCode() != 1 {
		t.Errorf("sent %d, counts %v, refused %+v, exit %d", n, sum.Counts, sum.Refused, sum.ExitCode())
	}
}

// TestKeyAlreadySavedByAnotherSession: between this session's load and its key write, another
// session saved the same key in the cell (the minted key is deterministic; the payload key is
// the payload's). The cell holds the key the call will carry, so the row is sent, not refused.
// A conflict that is not the key itself still refuses the row.
func TestKeyAlreadySavedByAnotherSession(t *testing.T) {
	rcv, src, u := formDestination(t)
	tc := formKeys()
	rows := []row{
		{source: "form", url: u, payload: `{"x":1}`, status: "dead"},      // minted
		{source: "form", url: u, payload: `{"id":"p-2"}`, status: "dead"}, // from the payload
		{source: "form", url: u, payload: `{"x":3}`, status: "dead"},      // minted, untouched
	}
	st := newMemStore(tc, rows)
	tab := st.table(t)
	var once sync.Once
	st.onApply = func([]model.Edit) {
		once.Do(func() {
			st.mu.Lock()
			defer st.mu.Unlock()
			st.rows[1][7] = rows[0].minted()
			st.rows[2][7] = "p-2"
		})
	}
	sum := replay.Run(context.Background(), fastClient(src), st, tab, records(tab), replay.RunOptions{})
	if len(sum.Refused) != 0 || sum.Counts["delivered"] != 3 {
		t.Fatalf("counts %v refused %+v", sum.Counts, sum.Refused)
	}
	got := attemptsByKey(rcv)
	for _, k := range []string{rows[0].minted(), "p-2", rows[2].minted()} {
		if len(got[k]) != 1 {
			t.Errorf("key %s sent %d times", k, len(got[k]))
		}
	}

	// A conflict on the key cell that is not the key (here: the store says the key is on two
	// rows) refuses the row.
	rcv2 := receiver.New()
	srv2 := serve(t, rcv2)
	src2 := &replay.Source{Name: "crm", URLPrefixes: []string{srv2.URL}}
	rows2 := keyRows(2, "crm", srv2.URL+"/x")
	rows2[0].key = ""
	mem := newMemStore(dlConfig, rows2)
	tab2 := mem.table(t)
	minted := rows2[0].minted()
	st2 := applyFunc(func(ctx context.Context, edits []model.Edit) (model.ApplyResult, error) {
		var rest []model.Edit
		var dup []model.Conflict
		for _, e := range edits {
			if e.ID == minted && e.Set[model.FKey] == minted { // the key write
				dup = append(dup, model.Conflict{Edit: e, Row: 2, Field: model.FKey, Saw: e.Expect[model.FKey],
					Reason: "the same ID is on rows 2, 9 (make it unique, then retry)"})
			} else {
				rest = append(rest, e)
			}
		}
		res, err := mem.Apply(ctx, rest)
		res.Conflicts = append(res.Conflicts, dup...)
		return res, err
	})
	sum = replay.Run(context.Background(), fastClient(src2), st2, tab2, records(tab2), replay.RunOptions{})
	if _, sent := attemptsByKey(rcv2)[minted]; sent || len(sum.Refused) != 1 || !strings.Contains(sum.Refused[0].Reason, "rows 2, 9") ||
		len(attemptsByKey(rcv2)["k-1"]) != 1 {
		t.Errorf("sent %v, refused %+v", keysOf(attemptsByKey(rcv2)), sum.Refused)
	}

	// The key saved by another session, which then discarded the row (or replayed it and
	// wrote delivered back): the key cell holds the key, but the row is no longer waiting.
	rcv3 := receiver.New()
	srv3 := serve(t, rcv3)
	src3 := &replay.Source{Name: "form", URLPrefixes: []string{srv3.URL}}
	u3 := srv3.URL + "/hook"
	rows3 := []row{
		{source: "form", url: u3, payload: `{"x":1}`, status: "dead"},      // minted, discarded
		{source: "form", url: u3, payload: `{"id":"p-2"}`, status: "dead"}, // payload key, delivered
		{source: "form", url: u3, payload: `{"x":3}`, status: "dead"},      // minted, untouched
	}
	st3 := newMemStore(tc, rows3)
	tab3 := st3.table(t)
	st3.setCell(0, 7, rows3[0].minted())
	st3.setCell(0, 8, "discarded")
	st3.setCell(1, 7, "p-2")
	st3.setCell(1, 8, "delivered")
	sum = replay.Run(context.Background(), fastClient(src3), st3, tab3, records(tab3), replay.RunOptions{})
	got = attemptsByKey(rcv3)
	if len(got) != 1 || len(got[rows3[2].minted()]) != 1 {
		t.Errorf("sent %v, want only row 4", keysOf(got))
	}
	if len(sum.Refused) != 2 {
		t.Fatalf("refused %+v", sum.Refused)
	}
	for i, now := range []string{"discarded", "delivered"} {
		r := sum.Refused[i]
		if r.Row != i+2 || !strings.Contains(r.Reason, "its row changed since it was loaded") || !strings.Contains(r.Reason, fmt.Sprintf("is %q now", now)) {
			t.Errorf("refusal %+v, want row %d changed to %s", r, i+2, now)
		}
	}
	if s := st3.rowAt(0)[model.FStatus]; s != "discarded" {
		t.Errorf("discarded row's status %q", s)
	}
}

type applyFunc func(ctx context.Context, edits []model.Edit) (model.ApplyResult, error)

func (f applyFunc) Apply(ctx context.Context, edits []model.Edit) (model.ApplyResult, error) {
	return f(ctx, edits)
}
