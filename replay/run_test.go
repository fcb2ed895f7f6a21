package replay_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
)

var dlConfig = model.DefaultTabConfig(model.RoleDeadLetter)

// byKey returns a receiver rule from a key → fault table (first attempt and later alike).
func byKey(m map[string]receiver.Fault) func(string, int) (receiver.Fault, bool) {
	return func(k string, _ int) (receiver.Fault, bool) {
		f, ok := m[k]
		return f, ok
	}
}

// TestSystemicHaltsAtOnceNothingNewSent (invariant 7): a destination that answers 401 to
// everything (a wrong secret) gets one call, however wide the run: until a source has
// answered with success, one request to it is in flight at a time, and its systemic answer
// halts the run before the next is admitted. The other rows are never shown as sending, are
// not attempted, say the halt is why, and are left untouched.
func TestSystemicHaltsAtOnceNothingNewSent(t *testing.T) {
	for _, conc := range []int{1, 4, 20} {
		t.Run(fmt.Sprint("concurrency ", conc), func(t *testing.T) {
			rcv := receiver.New()
			rcv.Default = receiver.Fault{Mode: receiver.Unauthorized}
			rcv.Latency = 10 * time.Millisecond
			srv := serve(t, rcv)
			src := &replay.Source{Name: "crm", URLPrefixes: []string{srv.URL}, Headers: map[string]string{"Authorization": "env:CRM_TOKEN"}}
			c := fastClient(src)
			c.Getenv = func(string) string { return "Bearer wrong" }
			st := newMemStore(dlConfig, keyRows(20, "crm", srv.URL+"/hook"))
			tab := st.table(t)
			var mu sync.Mutex
			var haltEvents int
			var last model.ReplayEvent
			sending := map[string]bool{}
			sum := replay.Run(context.Background(), c, st, tab, records(tab), replay.RunOptions{Concurrency: conc,
				Progress: func(e model.ReplayEvent) {
					mu.Lock()
					defer mu.Unlock()
					if e.Halted != nil && (last.Halted == nil) {
						haltEvents++
					}
					if e.Row.State == model.StateSending {
						sending[e.Row.ID] = true
					}
					last = e
				}})
			sent := len(rcv.Attempts())
			if sum.Halted == nil || sum.Halted.Cause != "systemic" || sum.Halted.Source != "crm" || sum.Halted.Detail != "401 from crm: check the CRM_TOKEN secret" {
				t.Fatalf("halt %+v", sum.Halted)
			}
			if sent != 1 || len(sending) != 1 {
				t.Errorf("%d requests, %d rows shown sending; want 1: the source's first answer halts the run", sent, len(sending))
			}
			if len(sum.NotAttempted) != 20-sent || sum.Counts["not-attempted"] != 20-sent || sum.Counts["systemic"] != 1 {
				t.Errorf("not attempted %d, counts %v; want %d not attempted, 1 systemic", len(sum.NotAttempted), sum.Counts, 20-sent)
			}
			for _, r := range sum.Rows {
				if r.State == model.StateNotAttempted && (r.Attempts != 0 || r.Detail != "not sent: the run halted before this row") {
					t.Errorf("row %d not attempted: %d attempts, detail %q", r.Row, r.Attempts, r.Detail)
				}
			}
			if sum.ExitCode() != 3 {
				t.Errorf("exit code %d", sum.ExitCode())
			}
			if haltEvents != 1 || last.Done != 20 || last.Total != 20 {
				t.Errorf("progress: %d halt events, last %d/%d", haltEvents, last.Done, last.Total)
			}
			// A systemic answer is not the row's fault: the rows sent stay dead, with the
			// reason; the rows not sent are untouched.
			sentKeys := attemptsByKey(rcv)
			for i := range 20 {
				k := "k-" + strconv.Itoa(i)
				e, _ := st.cell(k, model.FError)
				s, _ := st.cell(k, model.FStatus)
				wantErr := ""
				if _, ok := sentKeys[k]; ok {
					wantErr = "401 from crm: check the CRM_TOKEN secret"
				}
				if s != "dead" || e != wantErr {
					t.Errorf("row %s status %q error %q, want dead %q", k, s, e, wantErr)
				}
			}
		})
	}
}

