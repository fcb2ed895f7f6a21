package main

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay/receiver"
	"github.com/triage-dev/triage/sheets/emulator"
)

// The end-to-end scripts in testdata/*.txtar run the real binary (main, registered as the
// command "triage") against a Sheets emulator and local receivers, one script per thing a user
// does. Run one with: go test -run TestScripts/list .
//
// Each script starts with (see setup):
//
//	$SHEETS                an empty Sheets emulator (http://127.0.0.1:PORT); SHEETS_EMULATOR_HOST
//	                       points triage at it, so no credentials are needed
//	$RECEIVER              local receivers of replayed calls, one per path:
//	                       $RECEIVER/crm/...      acts once per idempotency key, answers 200
//	                       $RECEIVER/billing/...  answers 401 (a systemic answer: the run halts)
//	                       $RECEIVER/warehouse/...  answers 422: a permanent rejection
//	$STALE, $RECENT        times two hours and one minute ago (RFC 3339), for the Jobs tab's claimedAt
//	HOME, XDG_CONFIG_HOME, XDG_STATE_HOME  under $WORK, so the config file is
//	                       $WORK/.config/triage/config.toml
//
// and these commands besides testscript's own:
//
//	sheets FILE            serve the JSON workbook FILE (sheets/emulator's format) on $SHEETS,
//	                       after expanding $VARS in it (e.g. $RECEIVER in a url cell)
//	expand IN OUT          copy IN to OUT expanding $VARS (a config file naming $RECEIVER),
//	                       creating OUT's directory
//	cells ID TAB           print what the emulator's tab holds, one row a line, cells tab-separated
//	                       (a tab it doesn't hold: nothing)
//	tabs ID                print the titles of the spreadsheet's tabs, one a line
//	exits N CMD ARGS...    run CMD like exec, and fail unless it exits with code N (triage's
//	                       exit codes are its contract: 1 rows not done, 2 usage, 3 halted)
//	received               print what the receivers acted on: "PATH KEY COUNT" a line, sorted
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"triage": main})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata",
		Setup:               setup,
		RequireExplicitExec: true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":    cmdExits,
			"sheets":   cmdSheets,
			"expand":   cmdExpand,
			"cells":    cmdCells,
			"tabs":     cmdTabs,
			"received": cmdReceived,
		},
	})
}

// receivers are the destinations of one script's replayed calls, by first path segment.
type receivers map[string]*receiver.Receiver

func (rs receivers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	first, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	rc, ok := rs[first]
	if !ok {
		http.NotFound(w, r)
		return
	}
	rc.ServeHTTP(w, r)
}

func setup(e *testscript.Env) error {
	emu := emulator.New()
	sheetsSrv := httptest.NewServer(emu)
	e.Defer(sheetsSrv.Close)
	rs := receivers{
		"crm":       receiver.New(),
		"billing":   {Default: receiver.Fault{Mode: receiver.Unauthorized}},
		"warehouse": {Default: receiver.Fault{Mode: receiver.Status, Status: http.StatusUnprocessableEntity}},
	}
	rcvSrv := httptest.NewServer(rs)
	e.Defer(rcvSrv.Close)
	e.Values["emu"] = emu
	e.Values["receivers"] = rs

	now := time.Now()
	e.Setenv("SHEETS", sheetsSrv.URL)
	e.Setenv("SHEETS_EMULATOR_HOST", strings.TrimPrefix(sheetsSrv.URL, "http://"))
	e.Setenv("RECEIVER", rcvSrv.URL)
	e.Setenv("STALE", model.FormatTime(now.Add(-2*time.Hour)))
	e.Setenv("RECENT", model.FormatTime(now.Add(-time.Minute)))
	e.Setenv("HOME", e.WorkDir)
	e.Setenv("XDG_CONFIG_HOME", e.WorkDir+"/.config")
	e.Setenv("XDG_STATE_HOME", e.WorkDir+"/.state")
	e.Setenv("NO_COLOR", "1")
	return nil
}

// expandFile reads a script file and expands $VARS in it from the script's environment.
func expandFile(ts *testscript.TestScript, name string) string {
	return os.Expand(ts.ReadFile(name), ts.Getenv)
}

func cmdSheets(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: sheets FILE")
	}
	wb, err := emulator.ParseWorkbook([]byte(expandFile(ts, args[0])))
	ts.Check(err)
	ts.Value("emu").(*emulator.Emulator).AddWorkbook(wb)
}

func cmdExpand(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: expand IN OUT")
	}
	out := ts.MkAbs(args[1])
	ts.Check(os.MkdirAll(filepath.Dir(out), 0o700))
	ts.Check(os.WriteFile(out, []byte(expandFile(ts, args[0])), 0o600))
}

func cmdCells(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: cells SPREADSHEET TAB")
	}
	if neg {
		ts.Fatalf("cells does not fail")
	}
	rows := ts.Value("emu").(*emulator.Emulator).Cells(args[0], args[1])
	var b strings.Builder
	for _, row := range rows {
		cells := make([]string, len(row))
		for i, v := range row {
			cells[i] = model.CellString(v)
		}
		b.WriteString(strings.TrimRight(strings.Join(cells, "\t"), "\t") + "\n")
	}
	fmt.Fprint(ts.Stdout(), b.String())
}

func cmdReceived(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: received")
	}
	type effect struct {
		path, key string
		n         int
	}
	out := ts.Stdout() // even when nothing was received: stdout is this command's, not the last exec's
	var all []effect
	for path, rc := range ts.Value("receivers").(receivers) {
		for key, n := range rc.Effects() {
			all = append(all, effect{path, key, n})
		}
	}
	slices.SortFunc(all, func(a, b effect) int { return cmp.Or(cmp.Compare(a.path, b.path), cmp.Compare(a.key, b.key)) })
	for _, e := range all {
		fmt.Fprintf(out, "%s %s %d\n", e.path, e.key, e.n)
	}
}

func cmdTabs(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: tabs SPREADSHEET")
	}
	wb := ts.Value("emu").(*emulator.Emulator).Workbook(args[0])
	if wb == nil {
		ts.Fatalf("no spreadsheet %q", args[0])
	}
	for _, sh := range wb.Sheets {
		fmt.Fprintln(ts.Stdout(), sh.Title)
	}
}

func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE COMMAND [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with code %d, want %d", args[1], got, want)
	}
}
