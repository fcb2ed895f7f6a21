package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
	"github.com/triage-dev/triage/sheets/emulator"
)

// The result reported (exit code, JSON) matches the sheet, for the CLI, while
// another editor sorts, inserts and deletes rows between the commands' locate read and their
// write (the emulator's hook, before every sheet request after the load).
//
// Each case is one invocation of the root command (run, as main does) with --json against an
// in-process emulator over HTTP: set-status on the Inbox, clear-error on Jobs and on
// failed_calls, requeue-stale, and replay (with a receiver over HTTP). The other editor sorts
// by a random column (either direction), inserts rows (blank in the columns triage writes, as
// a row inserted a moment ago is) and deletes rows, targets included, before about half of
// the reads after the load and before up to two writes in a row. It never edits a cell.
//
// After each case:
//   - the exit code is the JSON's exit_code, and it is 1 exactly when the JSON lists
//     something not done (conflict, missing, damaged, refused, unchanged and not done, a
//     write-back error), else 0;
//   - every row reported changed holds, on the row with that ID, what the JSON says was set;
//   - an ID whose row was deleted before the write is reported missing (or, for replay,
//     refused and never sent), with exit 1;
//   - nothing else changed: every other row (the other editor's included) is as it was;
//   - replay: every request carried its own row's key, and a row reported delivered or
//     rejected holds that status, its key and its attempts on the sheet.
func TestCLIResultMatchesSheetUnderMoves(t *testing.T) {
	var mu sync.Mutex
	counts := map[string]int{}
	for seed := range testbed.Seeds(t, testbed.CaseCount(60, 20, ""), 0, "TRIAGE_CLI_MOVES_SEED") {
		sc := cliMoveScenarios[seed%len(cliMoveScenarios)]
		t.Run(fmt.Sprintf("%02d-%s", seed, sc), func(t *testing.T) {
			c := runCLIMovesCase(t, uint64(seed), sc)
			mu.Lock()
			for k, v := range c {
				counts[k] += v
			}
			mu.Unlock()
		})
	}
	t.Logf("operations and outcomes: %v", counts)
	testbed.Exercised(t, counts, "sort", "insert", "delete", "→changed", "→missing", "→sent")
}

// notChangedLine is the error line of an edit command that did not do everything.
var notChangedLine = regexp.MustCompile(`triage: (\d+) (?:rows?|claims?) (?:of \d+ not changed|not requeued)`)

var cliMoveScenarios = []string{"set-status", "clear-error-jobs", "clear-error-deadletter", "requeue-stale", "replay"}

const cliMovesID = "mv"

// cliTab is one tab of the case's workbook: its name, header, and the column that names a row
// (never written by triage): the ID of Inbox and Jobs, the payload of failed_calls.
type cliTab struct {
	name   string
	header []string
	anchor int
}

var (
	cliInbox = cliTab{"Inbox", []string{"Timestamp", "Name", "Email", "Message", "Status", "ID"}, 5}
	cliJobs  = cliTab{"Jobs", []string{"id", "type", "payload", "status", "claimedBy", "claimedAt", "lastError", "updatedAt"}, 0}
	cliDead  = cliTab{"failed_calls", []string{"timestamp", "source", "url", "payload", "error", "attempts", "method", "key", "status", "replayed_at"}, 3}
)

// cliRows reads a tab of the emulator: anchor → content by lower-cased header, and the row
// (1-based) of each anchor.
func cliRows(emu *emulator.Emulator, tab cliTab) (map[string]map[string]string, map[string]int) {
	cells := emu.Cells(cliMovesID, tab.name)
	out, at := map[string]map[string]string{}, map[string]int{}
	for r := 1; r < len(cells); r++ {
		m := map[string]string{}
		for c, v := range cells[r] {
			if c < len(tab.header) {
				if s := model.CellString(v); s != "" {
					m[strings.ToLower(tab.header[c])] = s
				}
			}
		}
		if len(m) == 0 {
			continue
		}
		a := m[strings.ToLower(tab.header[tab.anchor])]
		if _, dup := out[a]; dup {
			a += fmt.Sprintf("#dup-row-%d", r+1)
		}
		out[a], at[a] = m, r+1
	}
	return out, at
}

