package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// producerFault is the fault of call i (key ord-NNNN) while faults are on: a mix of answers a
// real destination gives, some only on the first attempt (the producer's retries deliver
// them), some on every attempt (the call is dead-lettered).
func producerFault(i, attempt int) (receiver.Fault, bool) {
	slow := receiver.Fault{Latency: 250 * time.Millisecond} // beyond the 100ms timeout; acts late
	if i == 500 {
		return receiver.Fault{Mode: receiver.Unauthorized}, true // systemic: halts its batch
	}
	switch i % 20 {
	case 0:
		return receiver.Fault{Mode: receiver.Unavailable}, true
	case 1:
		return receiver.Fault{Mode: receiver.DropAfterAct}, true // acts, every answer lost
	case 2:
		return receiver.Fault{Mode: receiver.TooManyRequests, RetryAfter: "3600"}, true // deferred
	case 3:
		return receiver.Fault{Mode: receiver.Status, Status: 410}, true // rejected
	case 4:
		return slow, true // acts, every attempt times out
	case 5:
		return receiver.Fault{Mode: receiver.Unavailable}, attempt == 1
	case 6:
		return receiver.Fault{Mode: receiver.DropAfterAct}, attempt == 1 // the retry is a duplicate
	case 7:
		return slow, attempt == 1
	}
	return receiver.Fault{}, false
}

