package testbed

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets/emulator"
)

// Lost is how the answer of one of triage's writes is lost.
type Lost string

// The ways a write's answer is lost. The first two are a write Google applied although the
// client never learned it (an unknown outcome the store must settle from its journal); the
// third is a plain retryable failure, the write not applied.
const (
	LostDrop     Lost = "drop"      // applied, the connection dropped unanswered
	Lost503After Lost = "503-after" // applied, answered 503
	Refused503   Lost = "503"       // answered 503, not applied
)

// Odds are how often an Adversary acts, and what it does when it does.
type Odds struct {
	// BeforeRead, BeforeWrite and BeforeOther are the chances (0 to 1) that it moves rows
	// before a values.batchGet, before a spreadsheets.batchUpdate, and before any other
	// request.
	BeforeRead, BeforeWrite, BeforeOther float64
	// QuietReads is how many of the first reads it never moves before (a command's load,
	// whose rows are what the test compares with).
	QuietReads int
	// WritesPerRound bounds the writes of one round (from one StartRound to the next) it
	// moves before, 0 none: the store locates an edit again for a few write rounds only.
	WritesPerRound int
	// MovedWritesInARow bounds how many writes in a row it moves before, 0 none.
	MovedWritesInARow int
	// Sort, Insert, Delete, InsertColumn and Journal weigh the kinds of change of one move:
	// sort the tab by a random column (either way), insert rows of its own, delete a row,
	// insert a column, and sort or rename one of triage's journal sheets.
	Sort, Insert, Delete, InsertColumn, Journal int
	// Changes is the most changes in one move (1 to Changes, each drawn by the weights); 0
	// means 1.
	Changes int
	// InsertRows is the most rows in one insert (1 to InsertRows); 0 means 1.
	InsertRows int
	// StormWrites inserts one row of its own before every write, whatever the odds.
	StormWrites bool
	// DeleteAny deletes any data row (a command's targets included, never the last one);
	// without it, only rows of its own.
	DeleteAny bool
}

// Adversary is the other editor of one test: a person at the same tab in the Sheets UI who
// sorts it, inserts and deletes rows, inserts columns, and tampers with triage's journal
// sheets between triage's requests (the emulator's hook, before each request is performed),
// while some of triage's writes lose their answer and a process may die after one of them.
// It never edits a cell that triage might have written.
//
// Its choices are drawn from its own seeded generator only, and every one is logged: a failing
// test prints the story (Story), and the same seed tells it again. It records what the
// tests' checks need: the rows it made (Own, Gone, Made), the rows it deleted and when
// (Deleted), and how often it did each thing (Counts).
type Adversary struct {
	t       testing.TB
	odds    Odds
	id, tab string
	anchor  int
	newRow  func(rng *rand.Rand, n int) []any

	mu  sync.Mutex
	emu *emulator.Emulator
	rng *rand.Rand
	// requests, reads and writes count the requests the hook saw; done is what had been
	// performed before the request the hook runs for.
	requests, reads, writes int
	done                    Done
	roundWrites, inARow     int
	lost                    map[int]Lost
	crashAt                 int
	crashed                 bool
	kill                    func()
	journal                 string
	header                  []string // the tab's header as NewRow lays rows out, by name
	renamed                 []string
	own, gone, made         map[string][]any
	nMade, nColumns         int
	deleted                 map[string]Done
	log                     []string
	counts                  map[string]int
}

// Done counts what triage had sent and had performed before one of the adversary's changes.
type Done struct{ Requests, Reads, Writes int }

// AdversaryTab is the tab an Adversary works on and how it makes rows of its own.
type AdversaryTab struct {
	// SpreadsheetID and Tab name the tab.
	SpreadsheetID, Tab string
	// Anchor is the column that names a row and that triage never writes (an ID, a
	// payload): how the adversary tells its rows, and the rows it deletes, apart.
	Anchor int
	// NewRow makes a row of its own, laid out as the tab's first header (columns the
	// adversary inserts later are found by name, and left blank in its rows): n counts the
	// rows made (1 for the first), rng is the adversary's generator. The row's anchor must be
	// new.
	NewRow func(rng *rand.Rand, n int) []any
}