// cliEditor is the other editor of one tab (a testbed.Adversary): before about half of the
// reads after the load and before up to two writes in a row (two in three), one or two
// changes, each a sort by a random column either way (5 in 10), the insert of a row blank in
// the columns triage writes (2 in 10), or the delete of any row, targets included (3 in 10).
func cliEditor(t *testing.T, seed uint64, tab cliTab) *testbed.Adversary {
	return testbed.NewAdversary(t, seed, testbed.AdversaryTab{SpreadsheetID: cliMovesID, Tab: tab.name, Anchor: tab.anchor,
		NewRow: func(_ *rand.Rand, n int) []any {
			row := make([]any, len(tab.header))
			for c, h := range tab.header {
				switch strings.ToLower(h) {
				case "id":
					row[c] = fmt.Sprintf("fresh-%d", n)
				case "name", "message":
					row[c] = fmt.Sprintf("fresh %d", n)
				case "type":
					row[c] = "sync"
				case "payload":
					row[c] = fmt.Sprintf(`{"fresh":%d}`, n)
				case "source":
					row[c] = "other"
				case "url":
					row[c] = "https://other.example/in"
				}
			}
			return row
		}},
		testbed.Odds{QuietReads: 1, BeforeRead: 0.5, BeforeWrite: 2.0 / 3, MovedWritesInARow: 2, Sort: 5, Insert: 2, Delete: 3, Changes: 2, DeleteAny: true})
}

// performed counts the requests performed before a deletion: reads (the load's included),
// writes, and the write-back's writes (replay).
type performed struct{ reads, writes, wbWrites int }

// cliEditDoc is the --json document of set-status, clear-error and requeue-stale.
type cliEditDoc struct {
	Tab     string `json:"tab"`
	Changed []struct {
		ID  string            `json:"id"`
		Row int               `json:"row"`
		Set map[string]string `json:"set"`
	} `json:"changed"`
	Unchanged []struct {
		ID     string `json:"id"`
		Reason string `json:"reason"`
		Done   bool   `json:"done"`
	} `json:"unchanged"`
	Conflicts []string `json:"conflicts"`
	Missing   []string `json:"missing"`
	Damaged   []string `json:"damaged"`
	ExitCode  int      `json:"exit_code"`
}

// cliReplayDoc is the part of `replay --json` this test reads.
type cliReplayDoc struct {
	Halted       bool     `json:"halted"`
	NotAttempted []string `json:"not_attempted"`
	Refused      []struct {
		ID     string `json:"id"`
		Reason string `json:"reason"`
	} `json:"refused"`
	UnknownIDs []string `json:"unknown_ids"`
	WriteBack  struct {
		Conflicts []string `json:"conflicts"`
		Errors    []string `json:"errors"`
	} `json:"write_back"`
	Rows []struct {
		ID       string `json:"id"`
		Key      string `json:"key"`
		State    string `json:"state"`
		Attempts int    `json:"attempts"`
	} `json:"rows"`
	ExitCode int `json:"exit_code"`
}

// cliRun runs one invocation of the root command and returns its exit code and output.
func cliRun(t *testing.T, vars map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := run(ctx, args, e)
	return code, out.String(), errb.String()
}

// cliMovesEnv writes a config with one replay source (its key in the header and in the
// body's "id") and returns the environment of an invocation against emuURL.
func cliMovesEnv(t *testing.T, emuURL, rcvURL string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	body := fmt.Sprintf("[sources.crm]\nurl_prefixes = [%q]\nkey = [\"header:Idempotency-Key\", \"body:id\"]\n", rcvURL+"/v1/")
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"SHEETS_EMULATOR_HOST": strings.TrimPrefix(emuURL, "http://"),
		"TRIAGE_SPREADSHEET":   cliMovesID,
		"TRIAGE_CONFIG":        cfg,
		"XDG_CONFIG_HOME":      dir, "XDG_STATE_HOME": dir, "HOME": dir,
	}
}

