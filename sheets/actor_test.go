package sheets_test

import (
	"testing"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// One Store serving several people (`triage serve`): each Apply records the person its
// context names (WithActor), and one without falls back to Options.Actor.
func TestWithActorPerCall(t *testing.T) {
	withAudit := append(append([]any{}, inboxHeader...), "triaged_by", "triaged_at")
	rows := [][]any{withAudit, {1.0, "a", "a@x", "hi", "new", "m1"}, {2.0, "b", "b@x", "yo", "new", "m2"}, {3.0, "c", "c@x", "hey", "new", "m3"}}
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "actor", Title: "actor", Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: rows}}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new", "done")}, Actor: "service"})
	for _, c := range []struct{ id, who string }{{"m1", "alice"}, {"m2", "bob"}, {"m3", ""}} {
		res, err := s.Apply(model.WithActor(ctx(t), c.who), []model.Edit{setStatus("Inbox", c.id, "new", "done")})
		if err != nil || len(res.Applied) != 1 {
			t.Fatalf("%s: %v %s", c.id, err, res.Summary())
		}
	}
	got := f.emu.Cells(f.id, "Inbox")
	for i, want := range []string{"alice", "bob", "service"} {
		if by := cellAt(got, i+1, 6); by != want {
			t.Errorf("row %d triaged_by = %q, want %q", i+2, by, want)
		}
	}
}