// NewAdversary is the other editor of tab, drawing from PCG(seed, its own stream). Attach
// it to the emulator and set Hook as the emulator's hook; when the test fails, it logs its
// story.
func NewAdversary(t testing.TB, seed uint64, tab AdversaryTab, odds Odds) *Adversary {
	a := &Adversary{t: t, odds: odds, id: tab.SpreadsheetID, tab: tab.Tab, anchor: tab.Anchor, newRow: tab.NewRow,
		rng: rand.New(rand.NewPCG(seed, 0xad5e)), lost: map[int]Lost{}, journal: "_triage_journal_",
		own: map[string][]any{}, gone: map[string][]any{}, made: map[string][]any{}, deleted: map[string]Done{}, counts: map[string]int{}}
	a.log = append(a.log, fmt.Sprintf("the other editor of %s, seed %d:", tab.Tab, seed))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("step by step:\n%s", a.Story())
		}
	})
	return a
}

// Attach points the adversary at the emulator that holds its tab (rows it made before, for
// the tab's first grid, need none).
func (a *Adversary) Attach(emu *emulator.Emulator) {
	a.mu.Lock()
	a.emu = emu
	a.mu.Unlock()
}

// LoseAnswer loses the answer of the nth spreadsheets.batchUpdate the hook sees (1 for the
// first), as how says.
func (a *Adversary) LoseAnswer(n int, how Lost) {
	a.mu.Lock()
	a.lost[n] = how
	a.mu.Unlock()
	a.Logf("  the answer of batchUpdate #%d will be lost: %s", n, how)
}

// CrashAfterWrite kills the writing process after its nth spreadsheets.batchUpdate: that write
// is applied and its answer lost, kill is called (it ends the process's context), and every
// later request is refused with a 503, as nothing a dead process sends arrives.
func (a *Adversary) CrashAfterWrite(n int, kill func()) {
	a.mu.Lock()
	a.crashAt, a.kill = n, kill
	a.mu.Unlock()
	a.Logf("  the process will die after batchUpdate #%d", n)
}

// StartRound starts a round of writes (an Apply) for Odds.WritesPerRound.
func (a *Adversary) StartRound() {
	a.mu.Lock()
	a.roundWrites = 0
	a.mu.Unlock()
}

// MakeRow is a fresh row of its own (NewRow), remembered as on the sheet: for a tab's first
// grid.
func (a *Adversary) MakeRow() []any {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.makeRow()
}

func (a *Adversary) makeRow() []any {
	a.nMade++
	row := a.newRow(a.rng, a.nMade)
	k := a.anchorOf(row)
	a.own[k], a.made[k] = slices.Clone(row), slices.Clone(row)
	return row
}

// anchorOf is the anchor of a row as made (NewRow's layout).
func (a *Adversary) anchorOf(row []any) string {
	if a.anchor < len(row) {
		return model.CellString(row[a.anchor])
	}
	return ""
}

// cells reads the tab; the first read learns its header, NewRow's layout.
func (a *Adversary) cells() [][]any {
	cells := a.emu.Cells(a.id, a.tab)
	if a.header == nil && len(cells) > 0 {
		for _, h := range cells[0] {
			a.header = append(a.header, model.CellString(h))
		}
	}
	return cells
}

// column is where the column NewRow lays out at c is in the tab's header now (-1: gone).
func (a *Adversary) column(now []any, c int) int {
	if c >= len(a.header) {
		return -1
	}
	return slices.IndexFunc(now, func(h any) bool { return model.CellString(h) == a.header[c] })
}

// anchorOn is the anchor of a row on the sheet, under the header now.
func (a *Adversary) anchorOn(now, row []any) string {
	if c := a.column(now, a.anchor); c >= 0 && c < len(row) {
		return model.CellString(row[c])
	}
	return ""
}

// layOut is a row as made, laid out under the header now.
func (a *Adversary) layOut(now, row []any) []any {
	out := make([]any, len(now))
	for c, v := range row {
		if at := a.column(now, c); at >= 0 {
			out[at] = v
		}
	}
	return out
}

// Hook is the emulator's hook: before each request, the lost answer or the crash planned for
// it, the storm's insert, and by the odds one move.
func (a *Adversary) Hook(r emulator.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests++
	what := fmt.Sprintf("before request %d (%s", a.requests, r.Method)
	if a.crashed {
		// The process is gone: nothing it sends arrives.
		a.kill()
		a.emu.InjectFault(emulator.Fault{Method: r.Method, Status: http.StatusServiceUnavailable})
		a.log = append(a.log, "  "+what+"): refused, its process is dead")
		return
	}
	var move bool
	switch r.Method {
	case emulator.MethodValuesBatchGet:
		a.reads++
		move = a.reads > a.odds.QuietReads && a.chance(a.odds.BeforeRead)
	case emulator.MethodBatchUpdate:
		a.writes++
		a.roundWrites++
		what += fmt.Sprintf(" #%d", a.writes)
		a.loseAnswer()
		if (a.odds.WritesPerRound == 0 || a.roundWrites <= a.odds.WritesPerRound) &&
			(a.odds.MovedWritesInARow == 0 || a.inARow < a.odds.MovedWritesInARow) && a.chance(a.odds.BeforeWrite) {
			move = true
			a.inARow++
		} else {
			a.inARow = 0
		}
	default:
		move = a.chance(a.odds.BeforeOther)
	}
	what += ")"
	if a.odds.StormWrites && r.Method == emulator.MethodBatchUpdate {
		a.insert(what+", storm", 1)
	}
	if move {
		a.move(what)
	}
	a.done.Requests++
	switch r.Method {
	case emulator.MethodValuesBatchGet:
		a.done.Reads++
	case emulator.MethodBatchUpdate:
		a.done.Writes++
	}
}