func runCLIMovesCase(t *testing.T, seed uint64, sc string) map[string]int {
	rng := rand.New(rand.NewPCG(seed, 0xc11))
	now := time.Now()
	counts := map[string]int{}

	// The receiver: acts on every call, except the payloads whose "n" is in reject (410).
	rcv := receiver.New()
	reject := map[string]bool{}
	var rmu sync.Mutex
	rcv.Rule = func(key string, _ int) (receiver.Fault, bool) {
		rmu.Lock()
		defer rmu.Unlock()
		if reject[key] {
			return receiver.Fault{Mode: receiver.Status, Status: http.StatusGone}, true
		}
		return receiver.Fault{}, false
	}
	rsrv := httptest.NewServer(rcv)
	t.Cleanup(rsrv.Close)
	crmURL := rsrv.URL + "/v1/hook"

	// The workbook.
	dlTC := model.DefaultTabConfig(model.RoleDeadLetter)
	dlTC.BodyKeyFields = map[string]string{"crm": "id"}
	dlHM, err := model.MapHeaders(dlTC, cliDead.header)
	if err != nil {
		t.Fatal(err)
	}
	keyOf := map[string]string{}    // failed_calls payload → its row's ID (effective key)
	anchorOf := map[string]string{} // failed_calls ID → payload
	var inbox, jobs, dead [][]any
	for i := range 5 + rng.IntN(6) {
		inbox = append(inbox, []any{46000.5 + float64(rng.IntN(100))/10, fmt.Sprintf("P%d", rng.IntN(4)), "p@x", fmt.Sprintf("msg %d", rng.IntN(3)),
			nilIfEmpty([]string{"new", "read", "done", ""}[rng.IntN(4)]), fmt.Sprintf("m%d-%d", seed, i)})
	}
	for i := range 5 + rng.IntN(6) {
		row := []any{fmt.Sprintf("j%d-%d", seed, i), "sync", "{}", "pending", nil, nil, nil, nil}
		switch rng.IntN(4) {
		case 0:
			row[3], row[4], row[5] = "claimed", fmt.Sprintf("w%d", rng.IntN(3)), model.FormatTime(now.Add(-time.Duration(2+rng.IntN(5))*time.Hour))
		case 1:
			row[3], row[4], row[5] = "claimed", "w9", model.FormatTime(now.Add(-5*time.Minute))
		case 2:
			row[3], row[4], row[6] = "error", "w1", fmt.Sprintf("boom %d", rng.IntN(9))
		}
		jobs = append(jobs, row)
	}
	for i := range 5 + rng.IntN(6) {
		payload := fmt.Sprintf(`{"n":%d,"v":%d}`, i, rng.IntN(100))
		key := ""
		switch rng.IntN(3) {
		case 0:
			key = fmt.Sprintf("k%d-%d", seed, i)
		case 1:
			payload = fmt.Sprintf(`{"id":"p%d-%d","n":%d}`, seed, i, i)
		}
		status, errText := []string{"dead", "dead", ""}[rng.IntN(3)], ""
		if sc == "clear-error-deadletter" && rng.IntN(2) == 0 {
			status, errText = "rejected", "410 from crm: rejected"
		}
		ts := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.IntN(5000)) * time.Minute).Format(time.RFC3339)
		cells := []string{ts, "crm", crmURL, payload, errText, strconv.Itoa(rng.IntN(3)), "POST", key, status, ""}
		id, _, problem := model.EffectiveKey(dlTC, dlHM, cells)
		if problem != "" {
			t.Fatal(problem)
		}
		keyOf[payload], anchorOf[id] = id, payload
		if sc == "replay" && rng.IntN(5) == 0 {
			reject[id] = true
		}
		row := make([]any, len(cells))
		for c, v := range cells {
			row[c] = nilIfEmpty(v)
		}
		dead = append(dead, row)
	}
	wb := &emulator.Workbook{SpreadsheetID: cliMovesID, Title: "moves", TimeZone: "Etc/UTC", Sheets: []*emulator.Sheet{
		{Title: cliInbox.name, Rows: append([][]any{anyCells(cliInbox.header)}, inbox...)},
		{Title: cliJobs.name, Rows: append([][]any{anyCells(cliJobs.header)}, jobs...)},
		{Title: cliDead.name, Rows: append([][]any{anyCells(cliDead.header)}, dead...)},
	}}
	emu := emulator.New()
	emu.AddWorkbook(wb)
	esrv := httptest.NewServer(emu)
	t.Cleanup(esrv.Close)
	vars := cliMovesEnv(t, esrv.URL, rsrv.URL)

	// The command, and the tab it works on.
	var tab cliTab
	var args, targets []string
	pick := func(ids []string, n int) []string {
		rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		return ids[:min(n, len(ids))]
	}
	switch sc {
	case "set-status":
		tab = cliInbox
		var ids []string
		for _, r := range inbox {
			ids = append(ids, r[5].(string))
		}
		targets = pick(ids, 1+rng.IntN(4))
		args = append([]string{"set-status", "--tab", "Inbox", "--json", "--status", []string{"read", "replied", "done", "spam"}[rng.IntN(4)]}, targets...)
	case "clear-error-jobs":
		tab = cliJobs
		var ids []string
		for _, r := range jobs {
			if r[3] == "error" || rng.IntN(4) == 0 {
				ids = append(ids, r[0].(string))
			}
		}
		targets = pick(ids, 1+rng.IntN(4))
		if len(targets) == 0 {
			targets = []string{jobs[0][0].(string)}
		}
		args = append([]string{"clear-error", "--tab", "Jobs", "--json"}, targets...)
	case "clear-error-deadletter":
		tab = cliDead
		var ids []string
		for _, r := range dead {
			if r[8] == "rejected" || rng.IntN(4) == 0 {
				ids = append(ids, keyOf[r[3].(string)])
			}
		}
		targets = pick(ids, 1+rng.IntN(4))
		if len(targets) == 0 {
			targets = []string{keyOf[dead[0][3].(string)]}
		}
		args = append([]string{"clear-error", "--tab", "failed_calls", "--json"}, targets...)
	case "requeue-stale":
		tab = cliJobs
		args = []string{"requeue-stale", "--json"}
		for _, r := range jobs {
			if r[3] == "claimed" && r[4] != "w9" {
				targets = append(targets, r[0].(string))
			}
		}
	case "replay":
		tab = cliDead
		args = []string{"replay", "--all", "--json"}
		for _, r := range dead {
			if st, _ := r[8].(string); st == "" || st == "dead" {
				targets = append(targets, keyOf[r[3].(string)])
			}
		}
	}
	anchor := func(id string) string {
		if tab.name == cliDead.name {
			return anchorOf[id]
		}
		return id
	}

	before, _ := cliRows(emu, tab)
	ed := cliEditor(t, seed, tab)
	ed.Attach(emu)
	// The write-back's writes are those after the replay's first request: firstWB is the
	// ordinal of the first write that came after it.
	var firstWB atomic.Int64
	emu.SetHook(func(r emulator.Request) {
		if sc == "replay" && r.Method == emulator.MethodBatchUpdate && firstWB.Load() == 0 && len(rcv.Attempts()) > 0 {
			firstWB.Store(int64(ed.Writes() + 1))
		}
		ed.Hook(r)
	})
	code, stdout, stderr := cliRun(t, vars, args...)
	emu.SetHook(nil)
	deleted := map[string]performed{}
	for a, d := range ed.Deleted() {
		p := performed{reads: d.Reads, writes: d.Writes}
		if wb := int(firstWB.Load()); wb > 0 {
			p.wbWrites = max(0, d.Writes-wb+1)
		}
		deleted[a] = p
	}
	inserted := map[string]map[string]string{}
	for a, row := range ed.Own() {
		m := map[string]string{}
		for c, v := range row {
			if s := model.CellString(v); s != "" && c < len(tab.header) {
				m[strings.ToLower(tab.header[c])] = s
			}
		}
		inserted[a] = m
	}
	moves := ed.Counts()
	for _, k := range []string{"sort", "insert", "delete"} {
		counts[k] += moves[k]
	}
	after, at := cliRows(emu, tab)
	label := fmt.Sprintf("seed %d: triage %s\n  other editor: %v (its story below)\n  exit %d\n  stderr: %s", seed, strings.Join(args, " "), moves, code, clipText(stderr, 3000))
	defer func() {
		if t.Failed() {
			t.Logf("%s\n  stdout: %s", label, clipText(stdout, 4000))
		}
	}()

	// What must be on the sheet: every row as it was, except the other editor's deletes and
	// inserts, and what the command reports it changed.
	want := map[string]map[string]string{}
	for a, c := range before {
		if _, gone := deleted[a]; !gone {
			want[a] = maps.Clone(c)
		}
	}
	for a, c := range inserted {
		want[a] = maps.Clone(c)
	}
	set := func(a string, f string, v string) {
		w := want[a]
		if w == nil {
			return
		}
		if v == "" {
			delete(w, strings.ToLower(f))
		} else {
			w[strings.ToLower(f)] = v
		}
	}
	notDone := 0
	if sc != "replay" {
		var doc cliEditDoc
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatalf("stdout is not the JSON document (exit %d): %v; the command failed although the other editor only moved rows (within two write rounds)", code, err)
		}
		if doc.ExitCode != code {
			t.Errorf("exit %d, JSON exit_code %d", code, doc.ExitCode)
		}
		rowsNotDone := len(doc.Conflicts) + len(doc.Missing)
		for _, u := range doc.Unchanged {
			if !u.Done {
				rowsNotDone++
			}
		}
		notDone = rowsNotDone + len(doc.Damaged)
		// The last line counts the rows (claims) not changed: the IDs asked for and not done,
		// not the cells of other rows reported damaged.
		if m := notChangedLine.FindStringSubmatch(stderr); m != nil {
			if n, _ := strconv.Atoi(m[1]); n != rowsNotDone {
				t.Errorf("stderr says %q, but %d of the rows asked for were not changed (%d changed; %d damaged cells of other rows reported)",
					m[0], rowsNotDone, len(doc.Changed), len(doc.Damaged))
			}
		}
		if len(doc.Conflicts) > 0 {
			t.Errorf("conflicts reported although no cell was edited and rows moved within the bound: %q", doc.Conflicts)
		}
		changed := map[string]bool{}
		for _, c := range doc.Changed {
			counts["→changed"]++
			changed[c.ID] = true
			a := anchor(c.ID)
			if d, gone := deleted[a]; gone {
				if d.writes == 0 {
					t.Errorf("%s reported changed, but its row was deleted before any write", c.ID)
				}
				continue // written, then deleted by the other editor
			}
			// (c.Row is where it was written; the other editor may have moved it since,
			// between two rounds of the write.)
			for f, v := range c.Set {
				set(a, f, v)
			}
		}
		missing := map[string]bool{}
		for _, m := range doc.Missing {
			counts["→missing"]++
			missing[m] = true
			if _, gone := deleted[anchor(m)]; !gone {
				t.Errorf("%s reported missing, but its row is there", m)
			}
		}
		unchanged := map[string]bool{}
		for _, u := range doc.Unchanged {
			unchanged[u.ID] = true
			if changed[u.ID] || missing[u.ID] {
				t.Errorf("%s reported twice", u.ID)
			}
		}
		for _, id := range targets {
			if d, gone := deleted[anchor(id)]; gone && d.writes == 0 && !missing[id] && !unchanged[id] {
				t.Errorf("%s: its row was deleted before the write, and it is not reported missing", id)
			}
		}
	} else {
		var doc cliReplayDoc
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatalf("stdout is not the JSON document (exit %d): %v", code, err)
		}
		if doc.ExitCode != code {
			t.Errorf("exit %d, JSON exit_code %d", code, doc.ExitCode)
		}
		if len(doc.WriteBack.Conflicts) > 0 {
			t.Errorf("write-back conflicts although no cell was edited and rows moved within the bound: %q", doc.WriteBack.Conflicts)
		}
		notDone = len(doc.Refused) + len(doc.NotAttempted) + len(doc.WriteBack.Conflicts) + len(doc.WriteBack.Errors) + len(doc.UnknownIDs)
		sent := attemptsOf(rcv)
		refused := map[string]bool{}
		for _, r := range doc.Refused {
			refused[r.ID] = true
			if len(sent[r.ID]) > 0 {
				t.Errorf("%s refused, yet sent %d times", r.ID, len(sent[r.ID]))
			}
			if _, gone := deleted[anchor(r.ID)]; gone {
				counts["→missing"]++
			} else {
				t.Errorf("%s refused, but its row is there and only moved: %s", r.ID, r.Reason)
			}
		}
		for _, id := range targets {
			if d, gone := deleted[anchor(id)]; gone && d.reads <= 1 && !refused[id] {
				t.Errorf("%s: its row was deleted before the check before sending, and it was not refused", id)
			}
		}
		for _, r := range doc.Rows {
			if r.State == string(model.StateRefused) {
				continue
			}
			a := anchor(r.ID)
			if r.Key != r.ID {
				t.Errorf("row %s reported sent with key %q", r.ID, r.Key)
			}
			if r.Attempts != len(sent[r.ID]) {
				t.Errorf("%s: %d attempts reported, the receiver got %d", r.ID, r.Attempts, len(sent[r.ID]))
			}
			status := map[string]string{"delivered": "delivered", "duplicate": "delivered", "rejected": "rejected"}[r.State]
			if status == "" {
				notDone++
				t.Errorf("%s ended %s", r.ID, r.State)
				continue
			}
			if status != "delivered" {
				notDone++
			}
			counts["→sent"]++
			if d, gone := deleted[a]; gone {
				found := false
				for _, e := range doc.WriteBack.Errors {
					found = found || strings.Contains(e, r.ID)
				}
				if d.wbWrites == 0 && !found {
					t.Errorf("%s: sent, its row deleted before the write-back, and no write-back error says so: %q", r.ID, doc.WriteBack.Errors)
				}
				continue // or deleted after its outcome was written
			}
			prev, _ := strconv.Atoi(before[a]["attempts"])
			set(a, "status", status)
			set(a, "attempts", strconv.Itoa(prev+r.Attempts))
			set(a, "key", r.ID)
			set(a, "replayed_at", after[a]["replayed_at"])
			if status == "delivered" {
				set(a, "error", "")
			} else {
				set(a, "error", after[a]["error"])
				if !strings.HasPrefix(after[a]["error"], "410 ") {
					t.Errorf("%s rejected, error cell %q", r.ID, after[a]["error"])
				}
			}
			if after[a]["replayed_at"] == "" {
				t.Errorf("%s: no replayed_at written", r.ID)
			}
		}
		// Every request carried its own row's key: the body's "n" names the row.
		for key, bodies := range sent {
			for _, b := range bodies {
				var obj map[string]any
				_ = json.Unmarshal(b, &obj)
				p := ""
				for pl := range keyOf {
					var o map[string]any
					_ = json.Unmarshal([]byte(pl), &o)
					if o["n"] == obj["n"] && obj["n"] != nil {
						p = pl
					}
				}
				if keyOf[p] != key {
					t.Errorf("a request for the row of payload %s carried key %q, its own is %q", p, key, keyOf[p])
				}
			}
		}
		for k, n := range rcv.Effects() {
			if n != 1 {
				t.Errorf("the receiver acted %d times for %s", n, k)
			}
		}
	}
	if want := map[bool]int{true: exitPartial, false: exitOK}[notDone > 0]; code != want {
		t.Errorf("exit %d, want %d (%d not done)", code, want, notDone)
	}
	// Nothing else changed.
	for a, w := range want {
		g, ok := after[a]
		if !ok {
			t.Errorf("row %s is gone from the sheet", a)
			continue
		}
		if !maps.Equal(w, g) {
			t.Errorf("row %s (row %d):\n  holds %v\n  want  %v", a, at[a], g, w)
		}
	}
	for a := range after {
		if _, ok := want[a]; !ok {
			t.Errorf("a row that should not be on the sheet: %s %v", a, after[a])
		}
	}
	return counts
}

