package sheets_test

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// A process killed right after a write that hit moved rows leaves only its journal entry;
// the next triage that writes the tab settles it: what the write left on rows it was not
// meant for is put back, and says so, before anything of its own is planned.

// crashingWrite runs set-status done on m1..m3 of a 100-row inbox in a store that "dies"
// after its first write: just before it, another editor sorts the tab (so the write hits
// m100..m98), the write is applied, its answer is lost, and the process is gone before it
// can send anything else (its next request, the fence, is refused and its context ended).
func crashingWrite(t *testing.T, f *fixture, id string, pid int) (hit []string) {
	t.Helper()
	tc := inboxTab("Inbox", "new", "read", "done")
	s, wb := f.openTab(t, id, tc, inboxRows(100), sheets.Options{Actor: "ann"})
	if pid > 0 {
		sheets.SetWriterPID(s, pid)
	}
	tab := wb.Tabs[0]
	var edits []model.Edit
	for _, rid := range []string{"m1", "m2", "m3"} {
		edits = append(edits, model.SetStatus(tab, &tab.Records[tab.Index(rid)], "done"))
	}
	c, kill := context.WithCancel(ctx(t))
	defer kill()
	writes := 0
	f.emu.SetHook(func(r emulator.Request) {
		if r.Method != mBatchUpdate {
			return
		}
		writes++
		switch writes {
		case 1:
			hit = sortUnder(t, f, id)
			f.emu.InjectFault(emulator.Fault{Method: mBatchUpdate, Drop: true})
		default:
			kill()
			f.emu.InjectFault(emulator.Fault{Method: mBatchUpdate, Status: 503})
		}
	})
	defer f.emu.SetHook(nil)
	if _, err := s.Apply(c, edits); err == nil {
		t.Fatal("the killed write reported success")
	}
	f.emu.SetHook(nil)
	f.emu.ClearFaults()
	// The damage a crash leaves: the rows sorted into place hold done, m1..m3 still new.
	for _, rid := range hit {
		if got := statusOf(t, f, id, rid); got != "done" {
			t.Fatalf("the crash left %s %q; the test expects the write to have hit it", rid, got)
		}
	}
	return hit
}

// sortUnder is another editor sorting the Inbox by ID, descending, just before triage's
// write: it returns the IDs now on rows 2-4, where a write planned for m1..m3 lands.
func sortUnder(t *testing.T, f *fixture, id string) (hit []string) {
	if err := f.emu.SortRows(id, "Inbox", 5, true); err != nil {
		t.Error(err)
	}
	for _, row := range f.emu.Cells(id, "Inbox")[1:4] {
		hit = append(hit, model.CellString(row[5]))
	}
	return hit
}

// statusOf reads the Status of the row whose ID is rid, straight from the emulator.
func statusOf(t *testing.T, f *fixture, id, rid string) string {
	t.Helper()
	cells := f.emu.Cells(id, "Inbox")
	for _, row := range cells[1:] {
		if len(row) > 5 && model.CellString(row[5]) == rid {
			return model.CellString(row[4])
		}
	}
	t.Fatalf("no row %s", rid)
	return ""
}

// wantInbox checks every row's status: done for the IDs in done, new for the rest.
func wantInbox(t *testing.T, f *fixture, id string, done ...string) {
	t.Helper()
	for _, row := range f.emu.Cells(id, "Inbox")[1:] {
		rid, st := model.CellString(row[5]), model.CellString(row[4])
		want := "new"
		if slices.Contains(done, rid) {
			want = "done"
		}
		if st != want {
			t.Errorf("%s: status %q, want %q", rid, st, want)
		}
	}
}