// TestThreeRetryableInARow: the halt rule over final results in completion order.
func TestThreeRetryableInARow(t *testing.T) {
	const (
		R = "503" // retryable
		J = "410" // rejected
		D = "419" // duplicate
		O = "ok"
	)
	cases := []struct {
		name   string
		seq    []string
		haltAt int // 1-based row that trips the halt; 0 = no halt
	}{
		{"three in a row halt", []string{R, R, R, O, O, O}, 3},
		{"success resets", []string{R, R, O, R, R, O, R, R, O, R, R}, 0},
		{"duplicate resets", []string{R, R, D, R, R, D, R, R}, 0},
		{"rejected does not count", []string{R, J, J, J, R, O, J, J, J}, 0},
		{"rejected does not reset", []string{R, R, J, R, O, O}, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			faults := map[string]receiver.Fault{}
			for i, s := range tc.seq {
				k := "k-" + strconv.Itoa(i)
				switch s {
				case R:
					faults[k] = receiver.Fault{Mode: receiver.Unavailable}
				case J:
					faults[k] = receiver.Fault{Mode: receiver.Status, Status: 410}
				case D:
					faults[k] = receiver.Fault{Mode: receiver.Status, Status: 419}
				}
			}
			rcv := receiver.New()
			rcv.Rule = byKey(faults)
			srv := serve(t, rcv)
			// One row at a time, so completion order is plan order.
			src := &replay.Source{Name: "crm", URLPrefixes: []string{srv.URL}, MaxAttempts: 2, Concurrency: 1}
			st := newMemStore(dlConfig, keyRows(len(tc.seq), "crm", srv.URL+"/hook"))
			tab := st.table(t)
			sum := replay.Run(context.Background(), fastClient(src), st, tab, records(tab), replay.RunOptions{Concurrency: 1})
			if tc.haltAt == 0 {
				if sum.Halted != nil {
					t.Fatalf("halted: %+v", sum.Halted)
				}
				if len(sum.NotAttempted) != 0 {
					t.Fatalf("not attempted %v", sum.NotAttempted)
				}
				return
			}
			if sum.Halted == nil || sum.Halted.Cause != "3 retryable in a row" {
				t.Fatalf("halt %+v, want 3 retryable in a row", sum.Halted)
			}
			if !strings.Contains(sum.Halted.Detail, "503") {
				t.Errorf("halt detail %q doesn't name the failure", sum.Halted.Detail)
			}
			keys := attemptsByKey(rcv)
			if len(keys) != tc.haltAt {
				t.Errorf("%d rows contacted, want %d", len(keys), tc.haltAt)
			}
			if len(sum.NotAttempted) != len(tc.seq)-tc.haltAt {
				t.Errorf("not attempted %v", sum.NotAttempted)
			}
		})
	}
}

func TestBulkSkipsStickyDiscardedDelivered(t *testing.T) {
	rcv, srv, src := crmDestination(t)
	rows := keyRows(5, "crm", srv.URL+"/hook")
	rows[0].status, rows[1].status, rows[2].status, rows[3].status = "rejected", "Discarded", "delivered", "weird"
	rows[0].errText = "410 from crm"
	st := newMemStore(dlConfig, rows)
	tab := st.table(t)
	sum := replay.Run(context.Background(), fastClient(src), st, tab, records(tab), replay.RunOptions{})
	if n := len(rcv.Attempts()); n != 1 {
		t.Fatalf("%d requests, want 1 (only the dead row)", n)
	}
	if len(sum.Refused) != 4 {
		t.Fatalf("refused %+v", sum.Refused)
	}
	want := []string{"row 2: rejected: clear its error first to replay it", "row 3: discarded", "row 4: already delivered", `row 5: status "weird"`}
	for i, w := range want {
		if !strings.HasPrefix(sum.Refused[i].Reason, w) {
			t.Errorf("refusal %d %q, want %q", i, sum.Refused[i].Reason, w)
		}
	}
	if e, _ := st.cell("k-0", model.FError); e != "410 from crm" {
		t.Errorf("sticky error touched: %q", e)
	}
}

func TestDryRunSendsAndWritesNothing(t *testing.T) {
	rcv := receiver.New()
	srv := serve(t, rcv)
	src := &replay.Source{Name: "crm", URLPrefixes: []string{srv.URL}, Headers: map[string]string{"Authorization": "env:CRM_TOKEN"}}
	c := fastClient(src)
	c.Getenv = func(string) string { return "Bearer topsecret" }
	rows := keyRows(3, "crm", srv.URL+"/hook")
	rows[1].key = ""       // minted
	rows[2].method = "put" // method cell
	st := newMemStore(dlConfig, rows)
	tab := st.table(t)
	sum := replay.Run(context.Background(), c, st, tab, records(tab), replay.RunOptions{DryRun: true})
	if len(rcv.Attempts()) != 0 || st.applyCount() != 0 || sum.WriteRequests != 0 {
		t.Fatalf("dry run sent %d, wrote %d", len(rcv.Attempts()), st.applyCount())
	}
	if len(sum.DryRun) != 3 {
		t.Fatalf("dry run lists %d", len(sum.DryRun))
	}
	minted := rows[1].minted()
	if minted == "" || sum.DryRun[1].Key != minted {
		t.Errorf("minted key %q, want %q", sum.DryRun[1].Key, minted)
	}
	if k, _ := st.cell(minted, model.FKey); k != "" {
		t.Errorf("dry run wrote the key cell: %q", k)
	}
	p := sum.DryRun[2]
	if p.Method != "PUT" || p.URL != srv.URL+"/hook" || p.Key != "k-2" || p.Source != "crm" || p.Row != 4 {
		t.Errorf("planned %+v", p)
	}
	if sum.DryRun[0].Method != "POST" || strings.Join(p.Headers, ";") != "Authorization: env:CRM_TOKEN (set)" {
		t.Errorf("headers %q", p.Headers)
	}
	if strings.Contains(fmt.Sprintf("%+v", sum), "topsecret") {
		t.Error("the summary leaks the secret")
	}
}

