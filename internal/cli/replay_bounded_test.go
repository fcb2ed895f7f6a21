package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/triage-dev/triage/internal/testbed"
)

// boundedJSON is what a script reads of `triage replay --json` about a bounded run.
type boundedJSON struct {
	MaxTime      string         `json:"max_time"`
	StopMargin   string         `json:"stop_margin"`
	TimeUp       bool           `json:"time_up"`
	NotStarted   []string       `json:"not_started"`
	NotAttempted []string       `json:"not_attempted"`
	Limit        int            `json:"limit"`
	Counts       map[string]int `json:"counts"`
	Cancelled    bool           `json:"cancelled"`
	LeftOut      []struct {
		ID     string `json:"id"`
		Row    int    `json:"row"`
		Reason string `json:"reason"`
	} `json:"left_out"`
	WouldSend []struct{ Key string } `json:"would_send"`
	ExitCode  int                    `json:"exit_code"`
}

// runClocked runs `triage replay` with the replay client's clock set to clk.
func (f *replayFixture) runClocked(clk *testbed.Clock, args ...string) replayRun {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return f.env[k] },
		replayClock: clk.Now}
	full := append([]string{"replay", "--spreadsheet", replayID, "--config", f.cfgPath}, args...)
	code := run(ctx, full, e)
	return replayRun{code: code, stdout: out.String(), stderr: errb.String()}
}

func parseBoundedJSON(t *testing.T, r replayRun) boundedJSON {
	t.Helper()
	var doc boundedJSON
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("stdout is not a JSON document: %v\n%s\n%s", err, r.stdout, r.stderr)
	}
	if doc.ExitCode != r.code {
		t.Errorf("exit_code %d in JSON, process exit %d", doc.ExitCode, r.code)
	}
	return doc
}

// manyCRMRows are n waiting crm rows with keys k0, k1, ….
func manyCRMRows(n int) func(f *replayFixture) []dl {
	return func(f *replayFixture) []dl {
		rows := make([]dl, n)
		for i := range rows {
			rows[i] = dl{"crm", f.crmURL, fmt.Sprintf(`{"n":%d}`, i), fmt.Sprintf("k%d", i), "dead"}
		}
		return rows
	}
}