// rerun is the same command run again by a fresh process: LoadTab, then set-status done of
// m1..m3.
func rerun(t *testing.T, f *fixture, id string) model.ApplyResult {
	t.Helper()
	s := f.store(sheets.Options{SpreadsheetID: id, Tabs: []model.TabConfig{inboxTab("Inbox", "new", "read", "done")}, Actor: "bob"})
	wb, err := s.LoadTab(ctx(t), "Inbox")
	if err != nil {
		t.Fatal(err)
	}
	tab := wb.Tabs[0]
	var edits []model.Edit
	for _, rid := range []string{"m1", "m2", "m3"} {
		edits = append(edits, model.SetStatus(tab, &tab.Records[tab.Index(rid)], "done"))
	}
	res, err := s.Apply(ctx(t), edits)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx(t)); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestCrashedWriteIsSettledOnceItsLeaseRunsOut(t *testing.T) {
	f := newFixture(t, nil)
	const id = "crash-lease"
	hit := crashingWrite(t, f, id, 0)
	if len(journalsOf(f, id)) != 1 {
		t.Fatalf("journal sheets %v, want the killed write's", journalsOf(f, id))
	}

	// Within the lease, the writer may still be alive (another host, say): its entry is left
	// alone, and the rerun's own write goes by identity as always.
	res := rerun(t, f, id)
	if len(res.Applied) != 3 || len(res.Recovered) != 0 {
		t.Fatalf("within the lease: %+v, want 3 applied, nothing recovered", res)
	}
	wantInbox(t, f, id, append([]string{"m1", "m2", "m3"}, hit...)...)
	if len(journalsOf(f, id)) != 1 {
		t.Fatalf("journal sheets %v: a live lease's entry was deleted", journalsOf(f, id))
	}

	// Past the lease (Google's clock, as its Date header tells it), the next write settles it.
	later := time.Now().Add(leaseWait)
	f.emu.SetClock(func() time.Time { return later })
	res = rerun(t, f, id)
	if len(res.Recovered) != 3 {
		t.Fatalf("past the lease: recovered %v, want the status of %v", res.Recovered, hit)
	}
	for _, r := range res.Recovered {
		if r.Column != `"Status"` || r.Left != "done" || r.Restored != "new" || !strings.Contains(r.Writer, "ann") {
			t.Errorf("recovered %+v", r)
		}
	}
	wantInbox(t, f, id, "m1", "m2", "m3")
	if j := journalsOf(f, id); len(j) != 0 {
		t.Errorf("journal sheets %v left after the settling run's Close", j)
	}
	if m := f.emu.DeveloperMetadata(id); len(m) != 0 {
		t.Errorf("journal metadata %v left after the settling run's Close", m)
	}
}

// leaseWait is past any journal lease.
const leaseWait = 11 * time.Minute

func TestCrashedWriteOfAGoneProcessIsSettledAtOnce(t *testing.T) {
	f := newFixture(t, nil)
	const id = "crash-pid"
	crashingWrite(t, f, id, deadPID(t))
	res := rerun(t, f, id)
	if len(res.Recovered) != 3 || len(res.Applied) != 3 {
		t.Fatalf("rerun: %+v, want 3 applied and 3 cells put back", res)
	}
	if !strings.Contains(res.Summary(), "put back 3 cells") {
		t.Errorf("summary %q doesn't say what was put back", res.Summary())
	}
	wantInbox(t, f, id, "m1", "m2", "m3")
}