// TestMintedKeyOnSheetBeforeFirstRequest: the receiver checks the store's key cell when each
// request arrives.
func TestMintedKeyOnSheetBeforeFirstRequest(t *testing.T) {
	rcv := receiver.New()
	var st *memStore
	var mu sync.Mutex
	var violations []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := r.Header.Get("Idempotency-Key")
		if cell, ok := st.cell(k, model.FKey); !ok || cell != k {
			mu.Lock()
			violations = append(violations, fmt.Sprintf("%s: key cell %q", k, cell))
			mu.Unlock()
		}
		rcv.ServeHTTP(w, r)
	})
	srv := serve(t, h)
	src := &replay.Source{Name: "crm", URLPrefixes: []string{srv.URL}}
	rows := keyRows(30, "crm", srv.URL+"/hook")
	for i := range rows {
		if i%3 != 0 {
			rows[i].key = ""
		}
	}
	st = newMemStore(dlConfig, rows)
	tab := st.table(t)
	var sentAtFirstApply = -1
	st.onApply = func([]model.Edit) {
		if sentAtFirstApply < 0 {
			sentAtFirstApply = len(rcv.Attempts())
		}
	}
	sum := replay.Run(context.Background(), fastClient(src), st, tab, records(tab), replay.RunOptions{Concurrency: 4})
	if len(violations) > 0 {
		t.Fatalf("requests left before their key was on the sheet: %v", violations)
	}
	// The one write before any request: the 20 keys, and a check of every row (the 10 with
	// a key cell write it back unchanged; the 20 others also get a status check).
	if sentAtFirstApply != 0 || keyWrites(st.edits[0]) != 20 || len(st.edits[0]) != 50 {
		t.Errorf("first write after %d requests with %d key writes (%d edits), want the 20 keys (50 edits) before any request",
			sentAtFirstApply, keyWrites(st.edits[0]), len(st.edits[0]))
	}
	if sum.Counts["delivered"] != 30 || len(rcv.Effects()) != 30 {
		t.Errorf("counts %v effects %d", sum.Counts, len(rcv.Effects()))
	}
	// Reloaded, the minted keys are key cells now, and unchanged.
	for i, r := range st.table(t).Records {
		if r.KeyOrigin != model.KeyCell || (i%3 != 0 && r.ID != rows[i].minted()) {
			t.Errorf("row %d: key %q from %v", r.Row, r.ID, r.KeyOrigin)
		}
	}
}

// TestMintedKeyWriteFailureSendsNothing: when the write before sending fails, no key is
// pinned and no row is checked, so nothing is sent, not even the rows whose key is in their
// key cell already.
func TestMintedKeyWriteFailureSendsNothing(t *testing.T) {
	rcv, srv, src := crmDestination(t)
	rows := keyRows(4, "crm", srv.URL+"/hook")
	rows[0].key, rows[1].key = "", ""
	st := newMemStore(dlConfig, rows)
	tab := st.table(t)
	st.fail = errors.New("quota exceeded")
	sum := replay.Run(context.Background(), fastClient(src), st, tab, records(tab), replay.RunOptions{})
	if _, ok := attemptsByKey(rcv)[tab.Records[0].ID]; ok {
		t.Fatal("a row whose key could not be written was sent")
	}
	if len(rcv.Attempts()) != 0 || len(sum.Refused) != 4 {
		t.Fatalf("sent %d, refused %+v", len(rcv.Attempts()), sum.Refused)
	}
	for i, r := range sum.Refused {
		want := "could not be checked against the sheet before sending (quota exceeded); not sent"
		if i < 2 {
			want = "its minted key could not be written to the key cell before sending (quota exceeded); not sent"
		}
		if !strings.HasPrefix(r.Reason, fmt.Sprintf("row %d: ", i+2)) || !strings.Contains(r.Reason, want) {
			t.Errorf("refusal %d %q, want %q", i, r.Reason, want)
		}
	}
	if st.applyCount() != 1 || sum.WriteRequests != 1 || len(sum.WriteErrors) != 0 || sum.ExitCode() != 1 {
		t.Errorf("applies %d (summary %d), write errors %v, exit %d", st.applyCount(), sum.WriteRequests, sum.WriteErrors, sum.ExitCode())
	}

	// A key cell filled by someone else since the load: that row's identity is gone.
	rcv2 := receiver.New()
	srv2 := serve(t, rcv2)
	src2 := &replay.Source{Name: "crm", URLPrefixes: []string{srv2.URL}}
	rows = keyRows(2, "crm", srv2.URL+"/hook")
	rows[0].key, rows[1].key = "", ""
	st = newMemStore(dlConfig, rows)
	tab = st.table(t)
	st.rows[1][7] = "typed-by-hand"
	sum = replay.Run(context.Background(), fastClient(src2), st, tab, records(tab), replay.RunOptions{})
	if len(attemptsByKey(rcv2)) != 1 || len(sum.Refused) != 1 || sum.Refused[0].Row != 2 {
		t.Errorf("sent %v refused %+v", attemptsByKey(rcv2), sum.Refused)
	}
}

