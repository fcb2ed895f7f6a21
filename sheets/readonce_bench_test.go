package sheets_test

import (
	"testing"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
)

// BenchmarkSetStatus1000 is a whole `set-status` of 1,000 IDs on a 10,000-row inbox with a
// Status dropdown and a missing Jobs tab, as the command runs it on a fresh store: LoadTab,
// then Apply. It reports the requests each command sends (3: the tab's metadata and
// dropdown, one read, one write) and fails if it sends more.
//
//	go test -run '^$' -bench SetStatus1000 -benchmem ./sheets/
func BenchmarkSetStatus1000(b *testing.B) {
	f := newFixture(b, readOnceBook("setstatus1000"))
	ids := applyBenchIDs(1000)
	f.reset()
	ops := 0
	for b.Loop() {
		s := f.store(sheets.Options{Tabs: readOnceTabs()})
		wb, err := s.LoadTab(ctx(b), "Inbox")
		if err != nil {
			b.Fatal(err)
		}
		tab := wb.Tab(model.RoleInbox)
		to := [2]string{"done", "new"}[ops%2]
		edits := make([]model.Edit, len(ids))
		for i, id := range ids {
			edits[i] = model.SetStatus(tab, &tab.Records[tab.Index(id)], to)
		}
		res, err := s.Apply(ctx(b), edits)
		if err != nil || len(res.Applied) != len(ids) {
			b.Fatalf("%v %s", err, res.Summary())
		}
		ops++
	}
	if per := float64(f.total()) / float64(ops); per > 3 {
		b.Errorf("set-status sent %.1f requests per command, want at most 3: %v", per, f.emu.Counts())
	}
	b.ReportMetric(float64(f.total())/float64(ops), "requests/op")
	b.ReportMetric(float64(f.emu.Count(mBatchGet))/float64(ops), "reads/op")
}
