package testbed

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	sheetsapi "google.golang.org/api/sheets/v4"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets/emulator"
)

// advTab is a tab of ten rows of the test's ("t0".."t9" in column B) in workbook "adv", and
// a journal sheet of triage's beside it.
func advTab(t *testing.T) *emulator.Emulator {
	t.Helper()
	rows := [][]any{{"n", "id", "status"}}
	for i := range 10 {
		rows = append(rows, []any{float64(i), fmt.Sprintf("t%d", i), "new"})
	}
	emu := emulator.New()
	emu.AddWorkbook(&emulator.Workbook{SpreadsheetID: "adv", Title: "adv", TimeZone: "Etc/UTC", Sheets: []*emulator.Sheet{
		{Title: "Inbox", Rows: rows, RowCount: 100},
		{Title: "_triage_journal_1", Rows: [][]any{{"a", "b"}, {"1", "2"}, {"0", "3"}}},
	}})
	return emu
}

func newTestAdversary(t *testing.T, seed uint64, odds Odds) (*Adversary, *emulator.Emulator) {
	emu := advTab(t)
	a := NewAdversary(t, seed, AdversaryTab{SpreadsheetID: "adv", Tab: "Inbox", Anchor: 1,
		NewRow: func(rng *rand.Rand, n int) []any {
			return []any{float64(100 + rng.IntN(100)), fmt.Sprintf("own%d", n), nil}
		}}, odds)
	a.Attach(emu)
	return a, emu
}

// requests feeds the hook n reads and n writes, alternately.
func requests(a *Adversary, n int) {
	for range n {
		a.Hook(emulator.Request{Method: emulator.MethodValuesBatchGet})
		a.Hook(emulator.Request{Method: emulator.MethodBatchUpdate})
	}
}

// The story is the seed's: the same seed tells it again, change for change, and another
// seed tells another.
func TestAdversaryIsItsSeed(t *testing.T) {
	odds := Odds{BeforeRead: 0.5, BeforeWrite: 0.5, Sort: 2, Insert: 1, Delete: 1, InsertColumn: 1, Journal: 1, Changes: 2, InsertRows: 2}
	story := func(seed uint64) (string, [][]any) {
		a, emu := newTestAdversary(t, seed, odds)
		requests(a, 30)
		return a.Story(), emu.Cells("adv", "Inbox")
	}
	s1, c1 := story(7)
	s2, c2 := story(7)
	if s1 != s2 || !slices.EqualFunc(c1, c2, func(a, b []any) bool { return slices.Equal(a, b) }) {
		t.Errorf("seed 7 told two stories:\n%s\n---\n%s", s1, s2)
	}
	if s3, _ := story(8); s3 == s1 {
		t.Errorf("seeds 7 and 8 told the same story:\n%s", s1)
	}
	if n := strings.Count(s1, "\n"); n < 10 {
		t.Errorf("30 reads and writes at even odds, %d lines of story:\n%s", n, s1)
	}
}

// Every kind of change happens, each is logged and counted, and without DeleteAny only rows
// of its own are deleted: the test's rows are all on the sheet, as they were, whatever moved.
func TestAdversaryChanges(t *testing.T) {
	a, emu := newTestAdversary(t, 1, Odds{BeforeRead: 1, BeforeWrite: 1, BeforeOther: 1, Sort: 1, Insert: 1, Delete: 1, InsertColumn: 1, Journal: 1, Changes: 2, InsertRows: 2})
	requests(a, 40)
	a.Hook(emulator.Request{Method: "spreadsheets.get"})
	c := a.Counts()
	for _, k := range []string{"sort", "insert", "delete", "insert-column", "journal:sort", "journal:rename"} {
		if c[k] == 0 {
			t.Errorf("no %s in 81 moves: %v", k, c)
		}
	}
	if n := strings.Count(a.Story(), ": sort by "); n != c["sort"] {
		t.Errorf("%d sorts counted, %d in the story", c["sort"], n)
	}
	cells := emu.Cells("adv", "Inbox")
	header := make([]string, len(cells[0]))
	for i, h := range cells[0] {
		header[i] = model.CellString(h)
	}
	idCol := slices.Index(header, "id")
	seen := map[string]int{}
	for _, r := range cells[1:] {
		if idCol < len(r) {
			seen[model.CellString(r[idCol])]++
		}
	}
	for i := range 10 {
		if id := fmt.Sprintf("t%d", i); seen[id] != 1 {
			t.Errorf("row %s is on the sheet %d times; the adversary deletes only its own rows", id, seen[id])
		}
	}
	own, gone, made := a.Own(), a.Gone(), a.Made()
	if len(own)+len(gone) != len(made) || len(gone) != len(a.Deleted()) {
		t.Errorf("own %d + gone %d != made %d, or deleted %d", len(own), len(gone), len(made), len(a.Deleted()))
	}
	for k := range own {
		if seen[k] != 1 {
			t.Errorf("its row %s is on the sheet %d times", k, seen[k])
		}
	}
}