func TestBodyKeyAndKeyRefusals(t *testing.T) {
	rcv := receiver.New()
	rcv.BodyKeyField = "id"
	srv := serve(t, rcv)
	src := &replay.Source{Name: "form", URLPrefixes: []string{srv.URL}, Key: []replay.KeySpec{{In: "body", Name: "id"}, {In: "header", Name: "Idempotency-Key"}}}
	tc := formKeys()
	u := srv.URL + "/hook"
	rows := []row{
		{source: "form", url: u, payload: `{"id":"p-1", "x":1}`},                         // key from the payload
		{source: "form", url: u, payload: `{ "x":2 }`, key: "cell-2"},                    // key cell, inserted in the body
		{source: "form", url: u, payload: `[1,2]`, key: "cell-3"},                        // can't carry a body key
		{source: "form", url: u, payload: `{"id":"p-4"}`, key: "cell-4"},                 // disagreement
		{source: "nope", url: u, payload: `{}`, key: "cell-5"},                           // unknown source
		{source: "form", url: "https://evil.example/hook", payload: `{}`, key: "cell-6"}, // not allowed
	}
	st := newMemStore(tc, rows)
	tab := st.table(t)
	sum := replay.Run(context.Background(), fastClient(src), st, tab, records(tab), replay.RunOptions{})
	got := attemptsByKey(rcv)
	if len(got) != 2 {
		t.Fatalf("sent %v", got)
	}
	if b := string(got["p-1"][0].Body); b != `{"id":"p-1", "x":1}` {
		t.Errorf("body with its own key changed: %s", b)
	}
	if b := string(got["cell-2"][0].Body); b != `{"id":"cell-2", "x":2 }` {
		t.Errorf("inserted body %s", b)
	}
	if h := got["cell-2"][0].Headers.Get("Idempotency-Key"); h != "cell-2" {
		t.Errorf("header key %q", h)
	}
	want := map[int]string{4: "not a JSON object", 5: "disagrees with key cell", 6: `source "nope" is not configured`, 7: "not under any allowed prefix"}
	if len(sum.Refused) != len(want) {
		t.Fatalf("refused %+v", sum.Refused)
	}
	for _, r := range sum.Refused {
		if !strings.Contains(r.Reason, want[r.Row]) || !strings.HasPrefix(r.Reason, fmt.Sprintf("row %d: ", r.Row)) {
			t.Errorf("row %d refused %q, want it to name the row and say %q", r.Row, r.Reason, want[r.Row])
		}
	}
}

func TestKeyTTLRefusesOldRowsUnlessForced(t *testing.T) {
	rcv, srv, _ := destination(t)
	c := ttlClient(srv.URL)
	rows := keyRows(2, "crm", srv.URL+"/x")
	rows[0].ts = "2026-01-03T10:00:00Z"
	rows[1].ts = "2026-01-01T10:00:00Z"
	st := newMemStore(dlConfig, rows)
	tab := st.table(t)
	sum := replay.Run(context.Background(), c, st, tab, records(tab), replay.RunOptions{})
	if len(rcv.Attempts()) != 1 || len(sum.Refused) != 1 || !strings.Contains(sum.Refused[0].Reason, "key lifetime") {
		t.Fatalf("sent %d refused %+v", len(rcv.Attempts()), sum.Refused)
	}
	tab = st.table(t)
	sum = replay.Run(context.Background(), c, st, tab, records(tab), replay.RunOptions{Force: true})
	if len(rcv.Attempts()) != 2 || sum.Counts["delivered"] != 1 {
		t.Fatalf("forced: sent %d, counts %v", len(rcv.Attempts()), sum.Counts)
	}
}

