package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
)

// TestDetailTimesInSheetZone: a time typed in the sheet (its zone) and one triage wrote (UTC)
// are both shown in the spreadsheet's zone.
func TestDetailTimesInSheetZone(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	wb := testWorkbook(t)
	tab, err := model.Decode(model.DefaultTabConfig(model.RoleQueue), rowsOf(
		[]string{"id", "type", "payload", "status", "claimedBy", "claimedAt", "lastError", "updatedAt", "attempts"},
		[]string{"job-1", "email", `{}`, "claimed", "w-1", "2025-06-01 12:30:00", "", "2025-06-01T10:45:00Z", "1"},
	), cet)
	if err != nil {
		t.Fatal(err)
	}
	wb.Tabs[2] = tab
	m := newLoaded(t, wb, 100, 30, func(o *Options) { o.NoColor = true })
	keys(m, "3", "enter")
	out := plainScreen(m)
	for _, want := range []string{"2025-06-01 12:30:00 CET", "2025-06-01 11:45:00 CET"} {
		if !strings.Contains(out, want) {
			t.Errorf("detail lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "UTC") {
		t.Errorf("no time in another zone:\n%s", out)
	}
}

// A detail view left open on a record a refresh removed must not act on another row: the ID
// lookup misses, and index 0 is somebody else.
func TestDetailOnVanishedRecordActsOnNothing(t *testing.T) {
	t.Run("clear error", func(t *testing.T) {
		m := newLoaded(t, testWorkbook(t), 100, 30)
		keys(m, "3", "j", "j", "enter") // job-3, the error job
		if m.detail == nil || m.detail.rec.ID != "job-3" {
			t.Fatalf("detail on %v, want job-3", m.detail)
		}
		// A refresh: job-3 is gone, and job-1 (record 0) is now an error job too.
		wb := testWorkbook(t)
		rows := queueRows()
		rows = append(rows[:3], rows[4:]...)
		rows[1][3] = "error"
		wb.Tabs[2] = mustDecode(t, model.RoleQueue, rows)
		send(m, loaded(m, wb))
		if !strings.Contains(plainScreen(m), "no longer in the sheet") {
			t.Errorf("the detail says its record is gone:\n%s", plainScreen(m))
		}
		keys(m, "e")
		if m.writes.writing || m.dialog != nil {
			t.Fatalf("e wrote to another row: %+v", m.writes.inflight)
		}
		if !strings.Contains(plainScreen(m), goneNote) {
			t.Errorf("e says the row is gone:\n%s", plainScreen(m))
		}
	})
	t.Run("discard", func(t *testing.T) {
		m := newLoaded(t, testWorkbook(t), 100, 30)
		keys(m, "2", "enter") // k-2, the newest
		wb := testWorkbook(t)
		rows := deadRows()
		wb.Tabs[1] = mustDecode(t, model.RoleDeadLetter, append(rows[:2], rows[3:]...)) // without k-2
		send(m, loaded(m, wb))
		keys(m, "D")
		if m.writes.writing || m.dialog != nil {
			t.Fatalf("D discarded another row: %+v", m.writes.inflight)
		}
		if !strings.Contains(plainScreen(m), goneNote) {
			t.Errorf("D says the row is gone:\n%s", plainScreen(m))
		}
		keys(m, "s")
		if m.dialog != nil {
			t.Errorf("s opened a picker for a row that is gone")
		}
	})
	t.Run("empty table", func(t *testing.T) {
		m := newLoaded(t, testWorkbook(t), 100, 30)
		keys(m, "2", "enter")
		wb := testWorkbook(t)
		wb.Tabs[1] = mustDecode(t, model.RoleDeadLetter, deadRows()[:1]) // the header only
		send(m, loaded(m, wb))
		for _, k := range []string{"D", "e", "s"} {
			keys(m, k) // must not panic (index 0 of no records)
			if m.writes.writing || m.dialog != nil {
				t.Fatalf("%s acted on an empty tab", k)
			}
		}
	})
}

func TestDetail(t *testing.T) {
	wb := testWorkbook(t)
	wb.Tabs[0].Hidden = []bool{false, false, false, false, false, true, false}
	m := newLoaded(t, wb, 80, 24)
	keys(m, "j", "j", "j", "j", "j", "enter") // msg-005: no ID, a problem
	out := plainScreen(m)
	for _, want := range []string{"Inbox · row 7", "! no ID", "ID (hidden)", "Notes (extra)", "Message", "Second line of 5."} {
		if !strings.Contains(out, want) {
			t.Errorf("detail should show %q:\n%s", want, out)
		}
	}
	keys(m, "q")
	if m.detail != nil {
		t.Error("q closes the detail view first, not the app")
	}
	keys(m, "2", "j", "enter")
	out = plainScreen(m)
	if !strings.Contains(out, `"id": "k-1"`) {
		t.Errorf("JSON payloads are pretty-printed:\n%s", out)
	}
	keys(m, "esc")
	if m.detail != nil {
		t.Error("esc closes the detail view")
	}
}

// A status reads the same in the table and the detail view: a blank cell is the tab's
// default (new on the inbox, dead on failed_calls, pending on Jobs), " Read " is read.
func TestDetailStatusAsTheTableShowsIt(t *testing.T) {
	inbox := inboxRows()
	inbox[2][4] = " Read "
	dead := deadRows() // k-3's status is blank
	queue := queueRows()
	queue[1][3] = ""
	wb := testWorkbook(t)
	wb.Tabs[0] = mustDecode(t, model.RoleInbox, inbox)
	wb.Tabs[1] = mustDecode(t, model.RoleDeadLetter, dead)
	wb.Tabs[2] = mustDecode(t, model.RoleQueue, queue)
	for _, c := range []struct{ tab, id, want string }{
		{"1", "msg-000", "new"}, {"1", "msg-001", "read"}, {"2", "k-3", "dead"}, {"3", "job-1", "pending"},
	} {
		m := newLoaded(t, wb, 100, 30)
		keys(m, c.tab)
		for cursorID(m) != c.id {
			before := cursorID(m)
			keys(m, "j")
			if cursorID(m) == before {
				t.Fatalf("no row %s on tab %s", c.id, c.tab)
			}
		}
		if r, _ := m.tabs.current().current(); r.Status != c.want {
			t.Errorf("%s: the table's status is %q, want %q", c.id, r.Status, c.want)
		}
		keys(m, "enter")
		var status string
		for _, f := range m.detail.fields {
			if f.label == "Status" || f.label == "status" {
				status = f.value
			}
		}
		if status != c.want {
			t.Errorf("%s: the detail's Status is %q, the table's %q", c.id, status, c.want)
		}
		found := false
		for _, l := range strings.Split(plainScreen(m), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && strings.EqualFold(f[0], "status") && f[1] == c.want {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: the detail view doesn't show the status %q:\n%s", c.id, c.want, plainScreen(m))
		}
	}
}