// loseAnswer injects the fault planned for the current write; call with a.mu held.
func (a *Adversary) loseAnswer() {
	if a.writes == a.crashAt {
		a.emu.InjectFault(emulator.Fault{Method: emulator.MethodBatchUpdate, Drop: true})
		a.crashed = true
		a.counts["crash"]++
		a.log = append(a.log, fmt.Sprintf("  batchUpdate #%d: applied, its answer lost, and its process dies", a.writes))
		return
	}
	switch a.lost[a.writes] {
	case LostDrop:
		a.emu.InjectFault(emulator.Fault{Method: emulator.MethodBatchUpdate, Drop: true})
		a.log = append(a.log, fmt.Sprintf("  batchUpdate #%d: applied, its answer dropped", a.writes))
	case Lost503After:
		a.emu.InjectFault(emulator.Fault{Method: emulator.MethodBatchUpdate, Status: http.StatusServiceUnavailable, After: true})
		a.log = append(a.log, fmt.Sprintf("  batchUpdate #%d: applied, answered 503", a.writes))
	case Refused503:
		a.emu.InjectFault(emulator.Fault{Method: emulator.MethodBatchUpdate, Status: http.StatusServiceUnavailable})
		a.log = append(a.log, fmt.Sprintf("  batchUpdate #%d: not applied, answered 503", a.writes))
	default:
		return
	}
	a.counts["lost:"+string(a.lost[a.writes])]++
}

// chance draws whether something with chance p happens; call with a.mu held.
func (a *Adversary) chance(p float64) bool { return p > 0 && a.rng.Float64() < p }

// Move is one move outside any request (between a load and a run, say).
func (a *Adversary) Move(what string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.move(what)
}

// move is 1 to Odds.Changes changes; call with a.mu held.
func (a *Adversary) move(what string) {
	o := a.odds
	total := o.Sort + o.Insert + o.Delete + o.InsertColumn + o.Journal
	if total == 0 {
		return
	}
	for range 1 + a.rng.IntN(max(o.Changes, 1)) {
		switch x := a.rng.IntN(total); {
		case x < o.Sort:
			a.sort(what)
		case x < o.Sort+o.Insert:
			a.insert(what, 1+a.rng.IntN(max(o.InsertRows, 1)))
		case x < o.Sort+o.Insert+o.Delete:
			a.delete(what)
		case x < o.Sort+o.Insert+o.Delete+o.InsertColumn:
			a.insertColumn(what)
		default:
			a.tamper(what)
		}
	}
}

func (a *Adversary) must(err error) bool {
	if err != nil {
		a.t.Error(err)
		a.log = append(a.log, "  error: "+err.Error())
	}
	return err == nil
}

func (a *Adversary) sort(what string) {
	cells := a.cells()
	col, desc := a.rng.IntN(len(cells[0])), a.rng.IntN(2) == 0
	if !a.must(a.emu.SortRows(a.id, a.tab, col, desc)) {
		return
	}
	dir := "ascending"
	if desc {
		dir = "descending"
	}
	a.log = append(a.log, fmt.Sprintf("  %s: sort by %s %s", what, model.CellString(cells[0][col]), dir))
	a.counts["sort"]++
}

// insert puts n rows of its own at a random place, after the last row included.
func (a *Adversary) insert(what string, n int) {
	cells := a.cells()
	at := 2 + a.rng.IntN(len(cells))
	var add [][]any
	var names []string
	for range n {
		row := a.makeRow()
		add = append(add, a.layOut(cells[0], row))
		names = append(names, a.anchorOf(row))
	}
	if !a.must(a.emu.InsertRows(a.id, a.tab, at, add)) {
		return
	}
	a.log = append(a.log, fmt.Sprintf("  %s: insert at row %d %s", what, at, strings.Join(names, " ")))
	a.counts["insert"]++
}