// TestReplayMaxTimeLeavesRowsForTheNextRun: `--max-time 10m` on a run where each call costs
// a minute of the replay client's clock (the receiver moves it on as it acts). The crm source
// has the default 20s timeout, so sends stop 1m20s before the end, at 8m40s: 9 calls, one at
// a time. The rows not started are named in the summary and in --json, the outcome of every
// call is written back, the exit code is 1, and the next run sends exactly the rest.
func TestReplayMaxTimeLeavesRowsForTheNextRun(t *testing.T) {
	const n = 12
	f := newReplayFixture(t, manyCRMRows(n))
	clk := testbed.NewClock()
	f.crm.OnEffect = func(string, []byte) { clk.Add(time.Minute) }

	r := f.runClocked(clk, "--all", "--max-time", "10m", "--concurrency", "1", "--json")
	if r.code != exitPartial {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	doc := parseBoundedJSON(t, r)
	if !doc.TimeUp || doc.Cancelled || doc.MaxTime != "10m" || doc.StopMargin != "1m20s" || doc.Counts["delivered"] != 9 {
		t.Errorf("time_up %v, cancelled %v, max_time %q, stop_margin %q, counts %v; want time up, 10m, 1m20s, 9 delivered",
			doc.TimeUp, doc.Cancelled, doc.MaxTime, doc.StopMargin, doc.Counts)
	}
	if len(doc.NotStarted) != n-9 || !slices.Equal(doc.NotStarted, doc.NotAttempted) {
		t.Errorf("not_started %v, not_attempted %v: want the same %d rows", doc.NotStarted, doc.NotAttempted, n-9)
	}
	for _, want := range []string{
		"time is up: --max-time 10m was nearly over (sends stop 1m20s before its end",
		"3 rows not started: the next run sends them",
		"not started: row ",
		"triage: replay: 3 rows of 12 selected not done",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	eff := f.crm.Effects()
	for i := range n {
		k := fmt.Sprintf("k%d", i)
		sent, left := eff[k] == 1, slices.Contains(doc.NotStarted, k)
		if sent == left {
			t.Errorf("%s: sent %v, reported not started %v: want exactly one", k, sent, left)
		}
		if status := f.cell(i, "status"); (status == "delivered") != sent {
			t.Errorf("%s: status %q after the run, sent %v", k, status, sent)
		}
	}

	// The next run sends the rest, once each: exit 0.
	r = f.runClocked(clk, "--all", "--max-time", "10m", "--json")
	if r.code != exitOK {
		t.Fatalf("next run: exit %d\n%s", r.code, r.stderr)
	}
	if doc := parseBoundedJSON(t, r); doc.TimeUp || doc.Counts["delivered"] != n-9 || len(doc.NotStarted) != 0 {
		t.Errorf("next run: time_up %v, counts %v, not_started %v", doc.TimeUp, doc.Counts, doc.NotStarted)
	}
	for k, c := range f.crm.Effects() {
		if c != 1 {
			t.Errorf("%s acted on %d times", k, c)
		}
	}
	if len(f.crm.Effects()) != n || len(f.crm.Attempts()) != n {
		t.Errorf("%d keys acted on in %d requests, want %d of each", len(f.crm.Effects()), len(f.crm.Attempts()), n)
	}
}

// TestReplayLimitOldestFirstWithSource: `--source crm --limit 3` replays the three oldest
// waiting crm rows by timestamp (the sheet holds them newest first; an older billing row and
// an older delivered crm row don't count), says how many eligible rows it left out and which,
// and exits 1; a dry run shows the same three. Without the flags the document says so too.
func TestReplayLimitOldestFirstWithSource(t *testing.T) {
	f := newReplayFixture(t, func(f *replayFixture) []dl {
		rows := manyCRMRows(6)(f)
		return append(rows,
			dl{"billing", f.billURL, `{"b":1}`, "b1", "dead"},
			dl{"crm", f.crmURL, `{"d":1}`, "d1", "delivered"})
	})
	// Newest first: k0 is the newest crm row, k5 the oldest; b1 and d1 are older still.
	for i := range 8 {
		if err := f.emu.SetCell(replayID, replayTab, i+2, 0, 46010.0-float64(i)); err != nil {
			t.Fatal(err)
		}
	}
	oldest := []string{"k3", "k4", "k5"}

	r := f.runClocked(testbed.NewClock(), "--all", "--source", "crm", "--limit", "3", "--dry-run", "--json")
	if r.code != exitPartial {
		t.Fatalf("dry run: exit %d, want 1\n%s", r.code, r.stderr)
	}
	doc := parseBoundedJSON(t, r)
	var would []string
	for _, c := range doc.WouldSend {
		would = append(would, c.Key)
	}
	if !slices.Equal(would, []string{"k5", "k4", "k3"}) {
		t.Errorf("dry run would send %v, want the three oldest, oldest first", would)
	}
	if len(f.crm.Attempts()) != 0 {
		t.Fatal("the dry run sent requests")
	}

	r = f.runClocked(testbed.NewClock(), "--all", "--source", "crm", "--limit", "3", "--json")
	if r.code != exitPartial {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	doc = parseBoundedJSON(t, r)
	var sent []string
	for k := range f.crm.Effects() {
		sent = append(sent, k)
	}
	sort.Strings(sent)
	if !slices.Equal(sent, oldest) || doc.Counts["delivered"] != 3 {
		t.Errorf("sent %v (counts %v), want %v", sent, doc.Counts, oldest)
	}
	var left []string
	for _, l := range doc.LeftOut {
		left = append(left, l.ID)
		if !strings.Contains(l.Reason, "left out by the limit of 3 rows") {
			t.Errorf("left_out reason %q", l.Reason)
		}
	}
	if doc.Limit != 3 || !slices.Equal(left, []string{"k2", "k1", "k0"}) {
		t.Errorf("limit %d, left_out %v; want 3 and the newer crm rows, oldest first", doc.Limit, left)
	}
	for _, want := range []string{"limit: --limit 3 left out 3 eligible rows (the oldest go first)", "left out: row 2 (k0)", "triage: replay: 3 rows of 7 selected not done"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if f.billing.Attempts() != nil || f.cell(0, "status") != "dead" {
		t.Errorf("billing got %d requests; k0's status %q", len(f.billing.Attempts()), f.cell(0, "status"))
	}

	// Without the flags, the fields are there and empty.
	r = f.runClocked(testbed.NewClock(), "--all", "--source", "crm", "--json")
	if r.code != exitOK {
		t.Fatalf("rest: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, `"max_time": ""`) || !strings.Contains(r.stdout, `"limit": 0`) ||
		!strings.Contains(r.stdout, `"left_out": []`) || !strings.Contains(r.stdout, `"not_started": []`) || !strings.Contains(r.stdout, `"time_up": false`) {
		t.Errorf("document without the flags:\n%s", r.stdout)
	}
}

// TestReplayBoundsUsage: a --max-time that is no duration, not positive or too short to send
// anything, and a --limit below 1, are usage errors (exit 2) saying what to give; nothing is
// sent.
func TestReplayBoundsUsage(t *testing.T) {
	f := newReplayFixture(t, crmRows)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-time", "soon"}, `--max-time "soon" is not a duration: give one such as 55m or 1h30m`},
		{[]string{"--max-time", "-5m"}, "--max-time -5m: want a positive duration such as 55m (leave it out for no time limit)"},
		{[]string{"--max-time", "0"}, "--max-time 0: want a positive duration"},
		{[]string{"--max-time", "55"}, `--max-time "55" is not a duration`},
		{[]string{"--max-time", "1m"}, "--max-time 1m leaves no time to send: the run stops starting sends 1m20s before its end (the longest request timeout of the selected rows' sources, 20s, plus 1m to write outcomes back); give more than 1m20s"},
		{[]string{"--max-time", "1m", "--dry-run"}, "--max-time 1m leaves no time to send"},
		{[]string{"--limit", "0"}, "--limit 0: want a number of rows from 1 up"},
		{[]string{"--limit", "-2"}, "--limit -2: want a number of rows from 1 up"},
		{[]string{"--limit", "many"}, `invalid argument "many" for "--limit"`},
	} {
		r := f.runCtx(append([]string{"--all"}, tc.args...)...)
		if r.code != exitUsage || r.stdout != "" || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 saying %q", tc.args, r.code, r.stdout, r.stderr, tc.want)
		}
	}
	if n := len(f.crm.Attempts()); n != 0 {
		t.Errorf("usage errors sent %d requests", n)
	}
	if f.cell(0, "status") != "dead" || f.cell(2, "key") != "" {
		t.Errorf("a usage error wrote to the sheet: status %q, minted key %q", f.cell(0, "status"), f.cell(2, "key"))
	}
}