func TestWriteBackCells(t *testing.T) {
	rcv := receiver.New()
	rcv.Rule = byKey(map[string]receiver.Fault{
		"k-1": {Mode: receiver.Status, Status: 410},
		"k-2": {Mode: receiver.Unavailable},
		"k-4": {Mode: receiver.TooManyRequests, RetryAfter: "86400"},
		"k-5": {Mode: receiver.Status, Status: 419},
	})
	srv := serve(t, rcv)
	src := &replay.Source{Name: "crm", URLPrefixes: []string{srv.URL}, MaxAttempts: 2}
	c := fastClient(src)
	now := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	c.Now = func() time.Time { return now }
	rows := keyRows(7, "crm", srv.URL+"/x")
	rows[0].status = "" // blank reads as dead
	rows[3].errText = "old error"
	st := newMemStore(dlConfig, rows)
	tab := st.table(t)
	// k-6: someone discards it after the check before sending (the first Apply), before its
	// outcome is written back.
	st.onApply = func([]model.Edit) {
		if st.applyCount() == 1 {
			st.setCell(6, 8, "discarded")
		}
	}
	sum := replay.Run(context.Background(), c, st, tab, records(tab), replay.RunOptions{Concurrency: 1})
	type cells struct{ status, attempts, errSub, replayed string }
	ts := "2026-02-03T04:05:06Z"
	want := []cells{
		{"delivered", "2", "", ts},
		{"rejected", "2", "410 from crm: rejected", ts},
		{"dead", "3", "503 Service Unavailable from crm (after 2 attempts)", ts},
		{"delivered", "2", "", ts},
		{"dead", "2", "beyond the 20ms cap: deferred", ts},
		{"delivered", "2", "", ts},
		{"discarded", "1", "", ""},
	}
	for i, w := range want {
		got := st.rowAt(i)
		if got[model.FStatus] != w.status || got[model.FAttempts] != w.attempts || got[model.FReplayedAt] != w.replayed ||
			(w.errSub == "" && got[model.FError] != "") || !strings.Contains(got[model.FError], w.errSub) {
			t.Errorf("row %d: %v, want %+v", i+2, got, w)
		}
	}
	states := make([]string, len(sum.Rows))
	for i, r := range sum.Rows {
		states[i] = string(r.State)
	}
	if strings.Join(states, ",") != "delivered,rejected,retryable,delivered,deferred,duplicate,delivered" {
		t.Errorf("states %v", states)
	}
	if len(sum.WriteConflicts) != 1 || sum.WriteConflicts[0].Edit.ID != "k-6" || sum.WriteConflicts[0].Now != "discarded" {
		t.Errorf("conflicts %+v", sum.WriteConflicts)
	}
	if sum.ExitCode() != 1 {
		t.Errorf("exit code %d", sum.ExitCode())
	}
}

func TestWriteBackBatches(t *testing.T) {
	rcv, srv, src := crmDestination(t)
	st := newMemStore(dlConfig, keyRows(35, "crm", srv.URL+"/x"))
	tab := st.table(t)
	sum := replay.Run(context.Background(), fastClient(src), st, tab, records(tab), replay.RunOptions{FlushEvery: 10, FlushInterval: time.Hour})
	// The check before sending, then four batches.
	if sum.WriteRequests != 5 || st.applyCount() != 5 {
		t.Fatalf("write requests %d (store saw %d), want 5", sum.WriteRequests, st.applyCount())
	}
	for i, n := range []int{35, 10, 10, 10, 5} {
		if len(st.edits[i]) != n {
			t.Errorf("batch %d has %d edits, want %d", i, len(st.edits[i]), n)
		}
	}
	if sum.Counts["delivered"] != 35 {
		t.Errorf("counts %v", sum.Counts)
	}

	// A failed write-back is reported, not retried.
	st = newMemStore(dlConfig, keyRows(3, "crm", srv.URL+"/y"))
	tab = st.table(t)
	st.fail, st.failAfter = errors.New("503 from sheets"), 1 // the check before sending succeeds
	// One flush at the end, however slowly the rows finish on a loaded machine.
	sum = replay.Run(context.Background(), fastClient(src), st, tab, records(tab), replay.RunOptions{FlushInterval: time.Hour})
	if len(sum.Refused) != 0 || len(rcv.Attempts()) != 38 || st.applyCount() != 2 || len(sum.WriteErrors) != 1 || !strings.Contains(sum.WriteErrors[0], "503 from sheets") {
		t.Errorf("refused %+v, %d requests, applies %d, errors %v", sum.Refused, len(rcv.Attempts()), st.applyCount(), sum.WriteErrors)
	}
}

func TestWriteBackFlushInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rcv := receiver.New()
		rcv.Latency = 1500 * time.Millisecond
		src := &replay.Source{Name: "crm", URLPrefixes: []string{memURL}}
		st := newMemStore(dlConfig, keyRows(5, "crm", memURL+"/x"))
		tab := st.table(t)
		c := memClient(rcv, src)
		src.Concurrency = 1 // one row at a time: rows finish at 1.5s, 3s, 4.5s, 6s, 7.5s
		sum := replay.Run(context.Background(), c, st, tab, records(tab), replay.RunOptions{Concurrency: 1, FlushInterval: 2 * time.Second})
		// The check before sending, at 0s, then flushes at 3.5s, 6.5s and the end.
		if sum.WriteRequests != 4 {
			t.Fatalf("write requests %d, want 4", sum.WriteRequests)
		}
		for i, n := range []int{5, 2, 2, 1} {
			if len(st.edits[i]) != n {
				t.Errorf("flush %d has %d edits, want %d", i, len(st.edits[i]), n)
			}
		}
	})
}

// TestConcurrencyBound: the requests in flight never exceed the run's bound (or the source's,
// when lower), and the runner does fill the bound once the source has answered with success
// (before that, its probe sends one at a time: those requests go straight to the receiver,
// one unanswered at a time, see probeCheck). To check the second half without betting on the
// scheduler of a loaded machine, every later request is held until the bound is reached (or
// 10s have passed, when it never is): a runner that sends fewer at once fails the test
// (slowly), one that sends more fails it at once. With no bound given (0: the CLI without
// --concurrency), a source's own concurrency stands, above the default 4 too; a bound given
// caps it.
func TestConcurrencyBound(t *testing.T) {
	for _, tc := range []struct{ conc, srcConc, want int }{{5, 0, 5}, {20, 3, 3}, {50, 0, 20}, {0, 10, 10}, {0, 0, 4}, {0, 2, 2}, {3, 10, 3}} {
		t.Run(fmt.Sprintf("run %d source %d", tc.conc, tc.srcConc), func(t *testing.T) {
			rcv := receiver.New()
			rcv.Latency = 5 * time.Millisecond
			rcv.Rule = func(_ string, n int) (receiver.Fault, bool) {
				return receiver.Fault{Mode: receiver.Unavailable}, n == 1
			}
			peak, cancel := testbed.NewPeak(tc.want, rcv)
			defer cancel()
			probe := &probeCheck{first: rcv, then: peak}
			srv := serve(t, probe)
			src := &replay.Source{Name: "crm", URLPrefixes: []string{srv.URL}, Concurrency: tc.srcConc}
			st := newMemStore(dlConfig, keyRows(150, "crm", srv.URL+"/x"))
			tab := st.table(t)
			sum := replay.Run(context.Background(), fastClient(src), st, tab, records(tab), replay.RunOptions{Concurrency: tc.conc})
			if sum.Counts["duplicate"]+sum.Counts["delivered"] != 150 {
				t.Fatalf("counts %v", sum.Counts)
			}
			if p := max(peak.Max(), rcv.MaxConcurrent()); p > tc.want {
				t.Errorf("peak %d requests in flight, want at most %d", p, tc.want)
			}
			if !peak.Reached() {
				t.Errorf("never %d requests in flight at once: the runner doesn't fill its bound", tc.want)
			}
			if n, over := probe.Probes(); n == 0 || over != 0 {
				t.Errorf("%d requests before the first success, %d of them with another in flight; want some, one at a time", n, over)
			}
		})
	}
}

// TestConcurrencyUnsetPerSource: with no bound given, a source with its own concurrency (10)
// gets it, while a source without one in the same run keeps the default 4: the run's larger
// bound is not handed to it. Each source's first request (its probe: alone until answered) is
// answered at once; every later one is held until both sources are at their bounds (or 10s
// have passed).
func TestConcurrencyUnsetPerSource(t *testing.T) {
	reached := make(chan struct{})
	var once sync.Once
	giveUp, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var mu sync.Mutex
	inFlight, peak := map[string]int{}, map[string]int{}
	want := map[string]int{"wide": 10, "plain": replay.DefaultConcurrency}
	probed := map[string]bool{}
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		src := strings.Trim(r.URL.Path, "/")
		mu.Lock()
		if !probed[src] {
			probed[src] = true
			mu.Unlock()
			w.WriteHeader(http.StatusOK)
			return
		}
		inFlight[src]++
		peak[src] = max(peak[src], inFlight[src])
		if inFlight["wide"] >= want["wide"] && inFlight["plain"] >= want["plain"] {
			once.Do(func() { close(reached) })
		}
		mu.Unlock()
		select {
		case <-reached:
		case <-giveUp.Done():
		}
		mu.Lock()
		inFlight[src]--
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	var rows []row
	for i, r := range append(keyRows(40, "wide", srv.URL+"/wide"), keyRows(40, "plain", srv.URL+"/plain")...) {
		r.key = fmt.Sprintf("k-%s-%d", r.source, i)
		rows = append(rows, r)
	}
	st := newMemStore(dlConfig, rows)
	tab := st.table(t)
	c := fastClient(&replay.Source{Name: "wide", URLPrefixes: []string{srv.URL}, Concurrency: 10},
		&replay.Source{Name: "plain", URLPrefixes: []string{srv.URL}})
	sum := replay.Run(context.Background(), c, st, tab, records(tab), replay.RunOptions{})
	if sum.Counts["delivered"] != 80 {
		t.Fatalf("counts %v", sum.Counts)
	}
	mu.Lock()
	defer mu.Unlock()
	for src, n := range want {
		if peak[src] > n {
			t.Errorf("%s: %d requests in flight at once, want at most %d", src, peak[src], n)
		}
	}
	select {
	case <-reached:
	default:
		t.Errorf("never %v requests in flight at once (peak %v)", want, peak)
	}
}