// A journal a person touches while its write's answer is lost: renamed or sorted, the proof
// still works; deleted or edited, it is reported as damage, never taken for a write that
// didn't land.
func TestTamperedJournalOfALostWrite(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(f *fixture, id, title string) error
		proven bool
	}{
		{"renamed", func(f *fixture, id, title string) error { return f.emu.RenameSheet(id, title, "old stuff") }, true},
		{"sorted", func(f *fixture, id, title string) error { return f.emu.SortRows(id, title, 2, true) }, true},
		{"deleted", func(f *fixture, id, title string) error { return f.emu.DeleteSheet(id, title) }, false},
		{"edited", func(f *fixture, id, title string) error { return f.emu.SetCell(id, title, 3, 5, "spam") }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			id := "tamper-" + tc.name
			s, wb := f.openTab(t, id, inboxTab("Inbox", "new", "read", "done"), inboxRows(20), sheets.Options{Actor: "ann"})
			tab := wb.Tabs[0]
			var edits []model.Edit
			for _, rid := range []string{"m1", "m2", "m3"} {
				edits = append(edits, model.SetStatus(tab, &tab.Records[tab.Index(rid)], "done"))
			}
			var once sync.Once
			writes := 0
			f.emu.SetHook(func(r emulator.Request) {
				if r.Method != mBatchUpdate {
					return
				}
				writes++
				switch writes {
				case 1:
					sortUnder(t, f, id)
					f.emu.InjectFault(emulator.Fault{Method: mBatchUpdate, Drop: true})
				case 2: // the fence: someone touches the journal first
					once.Do(func() {
						if err := tc.tamper(f, id, journalsOf(f, id)[0]); err != nil {
							t.Error(err)
						}
					})
				}
			})
			res, err := s.Apply(ctx(t), edits)
			f.emu.SetHook(nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.proven {
				if !res.OK() || len(res.Applied) != 3 {
					t.Fatalf("%+v, want all 3 applied", res)
				}
				wantInbox(t, f, id, "m1", "m2", "m3")
				return
			}
			if res.OK() || len(res.Damaged) == 0 {
				t.Fatalf("%+v: a write whose journal was %s must be reported as damage", res, tc.name)
			}
			for _, d := range res.Damaged {
				if d.Note == "" || !strings.Contains(d.String(), "check it") {
					t.Errorf("damage %q doesn't say what to do", d.String())
				}
			}
			if len(res.Applied) != 0 {
				t.Errorf("applied %v: nothing of a write whose journal is gone is proven", res.Applied)
			}
		})
	}
}

// journalsOf lists the titles of the journal sheets in workbook id.
func journalsOf(f *fixture, id string) []string {
	f.id = id
	return journalSheets(f)
}

// A dead letter whose append landed with its answer lost, while someone renamed the journal:
// the journal is found by its ID and still read, so the letter is recorded once, never
// appended again.
func TestDeadLetterLostAnswerRenamedJournalOnce(t *testing.T) {
	f := newFixture(t, deadBook(deadHeader))
	s := f.store(sheets.Options{Tabs: []model.TabConfig{deadTab("")}})
	writes := 0
	f.emu.SetHook(func(r emulator.Request) {
		if r.Method != mBatchUpdate {
			return
		}
		writes++
		switch writes {
		case 1:
			f.emu.InjectFault(emulator.Fault{Method: mBatchUpdate, Drop: true})
		case 2: // the fence
			if err := f.emu.RenameSheet(f.id, journalSheets(f)[0], "Sheet 7"); err != nil {
				t.Error(err)
			}
		}
	})
	err := s.DeadLetter(ctx(t), []model.DeadLetter{letter(1)})
	f.emu.SetHook(nil)
	if err != nil {
		t.Fatal(err)
	}
	rows := f.emu.Cells(f.id, "failed_calls")
	n := 0
	for _, row := range rows[1:] {
		if model.CellString(row[colOf(rows, "key")]) == "ord-1" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the letter is recorded %d times, want once: %v", n, rows)
	}
}