// The bounds: no move before the quiet reads, before more writes of a round than
// WritesPerRound, or before more writes in a row than MovedWritesInARow.
func TestAdversaryBounds(t *testing.T) {
	a, _ := newTestAdversary(t, 2, Odds{QuietReads: 3, BeforeRead: 1, Sort: 1})
	for range 3 {
		a.Hook(emulator.Request{Method: emulator.MethodValuesBatchGet})
	}
	if c := a.Counts()["sort"]; c != 0 {
		t.Errorf("%d moves before the quiet reads", c)
	}
	a.Hook(emulator.Request{Method: emulator.MethodValuesBatchGet})
	if c := a.Counts()["sort"]; c != 1 {
		t.Errorf("%d moves before the first read after the quiet ones, want 1", c)
	}

	a, _ = newTestAdversary(t, 2, Odds{BeforeWrite: 1, WritesPerRound: 2, Sort: 1})
	for range 3 {
		a.StartRound()
		for range 5 {
			a.Hook(emulator.Request{Method: emulator.MethodBatchUpdate})
		}
	}
	if c := a.Counts()["sort"]; c != 6 {
		t.Errorf("%d moves in 3 rounds of 5 writes, bounded to 2 a round: want 6", c)
	}

	a, _ = newTestAdversary(t, 2, Odds{BeforeWrite: 1, MovedWritesInARow: 2, Sort: 1})
	for range 9 {
		a.Hook(emulator.Request{Method: emulator.MethodBatchUpdate})
	}
	if c := a.Counts()["sort"]; c != 6 {
		t.Errorf("%d moves before 9 writes, at most 2 in a row: want 6", c)
	}
}

// DeleteAny deletes the test's rows too, never the last one, and says what triage had
// performed before each.
func TestAdversaryDeletesAny(t *testing.T) {
	a, emu := newTestAdversary(t, 3, Odds{BeforeRead: 1, Delete: 1, DeleteAny: true})
	for range 20 {
		a.Hook(emulator.Request{Method: emulator.MethodValuesBatchGet})
	}
	if n := len(emu.Cells("adv", "Inbox")); n != 2 {
		t.Errorf("%d rows left, want the header and one row", n)
	}
	d := a.Deleted()
	if len(d) != 9 {
		t.Fatalf("%d rows deleted, want 9: %v", len(d), d)
	}
	reads := []int{}
	for _, done := range d {
		reads = append(reads, done.Reads)
	}
	slices.Sort(reads)
	if !slices.Equal(reads, []int{0, 1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Errorf("reads performed before each delete: %v", reads)
	}
}

// Lost answers and a crash over real HTTP: the write is applied and the client sees an
// error; after the crash, kill is called and every request is refused.
func TestAdversaryLosesAnswersAndCrashes(t *testing.T) {
	sh := NewSheets(t, &emulator.Workbook{SpreadsheetID: "adv", Title: "adv", TimeZone: "Etc/UTC",
		Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: [][]any{{"id"}, {"a"}}}}})
	a := NewAdversary(t, 4, AdversaryTab{SpreadsheetID: "adv", Tab: "Inbox", NewRow: func(*rand.Rand, int) []any { return []any{"x"} }}, Odds{})
	a.Attach(sh.Emu)
	a.LoseAnswer(1, LostDrop)
	a.LoseAnswer(2, Lost503After)
	a.LoseAnswer(3, Refused503)
	killed := 0
	a.CrashAfterWrite(4, func() { killed++ })
	sh.Emu.SetHook(a.Hook)
	addSheet := func(title string) error {
		_, err := sh.Service.Spreadsheets.BatchUpdate("adv", &sheetsapi.BatchUpdateSpreadsheetRequest{Requests: []*sheetsapi.Request{{AddSheet: &sheetsapi.AddSheetRequest{Properties: &sheetsapi.SheetProperties{Title: title}}}}}).Do()
		return err
	}
	for i, want := range []bool{true, true, false, true} {
		title := fmt.Sprintf("s%d", i+1)
		if err := addSheet(title); err == nil {
			t.Errorf("write %d: answered, want its answer lost", i+1)
		}
		if got := hasSheet(sh.Emu, title); got != want {
			t.Errorf("write %d: applied %v, want %v", i+1, got, want)
		}
	}
	if killed != 0 {
		t.Errorf("killed %d times before any request after the crash", killed)
	}
	if err := addSheet("s5"); err == nil || killed != 1 || hasSheet(sh.Emu, "s5") {
		t.Errorf("a request after the crash: err %v, killed %d, applied %v", err, killed, hasSheet(sh.Emu, "s5"))
	}
	c := a.Counts()
	if c["lost:drop"] != 1 || c["lost:503-after"] != 1 || c["lost:503"] != 1 || c["crash"] != 1 {
		t.Errorf("counts %v", c)
	}
}

func hasSheet(emu *emulator.Emulator, title string) bool {
	return slices.ContainsFunc(emu.Workbook("adv").Sheets, func(s *emulator.Sheet) bool { return s.Title == title })
}