// TestChangedKeyCellIsNotSent (invariant 3): a row loaded with key cell k-1 whose cell is
// changed to k-1b after the load (someone fixing a clash) must not be sent with k-1: the
// write-back could not find k-1, and the next replay would send k-1b, so the receiver would
// act twice. The check before sending finds no row with k-1 and refuses it; replayed after a
// refresh it goes out once, with k-1b.
func TestChangedKeyCellIsNotSent(t *testing.T) {
	rcv, srv, src := crmDestination(t)
	st := newMemStore(dlConfig, keyRows(3, "crm", srv.URL+"/x"))
	tab := st.table(t)
	st.setCell(1, 7, "k-1b")
	c := fastClient(src)
	sum := replay.Run(context.Background(), c, st, tab, records(tab), replay.RunOptions{})
	got := attemptsByKey(rcv)
	if _, sent := got["k-1"]; sent || len(got) != 2 || sum.Counts["delivered"] != 2 {
		t.Fatalf("sent %v, counts %v, want k-0 and k-2 only", keysOf(got), sum.Counts)
	}
	if len(sum.Refused) != 1 || sum.Refused[0].Row != 3 || sum.Refused[0].ID != "k-1" ||
		!strings.Contains(sum.Refused[0].Reason, `row 3: its row changed since it was loaded (no row has the key "k-1" any more`) ||
		!strings.Contains(sum.Refused[0].Reason, "refresh and replay again; not sent") {
		t.Fatalf("refused %+v", sum.Refused)
	}
	if len(sum.WriteErrors) != 0 || sum.ExitCode() != 1 {
		t.Errorf("write errors %v, exit %d", sum.WriteErrors, sum.ExitCode())
	}
	if cells := st.rowAt(1); cells[model.FStatus] != "dead" || cells[model.FAttempts] != "1" || cells[model.FKey] != "k-1b" {
		t.Errorf("refused row %v, want it untouched", cells)
	}

	// After a refresh: the row goes out once, under its one key.
	tab = st.table(t)
	sum = replay.Run(context.Background(), c, st, tab, records(tab), replay.RunOptions{})
	if sum.Counts["delivered"] != 1 || len(sum.Refused) != 2 {
		t.Errorf("second run: counts %v refused %+v", sum.Counts, sum.Refused)
	}
	if eff := rcv.Effects(); len(eff) != 3 || eff["k-1b"] != 1 || eff["k-1"] != 0 {
		t.Errorf("effects %v, want one per row", eff)
	}
}

// TestRowNoLongerWaitingIsNotSent (invariant 6): rows discarded, delivered (by another
// session) or rejected since the load are not sent from the stale snapshot, and their cells
// are left as they are; the rows still as loaded go out.
func TestRowNoLongerWaitingIsNotSent(t *testing.T) {
	rcv, srv, src := crmDestination(t)
	rows := keyRows(5, "crm", srv.URL+"/x")
	rows[4].key = "" // minted: the key write carries the check
	st := newMemStore(dlConfig, rows)
	tab := st.table(t)
	st.setCell(1, 8, "discarded")
	st.setCell(2, 8, "delivered")
	st.setCell(3, 8, "rejected")
	st.setCell(4, 8, "Discarded")
	sum := replay.Run(context.Background(), fastClient(src), st, tab, records(tab), replay.RunOptions{})
	got := attemptsByKey(rcv)
	if len(got) != 1 || len(got["k-0"]) != 1 || sum.Counts["delivered"] != 1 {
		t.Fatalf("sent %v, counts %v, want only k-0", keysOf(got), sum.Counts)
	}
	now := []string{"discarded", "delivered", "rejected", "Discarded"}
	if len(sum.Refused) != len(now) {
		t.Fatalf("refused %+v", sum.Refused)
	}
	for i, r := range sum.Refused {
		if r.Row != i+3 || r.Skipped || !strings.HasPrefix(r.Reason, fmt.Sprintf("row %d: its row changed since it was loaded (", i+3)) ||
			!strings.Contains(r.Reason, fmt.Sprintf(`status was "dead" when you looked, is %q now`, now[i])) {
			t.Errorf("refusal %+v, want row %d changed to %s", r, i+3, now[i])
		}
	}
	for i := 1; i < 5; i++ {
		cells := st.rowAt(i)
		if cells[model.FStatus] != now[i-1] || cells[model.FAttempts] != "1" || cells[model.FReplayedAt] != "" {
			t.Errorf("row %d %v, want it untouched", i+2, cells)
		}
	}
	if k := st.rowAt(4)[model.FKey]; k != "" {
		t.Errorf("the refused row's key was written: %q", k)
	}
	if sum.WriteRequests != 2 || len(sum.WriteConflicts) != 0 || sum.ExitCode() != 1 {
		t.Errorf("write requests %d, conflicts %v, exit %d", sum.WriteRequests, sum.WriteConflicts, sum.ExitCode())
	}
}