// An Apply that ends on an error after a write that hit moved rows leaves its journal for
// the same store's next Apply (a TUI or serve session trying again), which puts the values
// back before anything else; the journal is never deleted with the values still owed.
func TestAbortedApplyIsSettledByTheSameStoresNextApply(t *testing.T) {
	f := newFixture(t, nil)
	const id = "abort-same"
	s, wb := f.openTab(t, id, inboxTab("Inbox", "new", "read", "done"), inboxRows(30), sheets.Options{Actor: "ann"})
	tab := wb.Tabs[0]
	var hit []string
	var edits []model.Edit
	for _, rid := range []string{"m1", "m2", "m3"} {
		edits = append(edits, model.SetStatus(tab, &tab.Records[tab.Index(rid)], "done"))
	}
	writes := 0
	f.emu.SetHook(func(r emulator.Request) {
		if r.Method != mBatchUpdate {
			return
		}
		writes++
		if writes == 1 {
			hit = sortUnder(t, f, id)
			// The write lands and is answered; then the network dies for good.
			f.emu.InjectFault(emulator.Fault{Method: mBatchGet, Status: 403, Times: 100})
		}
	})
	if _, err := s.Apply(ctx(t), edits); err == nil {
		t.Fatal("the Apply whose reads all failed reported success")
	}
	f.emu.SetHook(nil)
	f.emu.ClearFaults()
	for _, rid := range hit {
		if got := statusOf(t, f, id, rid); got != "done" {
			t.Fatalf("%s is %q: the test expects the write to have hit it", rid, got)
		}
	}
	// The next Apply of the same store, of another row: the values come back first.
	res, err := s.Apply(ctx(t), []model.Edit{model.SetStatus(tab, &tab.Records[tab.Index("m10")], "read")})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Recovered) != 3 {
		t.Fatalf("recovered %v, want the 3 cells the aborted write left on %v", res.Recovered, hit)
	}
	for _, rid := range hit {
		if got := statusOf(t, f, id, rid); got != "new" {
			t.Errorf("%s is %q after the next Apply, want new", rid, got)
		}
	}
}

// A writer whose lost write's lease runs out while it waits (a laptop lid closed, a process
// stopped) does not fence it any more: another triage may be settling it, and a fence could
// then prove nothing. It stops, saying the write may have landed.
func TestWriterStopsPastItsLease(t *testing.T) {
	f := newFixture(t, nil)
	const id = "lease-stop"
	s, wb := f.openTab(t, id, inboxTab("Inbox", "new", "read", "done"), inboxRows(5), sheets.Options{Actor: "ann"})
	tab := wb.Tabs[0]
	edit := model.SetStatus(tab, &tab.Records[tab.Index("m1")], "done")
	f.emu.SetHook(func(r emulator.Request) {
		if r.Method == mBatchUpdate {
			f.emu.InjectFault(emulator.Fault{Method: mBatchUpdate, Drop: true})
			later := time.Now().Add(leaseWait)
			sheets.SetLocalClock(s, func() time.Time { return later })
		}
	})
	f.reset()
	_, err := s.Apply(ctx(t), []model.Edit{edit})
	f.emu.SetHook(nil)
	if err == nil || !strings.Contains(err.Error(), "lease") {
		t.Fatalf("Apply past its lease: %v, want an error that says so", err)
	}
	if n := f.emu.Count(mBatchUpdate); n != 1 {
		t.Errorf("%d writes sent, want the lost one only (no fence past the lease)", n)
	}
}

// deadPID is the PID of a process of this host that has exited: it names nobody now.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("can't run a child process: %v", err)
	}
	return cmd.Process.Pid
}