// delete deletes a row of its own, or with DeleteAny any data row but the last one left.
func (a *Adversary) delete(what string) {
	cells := a.cells()
	var rows []int
	for r := 1; r < len(cells); r++ {
		if _, ok := a.own[a.anchorOn(cells[0], cells[r])]; ok || (a.odds.DeleteAny && len(cells) > 2) {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return
	}
	r := rows[a.rng.IntN(len(rows))]
	k := a.anchorOn(cells[0], cells[r])
	if !a.must(a.emu.DeleteRow(a.id, a.tab, r+1)) {
		return
	}
	if row, ok := a.own[k]; ok {
		a.gone[k] = row
		delete(a.own, k)
	}
	a.deleted[k] = a.done
	a.log = append(a.log, fmt.Sprintf("  %s: delete row %d %s", what, r+1, k))
	a.counts["delete"]++
}

// insertColumn inserts a column at a random place, headed by a name of its own.
func (a *Adversary) insertColumn(what string) {
	at := a.rng.IntN(len(a.cells()[0]) + 1)
	a.nColumns++
	name := fmt.Sprintf("extra%d", a.nColumns)
	if !a.must(a.emu.InsertColumns(a.id, a.tab, at, 1)) || !a.must(a.emu.SetCell(a.id, a.tab, 1, at, name)) {
		return
	}
	a.log = append(a.log, fmt.Sprintf("  %s: insert column %s at column %d", what, name, at+1))
	a.counts["insert-column"]++
}

// tamper sorts or renames one of triage's journal sheets, as a "sort every tab" script or
// someone who showed the hidden sheets would: neither may cost triage its proof.
func (a *Adversary) tamper(what string) {
	var journals []string
	for _, sh := range a.emu.Workbook(a.id).Sheets {
		if strings.HasPrefix(sh.Title, a.journal) || slices.Contains(a.renamed, sh.Title) {
			journals = append(journals, sh.Title)
		}
	}
	if len(journals) == 0 {
		return
	}
	j := journals[a.rng.IntN(len(journals))]
	if a.rng.IntN(2) == 0 {
		name := fmt.Sprintf("renamed journal %d", len(a.renamed)+1)
		if !a.must(a.emu.RenameSheet(a.id, j, name)) {
			return
		}
		a.renamed = append(a.renamed, name)
		a.log = append(a.log, fmt.Sprintf("  %s: rename the journal %q to %q", what, j, name))
		a.counts["journal:rename"]++
		return
	}
	width := 1
	for _, row := range a.emu.Cells(a.id, j) {
		width = max(width, len(row))
	}
	col, desc := a.rng.IntN(width), a.rng.IntN(2) == 0
	if !a.must(a.emu.SortRows(a.id, j, col, desc)) {
		return
	}
	a.log = append(a.log, fmt.Sprintf("  %s: sort the journal %q by column %d (descending %v)", what, j, col+1, desc))
	a.counts["journal:sort"]++
}

// Logf adds a line of the test's own to the story (an Apply's outcome, a check's finding).
func (a *Adversary) Logf(format string, args ...any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.log = append(a.log, fmt.Sprintf(format, args...))
}

// Log is the story so far, one line per entry.
func (a *Adversary) Log() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.log)
}

// Story is the story so far, as text.
func (a *Adversary) Story() string { return strings.Join(a.Log(), "\n") }

// Counts is how often it did each thing: "sort", "insert", "delete", "insert-column",
// "journal:rename", "journal:sort", "lost:" and a Lost, "crash".
func (a *Adversary) Counts() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return maps.Clone(a.counts)
}

// Own is its rows still on the sheet, by anchor, as it made them.
func (a *Adversary) Own() map[string][]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	return maps.Clone(a.own)
}

// Gone is the rows of its own it deleted, by anchor, as it made them.
func (a *Adversary) Gone() map[string][]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	return maps.Clone(a.gone)
}

// Made is every row it made, deleted or not, by anchor.
func (a *Adversary) Made() map[string][]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	return maps.Clone(a.made)
}

// Deleted is every row it deleted (its own and, with DeleteAny, others), by anchor, each with
// what triage had performed before.
func (a *Adversary) Deleted() map[string]Done {
	a.mu.Lock()
	defer a.mu.Unlock()
	return maps.Clone(a.deleted)
}

// Writes is how many spreadsheets.batchUpdate requests the hook has seen.
func (a *Adversary) Writes() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.writes
}