// attemptsOf groups a receiver's requests by key: the bodies sent under each.
func attemptsOf(rcv *receiver.Receiver) map[string][][]byte {
	out := map[string][][]byte{}
	for _, a := range rcv.Attempts() {
		if !a.Echo {
			out[a.Key] = append(out[a.Key], a.Body)
		}
	}
	return out
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func anyCells(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func clipText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// Issue 7 point 3, end to end through `triage replay --all --json`: a destination answers
// one row with a 301 whose Location is 60,000 characters long (more than a cell holds), and
// delivers the others. The run halts on the systemic answer (DESIGN §5: 3xx is systemic; §7:
// exit 3), the delivered rows are written back (status delivered, attempts), the 301 row's
// error cell holds a capped message, and neither stdout nor stderr prints the whole URL.
//
// The 301 is answered only once every other row has acted at the receiver, so the halt never
// cuts a delivered row's write-back or leaves a row unsent (no wall-clock ordering).
func TestReplayLongLocationEndToEnd(t *testing.T) {
	long := "https://elsewhere.example/" + strings.Repeat("a", 60000)
	const n, movedAt = 7, 3
	rcv := receiver.New()
	movedKey := "k-moved"
	rcv.Rule = func(key string, _ int) (receiver.Fault, bool) {
		if key == movedKey {
			return receiver.Fault{Mode: receiver.Moved, Status: http.StatusMovedPermanently, Location: long}, true
		}
		return receiver.Fault{}, false
	}
	othersActed := make(chan struct{})
	var acted atomic.Int32
	rcv.OnEffect = func(string, []byte) {
		if acted.Add(1) == n-1 {
			close(othersActed)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Idempotency-Key") == movedKey {
			select {
			case <-othersActed:
			case <-time.After(10 * time.Second):
				t.Error("the other rows never all arrived while the 301 row waited")
			}
		}
		rcv.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	rows := [][]any{anyCells(cliDead.header)}
	for i := range n {
		key := fmt.Sprintf("k-%d", i)
		if i == movedAt {
			key = movedKey
		}
		rows = append(rows, []any{46000.25 + float64(i)/100, "crm", srv.URL + "/v1/hook", fmt.Sprintf(`{"n":%d}`, i), "boom", 1.0, "POST", key, "dead"})
	}
	emu := emulator.New()
	emu.AddWorkbook(&emulator.Workbook{SpreadsheetID: cliMovesID, Title: "long", TimeZone: "Etc/UTC",
		Sheets: []*emulator.Sheet{{Title: cliDead.name, Rows: rows}}})
	esrv := httptest.NewServer(emu)
	t.Cleanup(esrv.Close)
	vars := cliMovesEnv(t, esrv.URL, srv.URL)

	code, stdout, stderr := cliRun(t, vars, "replay", "--all", "--json")
	t.Logf("exit %d; stdout %d bytes, stderr %d bytes:\n%s", code, len(stdout), len(stderr), clipText(stderr, 3000))
	if code != exitHalted {
		t.Errorf("exit %d, want %d (a systemic answer halts the run)", code, exitHalted)
	}
	var doc struct {
		Halted bool `json:"halted"`
		Halt   *struct {
			Cause  string `json:"cause"`
			Detail string `json:"detail"`
		} `json:"halt"`
		NotAttempted []string `json:"not_attempted"`
		WriteBack    struct {
			Conflicts []string `json:"conflicts"`
			Errors    []string `json:"errors"`
		} `json:"write_back"`
		Rows []struct {
			ID, State, Detail string
			Attempts          int
		} `json:"rows"`
		ExitCode int `json:"exit_code"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, clipText(stdout, 2000))
	}
	if !doc.Halted || doc.Halt == nil || doc.Halt.Cause != "systemic" || doc.ExitCode != code {
		t.Errorf("halted %v, halt %+v, exit_code %d", doc.Halted, doc.Halt, doc.ExitCode)
	}
	if len(doc.NotAttempted) != 0 || len(doc.WriteBack.Conflicts) != 0 || len(doc.WriteBack.Errors) != 0 {
		t.Errorf("not attempted %v, write-back conflicts %v, errors %.500q", doc.NotAttempted, doc.WriteBack.Conflicts, doc.WriteBack.Errors)
	}
	states := map[string]string{}
	for _, r := range doc.Rows {
		states[r.ID] = r.State
		if n := utf8.RuneCountInString(r.Detail); n > replay.MaxDetail {
			t.Errorf("row %s: detail of %d characters in the JSON", r.ID, n)
		}
	}
	if states[movedKey] != "systemic" {
		t.Errorf("the 301 row ended %q", states[movedKey])
	}
	// The sheet.
	cells := emu.Cells(cliMovesID, cliDead.name)
	for i := range n {
		r := cells[i+1]
		get := func(c int) string {
			if c < len(r) {
				return model.CellString(r[c])
			}
			return ""
		}
		status, attempts, errCell, replayed := get(8), get(5), get(4), get(9)
		if i == movedAt {
			if status != "dead" || attempts != "2" || replayed == "" {
				t.Errorf("the 301 row: status %q attempts %q replayed_at %q", status, attempts, replayed)
			}
			if n := utf8.RuneCountInString(errCell); n == 0 || n > 4000 || !strings.Contains(errCell, "301") || !strings.Contains(errCell, "truncated") {
				t.Errorf("the 301 row's error cell: %d characters: %.300q", n, errCell)
			}
			continue
		}
		if status != "delivered" || attempts != "2" || errCell != "" || replayed == "" {
			t.Errorf("row %d: status %q attempts %q error %.100q replayed_at %q: a delivered row's write-back was lost", i+2, status, attempts, errCell, replayed)
		}
		if states[fmt.Sprintf("k-%d", i)] != "delivered" {
			t.Errorf("row %d reported %q", i+2, states[fmt.Sprintf("k-%d", i)])
		}
	}
	// Nothing prints the whole URL: no run of 1,000 of its characters, and a bounded output.
	run := strings.Repeat("a", 1000)
	for name, s := range map[string]string{"stdout": stdout, "stderr": stderr} {
		if strings.Contains(s, run) {
			t.Errorf("%s prints the Location (a run of %d of its characters)", name, strings.Count(s, "a"))
		}
		if len(s) > 20000 {
			t.Errorf("%s is %d bytes", name, len(s))
		}
	}
	if c := strings.Count(stderr, "HALTED"); c < 1 {
		t.Errorf("the halt is not shown on stderr:\n%s", clipText(stderr, 2000))
	}
}