// A write whose answer was lost, its journal renamed in the instant between the sheet list
// that found it (by ID) and the read of it (by the title that list gave): the read is refused
// for that title, and the journal is found again by its ID and read, so the write is proven,
// not taken for one whose journal someone changed.
func TestLostWriteJournalRenamedBeforeItsReadStillProves(t *testing.T) {
	f := newFixture(t, nil)
	const id = "rename-read"
	s, wb := f.openTab(t, id, inboxTab("Inbox", "new", "read", "done"), inboxRows(10), sheets.Options{Actor: "ann"})
	tab := wb.Tabs[0]
	edits := []model.Edit{model.SetStatus(tab, &tab.Records[tab.Index("m2")], "done")}
	writes, renamed := 0, false
	f.emu.SetHook(func(r emulator.Request) {
		switch {
		case r.Method == mBatchUpdate:
			writes++
			if writes == 1 {
				f.emu.InjectFault(emulator.Fault{Method: mBatchUpdate, Drop: true})
			}
		case r.Method == mBatchGet && writes == 2 && !renamed:
			// The fence said the write landed, the sheet list named its journal: now rename it.
			renamed = true
			if err := f.emu.RenameSheet(id, journalsOf(f, id)[0], "renamed by a person"); err != nil {
				t.Error(err)
			}
		}
	})
	res, err := s.Apply(ctx(t), edits)
	f.emu.SetHook(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !renamed {
		t.Fatal("the journal was never renamed: the test did not reach its instant")
	}
	if len(res.Applied) != 1 || len(res.Damaged) != 0 || len(res.Conflicts) != 0 {
		t.Fatalf("applied %d, damaged %v, conflicts %v: want the write proven", len(res.Applied), res.Damaged, res.Conflicts)
	}
	if got := statusOf(t, f, id, "m2"); got != "done" {
		t.Errorf("m2 reads %q", got)
	}
}

// A write whose answer was lost while a script deleted its journal's developer metadata (the
// Sheets UI can't; the API can): the fence then finds no entry, yet the journal sheet the same
// batch made is there, so the write landed. It is reported as damage, never written again as
// if it had not landed; a dead letter is not appended twice.
func TestLostWriteWhoseMetadataWasDeletedIsDamageNotAWriteAgain(t *testing.T) {
	t.Run("apply", func(t *testing.T) {
		f := newFixture(t, nil)
		const id = "meta-gone"
		s, wb := f.openTab(t, id, inboxTab("Inbox", "new", "read", "done"), inboxRows(10), sheets.Options{Actor: "ann"})
		tab := wb.Tabs[0]
		edits := []model.Edit{model.SetStatus(tab, &tab.Records[tab.Index("m2")], "done")}
		writes := 0
		f.emu.SetHook(func(r emulator.Request) {
			if r.Method != mBatchUpdate {
				return
			}
			writes++
			switch writes {
			case 1:
				f.emu.InjectFault(emulator.Fault{Method: mBatchUpdate, Drop: true})
			case 2: // the fence: a script has just deleted the entry's metadata
				for _, m := range f.emu.DeveloperMetadata(id) {
					if err := f.emu.DeleteDeveloperMetadata(id, m.MetadataID); err != nil {
						t.Error(err)
					}
				}
			}
		})
		res, err := s.Apply(ctx(t), edits)
		f.emu.SetHook(nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Damaged) == 0 || len(res.Applied) != 0 {
			t.Fatalf("applied %d, damaged %v: want the landed write reported, not written again", len(res.Applied), res.Damaged)
		}
		// Decided, not planned again: a conflict saying why, and the damage sheet (the only
		// write after the fence).
		if len(res.Conflicts) != 1 || !strings.Contains(res.Conflicts[0].Reason, "metadata was deleted") {
			t.Errorf("conflicts %v, want the edit's, saying why", res.Conflicts)
		}
		if writes != 3 {
			t.Errorf("%d writes, want the write, the fence and the damage sheet", writes)
		}
	})
	t.Run("dead letter", func(t *testing.T) {
		f := newFixture(t, deadBook(deadHeader))
		s := f.store(sheets.Options{Tabs: []model.TabConfig{deadTab("")}})
		writes := 0
		f.emu.SetHook(func(r emulator.Request) {
			if r.Method != mBatchUpdate {
				return
			}
			writes++
			switch writes {
			case 1:
				f.emu.InjectFault(emulator.Fault{Method: mBatchUpdate, Drop: true})
			case 2:
				for _, m := range f.emu.DeveloperMetadata(f.id) {
					if err := f.emu.DeleteDeveloperMetadata(f.id, m.MetadataID); err != nil {
						t.Error(err)
					}
				}
			}
		})
		err := s.DeadLetter(ctx(t), []model.DeadLetter{letter(1)})
		f.emu.SetHook(nil)
		if err == nil || !strings.Contains(err.Error(), "developer metadata was deleted") {
			t.Errorf("err %v, want the append reported as landed but unprovable", err)
		}
		rows := f.emu.Cells(f.id, "failed_calls")
		n := 0
		for _, row := range rows[1:] {
			if model.CellString(row[colOf(rows, "key")]) == "ord-1" {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("the letter is on the sheet %d times, want once (it landed; never appended again)", n)
		}
	})
}
