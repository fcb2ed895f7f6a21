package sheets_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/sheetstest"
)

func rowText(row []any) []string {
	out := make([]string, len(row))
	for i, v := range row {
		out[i] = model.CellString(v)
	}
	return out
}

// EnsureSchema creates missing tabs and header cells, never deletes or moves anything, and
// does nothing the second time.
func TestEnsureSchema(t *testing.T) {
	wide := []any{"id", "status"}
	for i := len(wide); i < 24; i++ {
		wide = append(wide, fmt.Sprintf("extra %d", i))
	}
	f := newFixture(t, &sheetstest.Workbook{SpreadsheetID: "init", Title: "init", Sheets: []*sheetstest.Sheet{
		{Title: "Notes", Rows: [][]any{{"keep me"}}},
		{Title: "Inbox", Rows: [][]any{{"Name", "State", "Custom"}, {"Ann", "new", "x"}}},
		{Title: "Wide Jobs", Rows: [][]any{wide, {"j1", "pending"}}},
	}})
	inbox := inboxTab("", "new")
	inbox.Columns = map[model.Field]string{model.FID: "Submission ID"}
	tabs := []model.TabConfig{inbox, deadTab("failed calls"), queueTab("Wide Jobs")}
	s := f.store(sheets.Options{Tabs: tabs})

	rep, err := s.EnsureSchema(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rep.CreatedTabs, []string{"failed calls"}) {
		t.Errorf("created %q", rep.CreatedTabs)
	}
	wantInbox := []string{"Timestamp", "Email", "Message", "Submission ID"}
	if got := rep.AddedHeaders["Inbox"]; !reflect.DeepEqual(got, wantInbox) {
		t.Errorf("inbox headers added %q, want %q", got, wantInbox)
	}
	wantDL := []string{"timestamp", "source", "url", "payload", "error", "attempts", "method", "key", "status", "replayed_at"}
	if got := rep.AddedHeaders["failed calls"]; !reflect.DeepEqual(got, wantDL) {
		t.Errorf("dead-letter headers %q, want %q", got, wantDL)
	}
	wantWide := []string{"type", "payload", "claimedBy", "claimedAt", "lastError", "updatedAt", "attempts"}
	if got := rep.AddedHeaders["Wide Jobs"]; !reflect.DeepEqual(got, wantWide) {
		t.Errorf("wide headers %q, want %q", got, wantWide)
	}
	if !strings.Contains(rep.String(), `created tab "failed calls"`) {
		t.Errorf("report text: %s", rep)
	}

	inboxCells := f.emu.Cells(f.id, "Inbox")
	if got := rowText(inboxCells[0]); !reflect.DeepEqual(got, []string{"Name", "State", "Custom", "Timestamp", "Email", "Message", "Submission ID"}) {
		t.Errorf("inbox header row = %q", got)
	}
	if got := rowText(inboxCells[1]); !reflect.DeepEqual(got, []string{"Ann", "new", "x"}) {
		t.Errorf("inbox data row changed: %q", got)
	}
	if got := rowText(f.emu.Cells(f.id, "failed calls")[0]); !reflect.DeepEqual(got, wantDL) {
		t.Errorf("new tab header = %q", got)
	}
	wideRow := rowText(f.emu.Cells(f.id, "Wide Jobs")[0])
	if len(wideRow) != 31 || wideRow[24] != "type" || wideRow[30] != "attempts" || wideRow[23] != "extra 23" {
		t.Errorf("wide header row = %q (grown past 26 columns)", wideRow)
	}
	wbk := f.emu.Workbook(f.id)
	var titles []string
	for _, sh := range wbk.Sheets {
		titles = append(titles, sh.Title)
	}
	if !reflect.DeepEqual(titles, []string{"Notes", "Inbox", "Wide Jobs", "failed calls"}) {
		t.Errorf("tabs = %q (none deleted, moved or renamed)", titles)
	}
	if got := rowText(f.emu.Cells(f.id, "Notes")[0]); got[0] != "keep me" {
		t.Errorf("unconfigured tab touched")
	}

	wb, err := s.Load(ctx(t))
	if err != nil || len(wb.Missing) != 0 || len(wb.Broken) != 0 || len(wb.Tabs) != 3 {
		t.Fatalf("load after init: %v missing %v broken %v", err, wb.Missing, wb.Broken)
	}

	f.reset()
	rep, err = s.EnsureSchema(ctx(t))
	if err != nil || rep.Changed() {
		t.Fatalf("second init: %v %+v", err, rep)
	}
	if n := f.emu.Count(mBatchUpdate) + f.emu.Count(mValuesBatchUpdate); n != 0 {
		t.Errorf("second init wrote %d times", n)
	}
	if !strings.Contains(rep.String(), "nothing to do") {
		t.Errorf("report text %q", rep)
	}
}

// Audit columns are never created by init.
func TestEnsureSchemaNoAuditColumns(t *testing.T) {
	f := newFixture(t, &sheetstest.Workbook{SpreadsheetID: "na", Title: "na", Sheets: []*sheetstest.Sheet{{Title: "Sheet1"}}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new"), queueTab("")}})
	rep, err := s.EnsureSchema(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rep.CreatedTabs, []string{"Inbox", "Jobs"}) {
		t.Errorf("created %q", rep.CreatedTabs)
	}
	for tab, hs := range rep.AddedHeaders {
		for _, h := range hs {
			if strings.HasPrefix(strings.ToLower(h), "triaged") {
				t.Errorf("%s: init added audit column %q", tab, h)
			}
		}
	}
	if got := rowText(f.emu.Cells(f.id, "Inbox")[0]); !reflect.DeepEqual(got, []string{"Timestamp", "Name", "Email", "Message", "Status", "ID"}) {
		t.Errorf("inbox header = %q", got)
	}
}

// A structural batchUpdate that was applied although the client saw a 503 is retried; the
// retry's "already exists" means the first attempt worked, and init carries on.
func TestEnsureSchemaRetryAfterAppliedFailure(t *testing.T) {
	f := newFixture(t, &sheetstest.Workbook{SpreadsheetID: "rt", Title: "rt", Sheets: []*sheetstest.Sheet{{Title: "Sheet1"}}})
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new")}})
	f.emu.InjectFault(sheetstest.Fault{Method: mBatchUpdate, Status: 503, After: true})
	rep, err := s.EnsureSchema(ctx(t))
	if err != nil {
		t.Fatalf("init: %v", err)
	}
	if f.emu.Count(mBatchUpdate) != 2 || !reflect.DeepEqual(rep.CreatedTabs, []string{"Inbox"}) {
		t.Errorf("batchUpdates %d, report %+v", f.emu.Count(mBatchUpdate), rep)
	}
	if got := rowText(f.emu.Cells(f.id, "Inbox")[0]); len(got) != 6 {
		t.Errorf("headers = %q", got)
	}
}
