package sheets_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
	drive "google.golang.org/api/drive/v3"
	"google.golang.org/api/option"
)

// Store.Changed: unknown counts as changed; a Load preceded by Changed makes the store current
// (false until the next edit, by anyone, ours included); a 403 turns the check off, says so
// once, and every call after says "changed" without asking.
func TestChangedByDriveVersion(t *testing.T) {
	f := newFixture(t, &emulator.Workbook{SpreadsheetID: "chg", Title: "chg", Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: inboxRows(3)}}})
	dsvc, err := drive.NewService(context.Background(), option.WithEndpoint(f.srv.URL+"/drive/v3/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	s := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new", "done")}}).WithDrive(dsvc)
	changed := func(want bool) {
		t.Helper()
		got, err := s.Changed(ctx(t))
		if err != nil || got != want {
			t.Fatalf("Changed = %v, %v; want %v", got, err, want)
		}
	}
	changed(true) // nothing loaded yet
	if _, err := s.Load(ctx(t)); err != nil {
		t.Fatal(err)
	}
	changed(false)
	changed(false)
	mustDo(t, f.emu.SetCell(f.id, "Inbox", 2, 1, "someone"))
	changed(true)
	if _, err := s.Load(ctx(t)); err != nil {
		t.Fatal(err)
	}
	changed(false)
	if res, err := s.Apply(ctx(t), []model.Edit{setStatus("Inbox", "m2", "new", "done")}); err != nil || !res.OK() {
		t.Fatalf("apply: %v %s", err, res.Summary())
	}
	changed(true) // our own write is a change too
	if _, err := s.Load(ctx(t)); err != nil {
		t.Fatal(err)
	}
	changed(false)
	// A Load with no Changed since the previous Load can't tell which version it read.
	for range 2 {
		if _, err := s.Load(ctx(t)); err != nil {
			t.Fatal(err)
		}
	}
	changed(true)
	if !strings.HasPrefix(s.ChangeCheckMode(), "change check") {
		t.Errorf("mode %q", s.ChangeCheckMode())
	}

	f.emu.InjectFault(emulator.Fault{Method: emulator.MethodDriveGet, Status: 403, Message: "Request had insufficient authentication scopes."})
	got, err := s.Changed(ctx(t))
	if !got || !errors.Is(err, sheets.ErrNoChangeCheck) || !strings.Contains(err.Error(), "drive.metadata.readonly") {
		t.Fatalf("refused check: %v, %v", got, err)
	}
	f.emu.ResetCounts()
	// Refused, the check is off for good: the tail probe decides (nothing appended).
	changed(false)
	if n := f.emu.Count(emulator.MethodDriveGet); n != 0 {
		t.Errorf("the check asked Drive %d times after it was refused", n)
	}
	if m := s.ChangeCheckMode(); !strings.HasPrefix(m, "tail probe and full reads (") || !strings.Contains(m, "Drive answered 403") {
		t.Errorf("mode %q", m)
	}
	// Without Drive and before any Load: changed, nothing sent.
	plain := f.store(sheets.Options{Tabs: []model.TabConfig{inboxTab("", "new", "done")}})
	f.emu.ResetCounts()
	if got, err := plain.Changed(ctx(t)); !got || err != nil || f.total() != 0 {
		t.Errorf("no Drive: %v %v, %d requests", got, err, f.total())
	}
}