// TestNoStoreSendsNothing: without a store nothing can be checked (or written) before
// sending, so nothing is sent.
func TestNoStoreSendsNothing(t *testing.T) {
	rcv, srv, src := crmDestination(t)
	rows := keyRows(2, "crm", srv.URL+"/x")
	rows[1].key = ""
	tab := newMemStore(dlConfig, rows).table(t)
	sum := replay.Run(context.Background(), fastClient(src), nil, tab, records(tab), replay.RunOptions{})
	if len(rcv.Attempts()) != 0 || len(sum.Refused) != 2 || sum.WriteRequests != 0 ||
		!strings.Contains(sum.Refused[0].Reason, "no store to check its row against") || !strings.Contains(sum.Refused[1].Reason, "no store to write it to") {
		t.Errorf("sent %d, refused %+v", len(rcv.Attempts()), sum.Refused)
	}
}

// countingStore is a memStore whose every Apply costs three write requests, as a store with
// rounds and fences may, and which has sent some before the run.
type countingStore struct {
	*memStore
	mu     sync.Mutex
	writes int
}

func (c *countingStore) Apply(ctx context.Context, edits []model.Edit) (model.ApplyResult, error) {
	c.mu.Lock()
	c.writes += 3
	c.mu.Unlock()
	return c.memStore.Apply(ctx, edits)
}

func (c *countingStore) WriteRequests() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writes
}

// TestWriteRequestsAndUnwrittenOutcomes: a store that counts its write requests
// (replay.WriteCounter) has the run's own reported (not those sent before it, not one per
// Apply); and a delivered row whose outcome could not be written back is not done: its
// RowResult says why, Done is false and the exit code is 1.
func TestWriteRequestsAndUnwrittenOutcomes(t *testing.T) {
	rcv := receiver.New()
	srv := serve(t, rcv)
	mem := newMemStore(dlConfig, keyRows(3, "crm", srv.URL+"/x"))
	mem.fail, mem.failAfter = errors.New("quota exceeded"), 1 // the check passes, the write-back fails
	st := &countingStore{memStore: mem, writes: 7}
	tab := mem.table(t)
	sum := replay.Run(context.Background(), fastClient(&replay.Source{Name: "crm", URLPrefixes: []string{srv.URL}}), st, tab, records(tab),
		replay.RunOptions{FlushInterval: time.Hour})
	if sum.Counts[model.StateDelivered] != 3 {
		t.Fatalf("counts %v", sum.Counts)
	}
	if applies := mem.applies; sum.WriteRequests != 3*applies || applies != 2 {
		t.Errorf("WriteRequests %d after %d Applies of 3 requests each, want %d", sum.WriteRequests, applies, 3*applies)
	}
	for _, r := range sum.Rows {
		if r.Done() || !strings.Contains(r.WriteBack, "quota exceeded") {
			t.Errorf("row %d: done %v, write-back %q; want not done, saying why", r.Row, r.Done(), r.WriteBack)
		}
	}
	if code := sum.ExitCode(); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	// A store that doesn't count: one per Apply.
	mem2 := newMemStore(dlConfig, keyRows(3, "crm", srv.URL+"/y"))
	tab2 := mem2.table(t)
	sum = replay.Run(context.Background(), fastClient(&replay.Source{Name: "crm", URLPrefixes: []string{srv.URL}}), mem2, tab2, records(tab2),
		replay.RunOptions{FlushInterval: time.Hour})
	if sum.WriteRequests != mem2.applies || sum.ExitCode() != 0 {
		t.Errorf("WriteRequests %d after %d Applies, exit %d", sum.WriteRequests, mem2.applies, sum.ExitCode())
	}
	for _, r := range sum.Rows {
		if !r.Done() || r.WriteBack != "" {
			t.Errorf("row %d written back: done %v, write-back %q", r.Row, r.Done(), r.WriteBack)
		}
	}
}
