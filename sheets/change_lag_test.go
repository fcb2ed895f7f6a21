package sheets_test

import (
	"context"
	"testing"
	"time"

	drive "google.golang.org/api/drive/v3"
	"google.golang.org/api/option"

	"github.com/triage-dev/triage/internal/netshape"
	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// Drive's version lags by minutes (Google refreshes a Sheets file's every ~3): a row a form
// appends at the end of a tab is seen by the next change check anyway (the tail probe),
// with Drive and without; an edit in the middle is seen once Drive's version moves, or,
// without Drive, once the full-read interval has passed. An idle check at 100,000 rows costs
// a few KB on the wire.
func TestNewRowsShowWhateverDriveSays(t *testing.T) {
	for _, withDrive := range []bool{true, false} {
		name := map[bool]string{true: "drive lags 180s", false: "no drive"}[withDrive]
		t.Run(name, func(t *testing.T) {
			clk := testbed.NewClock()
			emu := emulator.New()
			emu.AddWorkbook(&emulator.Workbook{SpreadsheetID: "lag", Title: "lag", TimeZone: "Etc/UTC", Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: inboxRows(100_000)}}})
			emu.SetClock(clk.Now)
			emu.SetVersionLag(180 * time.Second)
			srv := testbed.Serve(t, emu)
			wire := &netshape.Shaper{}
			addr, stop, err := netshape.Start(wire, srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(stop)
			conn, err := sheets.ConnectWithDrive(t.Context(), sheets.AuthOptions{Endpoint: "http://" + addr})
			if err != nil {
				t.Fatal(err)
			}
			st := sheets.New(t.Context(), conn.Sheets, sheets.Options{SpreadsheetID: "lag", Tabs: []model.TabConfig{model.DefaultTabConfig(model.RoleInbox)},
				HTTPClient: conn.HTTP, Now: clk.Now, FullReadEvery: 10 * time.Minute})
			if withDrive {
				dsvc, err := drive.NewService(context.Background(), option.WithEndpoint("http://"+addr+"/drive/v3/"), option.WithoutAuthentication())
				if err != nil {
					t.Fatal(err)
				}
				st = st.WithDrive(dsvc)
			}
			changed := func(want bool, what string) {
				t.Helper()
				got, err := st.Changed(t.Context())
				if err != nil || got != want {
					t.Fatalf("%s: Changed = %v, %v; want %v", what, got, err, want)
				}
			}
			load := func() {
				t.Helper()
				if _, err := st.Changed(t.Context()); err != nil {
					t.Fatal(err)
				}
				if _, err := st.Load(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			load()
			up, down := wire.Bytes()
			changed(false, "idle")
			up2, down2 := wire.Bytes()
			idle := (up2 - up) + (down2 - down)
			t.Logf("an idle check at 100,000 rows: %d bytes on the wire", idle)
			if idle > 4096 {
				t.Errorf("an idle check costs %d bytes", idle)
			}

			// A form appends a row: seen at once, Drive's version notwithstanding.
			clk.Add(5 * time.Second)
			if err := emu.InsertRows("lag", "Inbox", 100_002, [][]any{{45000.5, "New", "n@example.com", "hi", "new", "m-new"}}); err != nil {
				t.Fatal(err)
			}
			changed(true, "after an append")
			load()
			changed(false, "after reading the append")

			// A person edits a row in the middle: Drive says so once its version moves;
			// without Drive, the full-read interval does.
			clk.Add(5 * time.Second)
			if err := emu.SetCell("lag", "Inbox", 500, 4, "done"); err != nil {
				t.Fatal(err)
			}
			changed(false, "an edit Drive's version doesn't show yet")
			if withDrive {
				clk.Add(180 * time.Second)
				changed(true, "the edit, once Drive's version moved")
			} else {
				clk.Add(10 * time.Minute)
				changed(true, "the edit, once the full-read interval passed")
			}
		})
	}
}