// The producer contract end to end: a caller sends 1,000 calls through
// replay.Producer to the reference receiver with faults on; every call that is not delivered
// lands in failed_calls on the emulator (through sheets.Store's sink) with exactly the key its
// attempts carried; `triage replay --all` with the faults off then delivers every row under
// that key, and the receiver acts once per key over the whole test: a call that acted before
// its answer was lost comes back as a duplicate, never as a second effect.
func TestProducerDeadLettersReplayOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 calls")
	}
	const n = 1000
	var faultsOn atomic.Bool
	faultsOn.Store(true)
	rcv := &receiver.Receiver{Rule: func(key string, attempt int) (receiver.Fault, bool) {
		i, err := strconv.Atoi(strings.TrimPrefix(key, "ord-"))
		if err != nil || !faultsOn.Load() {
			return receiver.Fault{}, false
		}
		return producerFault(i, attempt)
	}}
	// The replay at the end goes over real sockets (the CLI, faults off); the producer's
	// sends, where timeouts decide the outcome, run in a synctest bubble over in-memory
	// transports to the same receiver and emulator, so its 100ms timeout and the 250ms slow
	// answers are read on a fake clock, whatever the machine's load.
	crm := httptest.NewServer(rcv)
	t.Cleanup(crm.Close)

	emu := emulator.New()
	emu.AddWorkbook(&emulator.Workbook{SpreadsheetID: replayID, Title: "Producer", TimeZone: "Etc/UTC",
		Sheets: []*emulator.Sheet{{Title: replayTab, Rows: [][]any{replayHeader}}}})
	emuSrv := httptest.NewServer(emu)
	t.Cleanup(emuSrv.Close)

	sent := make([]replay.Sent, 0, n)
	halts := 0
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		svc, _, err := sheets.Connect(ctx, sheets.AuthOptions{Endpoint: emuSrv.URL,
			HTTPClient: &http.Client{Transport: receiver.Transport(emu)}})
		if err != nil {
			t.Fatal(err)
		}
		store := sheets.New(ctx, svc, sheets.Options{SpreadsheetID: replayID, Tabs: []model.TabConfig{model.DefaultTabConfig(model.RoleDeadLetter)}})

		// The caller: keys from the payload's order_id, a fast backoff, short timeouts.
		p := &replay.Producer{
			Client: &replay.Client{HTTP: &http.Client{Transport: receiver.Transport(rcv)},
				Base: time.Millisecond, Cap: 20 * time.Millisecond, Sources: map[string]*replay.Source{
					"crm": {Name: "crm", URLPrefixes: []string{crm.URL + "/v1/"}, Timeout: 100 * time.Millisecond}}},
			Sink:               store,
			KeyFields:          map[string]string{"crm": "order_id"},
			Concurrency:        16,
			HaltAfterRetryable: -1, // independent events: a flaky destination doesn't stop the others
		}
		for b := 0; b < n; b += 100 {
			calls := make([]replay.Call, 100)
			for i := range calls {
				calls[i] = replay.Call{Source: "crm", URL: crm.URL + "/v1/orders",
					Body: fmt.Appendf(nil, `{"order_id":"ord-%04d","n":%d,"note":"=SUM(A1)"}`, b+i, b+i)}
			}
			got, halt := p.SendAll(ctx, calls)
			if halt != nil {
				halts++
			}
			sent = append(sent, got...)
		}
		// The slow answers' handlers act after their callers gave up: let them finish (on the
		// bubble's fake clock) before the receiver is read.
		time.Sleep(time.Second)
		synctest.Wait()
	})
	if halts != 1 {
		t.Errorf("%d batches halted, want 1 (the one with ord-0500's 401)", halts)
	}

	// Every call is delivered or recorded, under the key its attempts carried.
	byKey := map[string][]receiver.RecordedAttempt{}
	for _, a := range rcv.Attempts() {
		byKey[a.Key] = append(byKey[a.Key], a)
	}
	wantRows := map[string]replay.Sent{}
	for i, s := range sent {
		key := fmt.Sprintf("ord-%04d", i)
		if s.Key != key {
			t.Fatalf("call %d sent as %q, want %q", i, s.Key, key)
		}
		if s.Err != nil {
			t.Fatalf("call %d neither delivered nor recorded: %v", i, s.Err)
		}
		if s.Delivered() == s.DeadLettered {
			t.Fatalf("call %d: delivered %v, dead-lettered %v: want exactly one", i, s.Delivered(), s.DeadLettered)
		}
		if f, always := producerFault(i, 2); always && f.Mode != receiver.OK || f.Latency > 0 && always {
			if !s.DeadLettered {
				t.Errorf("call %d (fault %s on every attempt) was not dead-lettered: %+v", i, f.Mode, s.Result)
			}
		}
		if s.DeadLettered {
			wantRows[key] = s
		}
	}
	rows := emu.Cells(replayID, replayTab)
	if len(rows)-1 != len(wantRows) {
		t.Fatalf("failed_calls has %d rows, want %d dead letters", len(rows)-1, len(wantRows))
	}
	col := map[string]int{}
	for c, h := range rows[0] {
		col[model.CellString(h)] = c
	}
	cell := func(r []any, h string) string { return model.CellString(r[col[h]]) }
	for _, r := range rows[1:] {
		key := cell(r, "key")
		s, ok := wantRows[key]
		if !ok {
			t.Fatalf("row with key %q is not a dead letter of this run", key)
		}
		if pk, _ := model.PayloadKey(cell(r, "payload"), "order_id"); pk != key {
			t.Errorf("row %s: payload carries %q", key, pk)
		}
		if cell(r, "status") != "dead" || cell(r, "attempts") != strconv.Itoa(len(s.Result.Attempts)) || cell(r, "error") != s.Result.Detail {
			t.Errorf("row %s: status %q attempts %q error %q; want dead, %d, %q", key, cell(r, "status"), cell(r, "attempts"), cell(r, "error"), len(s.Result.Attempts), s.Result.Detail)
		}
		// The receiver saw this call's payload only under this key, once per attempt.
		seen := 0
		for k, as := range byKey {
			for _, a := range as {
				if string(a.Body) == cell(r, "payload") {
					seen++
					if k != key {
						t.Errorf("row %s: its payload was sent under key %q", key, k)
					}
				}
			}
		}
		if seen != len(s.Result.Attempts) {
			t.Errorf("row %s: the receiver got its payload %d times, the row says %d attempts", key, seen, len(s.Result.Attempts))
		}
	}
	// Each batch is one atomic write (appendCells with its journal entry).
	if got := emu.Count(emulator.MethodBatchUpdate); got != len(n100(wantRows)) {
		t.Errorf("%d writes, want one per batch with dead letters (%d)", got, len(n100(wantRows)))
	}

	// The faults are fixed: triage replays every row with its key.
	faultsOn.Store(false)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, "[sources.crm]\nurl_prefixes = [%q]\n", crm.URL+"/v1/"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f := &replayFixture{t: t, emu: emu, cfgPath: cfg, env: map[string]string{
		"SHEETS_EMULATOR_HOST": strings.TrimPrefix(emuSrv.URL, "http://"),
		"XDG_CONFIG_HOME":      dir, "XDG_STATE_HOME": dir, "HOME": dir,
	}}
	r := f.run(ctx, "--all", "--concurrency", "8", "--json")
	if r.code != exitOK {
		t.Fatalf("triage replay --all: exit %d\n%s", r.code, r.stderr)
	}
	doc := parseReplayJSON(t, r)
	if len(doc.Rows) != len(wantRows) {
		t.Errorf("the replay sent %d rows, want %d", len(doc.Rows), len(wantRows))
	}
	for _, row := range doc.Rows {
		s, ok := wantRows[row.Key]
		if !ok {
			t.Errorf("row %d was replayed under key %q, which no call was sent with", row.Row, row.Key)
		}
		// Calls that acted before every answer was lost come back as duplicates (those the
		// halted batch never sent did not act).
		i, _ := strconv.Atoi(strings.TrimPrefix(row.Key, "ord-"))
		if i%20 == 1 && len(s.Result.Attempts) > 0 && model.RowState(row.State) != model.StateDuplicate {
			t.Errorf("row %s (acted, answer dropped): %s, want duplicate", row.Key, row.State)
		}
		if !model.RowState(row.State).Success() {
			t.Errorf("row %s: %s (%s)", row.Key, row.State, row.Detail)
		}
	}
	for i, row := range emu.Cells(replayID, replayTab)[1:] {
		if cell(row, "status") != "delivered" {
			t.Errorf("row %d (%s): status %q after the replay", i+2, cell(row, "key"), cell(row, "status"))
		}
	}
	effects := rcv.Effects()
	if len(effects) != n {
		t.Errorf("the receiver acted under %d keys, want %d", len(effects), n)
	}
	for i := range n {
		if k := fmt.Sprintf("ord-%04d", i); effects[k] != 1 {
			t.Errorf("%s acted %d times, want once", k, effects[k])
		}
	}
	// Over the whole test, no payload went out under another key than its own.
	for _, a := range rcv.Attempts() {
		if k, _ := model.PayloadKey(string(a.Body), "order_id"); k != a.Key {
			t.Errorf("a payload of %s was sent under key %q", k, a.Key)
		}
	}
}

// n100 is the set of 100-call batches that had dead letters.
func n100(rows map[string]replay.Sent) map[int]bool {
	out := map[int]bool{}
	for k := range rows {
		i, _ := strconv.Atoi(strings.TrimPrefix(k, "ord-"))
		out[i/100] = true
	}
	return out
}
