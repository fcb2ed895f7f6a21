package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
	"google.golang.org/api/option"
	sheetsapi "google.golang.org/api/sheets/v4"
)

// A replay whose write-back hit rows someone had just sorted into place, and whose process
// was killed right after, left "delivered" on rows never sent. The next `replay --all` puts
// those rows back before it selects anything, says so, and replays them: no dead letter is
// lost to a crash.
func TestReplayAfterAKilledWriteBackReplaysTheRowsItMarked(t *testing.T) {
	f := newReplayFixture(t, func(f *replayFixture) []dl {
		var rows []dl
		for i := range 10 {
			rows = append(rows, dl{"crm", f.crmURL, fmt.Sprintf(`{"n":%d}`, i), fmt.Sprintf("k-%d", i), "dead"})
		}
		return rows
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc, err := sheetsapi.NewService(ctx, option.WithEndpoint("http://"+f.env["SHEETS_EMULATOR_HOST"]+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	tc := model.DefaultTabConfig(model.RoleDeadLetter)
	tc.Name = replayTab
	dead := sheets.New(ctx, svc, sheets.Options{SpreadsheetID: replayID, Tabs: []model.TabConfig{tc}, Actor: "cron"})
	wb, err := dead.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tab := wb.Tabs[0]
	var edits []model.Edit
	for _, key := range []string{"k-0", "k-1", "k-2"} {
		if tab.Index(key) < 0 {
			t.Fatalf("no row %s", key)
		}
		edits = append(edits, model.Edit{Tab: replayTab, ID: key, Expect: map[model.Field]string{model.FStatus: "dead"},
			Set: map[model.Field]string{model.FStatus: "delivered", model.FAttempts: "2", model.FReplayedAt: "2026-12-01T12:00:00Z"}})
	}
	kctx, kill := context.WithCancel(ctx)
	var hit []string
	writes := 0
	f.emu.SetHook(func(r emulator.Request) {
		if r.Method != "spreadsheets.batchUpdate" {
			return
		}
		writes++
		if writes > 1 {
			kill() // the process is gone: nothing more of it arrives
			f.emu.InjectFault(emulator.Fault{Method: r.Method, Status: 503})
			return
		}
		if err := f.emu.SortRows(replayID, replayTab, 7, true); err != nil { // by key, descending
			t.Error(err)
		}
		for i := range 3 {
			hit = append(hit, f.cell(i, "key"))
		}
		f.emu.InjectFault(emulator.Fault{Method: r.Method, Drop: true})
	})
	if _, err := dead.Apply(kctx, edits); err == nil {
		t.Fatal("the killed write-back reported success")
	}
	f.emu.SetHook(nil)
	f.emu.ClearFaults()
	for i, key := range hit {
		if got := f.cell(i, "status"); got != "delivered" {
			t.Fatalf("%s reads %q: the test expects the killed write-back to have marked it", key, got)
		}
	}

	// The next run, once the dead run's lease has run out.
	later := time.Now().Add(11 * time.Minute)
	f.emu.SetClock(func() time.Time { return later })
	r, doc := f.runJSON(exitOK, "--all", "--json")
	if len(doc.Recovered) == 0 || !strings.Contains(r.stderr, "recovered:") {
		t.Fatalf("nothing said of what was put back:\n%s", r.stderr)
	}
	for _, key := range hit {
		if !strings.Contains(strings.Join(doc.Recovered, "\n"), key) {
			t.Errorf("recovered %v doesn't name %s", doc.Recovered, key)
		}
	}
	effects := f.crm.Effects()
	for i := range 10 {
		key := fmt.Sprintf("k-%d", i)
		if effects[key] != 1 {
			t.Errorf("%s acted on %d times, want once (effects %v)", key, effects[key], effects)
		}
	}
}
