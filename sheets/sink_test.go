package sheets_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

const mAppend = "values.append"

var deadHeader = []any{"timestamp", "source", "url", "payload", "error", "attempts", "method", "key", "status", "replayed_at"}

// deadBook is a failed_calls tab with header and one existing row.
func deadBook(header []any, existing ...[]any) *emulator.Workbook {
	rows := append([][]any{header}, existing...)
	return &emulator.Workbook{SpreadsheetID: "dlq", Title: "dlq", TimeZone: "Etc/UTC",
		Sheets: []*emulator.Sheet{{Title: "failed_calls", Rows: rows}}}
}

func letter(i int) model.DeadLetter {
	return model.DeadLetter{Timestamp: time.Date(2025, 3, 1, 12, 0, i, 0, time.UTC), Source: "crm",
		URL: "https://crm.example.com/v1/contacts", Method: "POST", Payload: `{"id":"ord-` + itoa(i) + `","n":` + itoa(i) + `}`,
		Error: "503 Service Unavailable from crm (after 3 attempts)", Attempts: 3, Key: "ord-" + itoa(i)}
}

// colOf finds a header's column in emu.Cells' first row.
func colOf(rows [][]any, h string) int {
	for i, v := range rows[0] {
		if model.CellString(v) == h {
			return i
		}
	}
	return -1
}

// Any number of dead letters is one read of the header and one atomic write that appends
// them all (appendCells, text only) with a journal entry holding the header they were
// written under; a store that has never loaded asks for the tab's sheetId once. A load then
// reads each back with its key, status dead.
func TestDeadLetterBatchOneAppend(t *testing.T) {
	f := newFixture(t, deadBook(deadHeader, []any{"2025-01-01T00:00:00Z", "crm", "https://crm.example.com/v1/contacts", `{"id":"old"}`, "x", "1", "POST", "old", "dead", ""}))
	s := f.store(sheets.Options{Tabs: []model.TabConfig{deadTab("")}})
	letters := make([]model.DeadLetter, 40)
	for i := range letters {
		letters[i] = letter(i)
	}
	if err := s.DeadLetter(ctx(t), letters[:20]); err != nil {
		t.Fatal(err)
	}
	if c := f.emu.Counts(); c[mBatchUpdate] != 1 || f.total() != 3 {
		t.Errorf("first batch sent %v, want the header read, the metadata (once) and one write", c)
	}
	f.reset()
	if err := s.DeadLetter(ctx(t), letters[20:]); err != nil {
		t.Fatal(err)
	}
	if c := f.emu.Counts(); c[mBatchUpdate] != 1 || f.total() != 2 {
		t.Errorf("second batch sent %v, want 2 requests (header read, write)", c)
	}
	rows := f.emu.Cells(f.id, "failed_calls")
	if len(rows) != 42 {
		t.Fatalf("%d rows after the append, want 42 (header, old row, 40 letters)", len(rows))
	}
	if cellAt(rows, 1, colOf(rows, "key")) != "old" {
		t.Errorf("the existing row was overwritten: %v", rows[1])
	}
	wb := f.load(t, s)
	tb := wb.Tab(model.RoleDeadLetter)
	for i, l := range letters {
		r := &tb.Records[i+1]
		if r.ID != l.Key || r.KeyOrigin != model.KeyCell {
			t.Errorf("row %d: key %q from %s, want %q from the key cell", r.Row, r.ID, r.KeyOrigin, l.Key)
		}
		for fld, want := range map[model.Field]string{model.FStatus: "dead", model.FPayload: l.Payload, model.FSource: "crm",
			model.FURL: l.URL, model.FMethod: "POST", model.FAttempts: "3", model.FError: l.Error, model.FTimestamp: "2025-03-01T12:00:" + twoDigits(i) + "Z"} {
			if got := tb.Get(r, fld); got != want {
				t.Errorf("row %d %s = %q, want %q", r.Row, fld, got, want)
			}
		}
	}
}

func twoDigits(i int) string {
	if i < 10 {
		return "0" + itoa(i)
	}
	return itoa(i)
}

// Columns are found by header name: reordered, aliased, an extra column left blank, a
// missing optional column skipped.
func TestDeadLetterHeaderByName(t *testing.T) {
	header := []any{"notes", "Key", "status", "Payload", "endpoint", "source", "tries", "last_error", "failed_at"}
	f := newFixture(t, deadBook(header))
	s := f.store(sheets.Options{Tabs: []model.TabConfig{deadTab("")}})
	l := letter(7)
	if err := s.DeadLetter(ctx(t), []model.DeadLetter{l}); err != nil {
		t.Fatal(err)
	}
	rows := f.emu.Cells(f.id, "failed_calls")
	if len(rows) != 2 {
		t.Fatalf("rows: %v", rows)
	}
	want := []string{"", l.Key, "dead", l.Payload, l.URL, "crm", "3", l.Error, "2025-03-01T12:00:07Z"}
	for c, w := range want {
		if got := cellAt(rows, 1, c); got != w {
			t.Errorf("column %q = %q, want %q", header[c], got, w)
		}
	}
}

// Every write is RAW: text that looks like a formula or a number stays text.
func TestDeadLetterRAW(t *testing.T) {
	f := newFixture(t, deadBook(deadHeader))
	s := f.store(sheets.Options{Tabs: []model.TabConfig{deadTab("")}})
	l := letter(1)
	l.Payload, l.Key, l.Error = `=HYPERLINK("https://evil.example","click")`, "+0012", "=1+1"
	if err := s.DeadLetter(ctx(t), []model.DeadLetter{l}); err != nil {
		t.Fatal(err)
	}
	rows := f.emu.Cells(f.id, "failed_calls")
	for h, want := range map[string]string{"payload": l.Payload, "key": "+0012", "error": "=1+1"} {
		v := rows[1][colOf(rows, h)]
		if s, ok := v.(string); !ok || s != want {
			t.Errorf("%s stored as %#v, want the text %q", h, v, want)
		}
	}
	f.checkRAW()
	if opts := f.emu.ValueInputOptions(); len(opts) != 1 || opts[0] != "RAW" {
		t.Errorf("value input options %v, want one RAW append", opts)
	}
}

// A payload over the 50,000-character cell limit can't be stored whole, and shortening it
// would change the call: the batch is refused, naming the key, and nothing is sent. At the
// limit it is stored.
func TestDeadLetterCellLimit(t *testing.T) {
	f := newFixture(t, deadBook(deadHeader))
	s := f.store(sheets.Options{Tabs: []model.TabConfig{deadTab("")}})
	big := letter(2)
	big.Payload = `{"id":"ord-2","x":"` + strings.Repeat("é", model.MaxCellChars) + `"}`
	err := s.DeadLetter(ctx(t), []model.DeadLetter{letter(1), big})
	if err == nil || !strings.Contains(err.Error(), `"ord-2"`) || !strings.Contains(err.Error(), "50000") {
		t.Fatalf("err = %v, want a refusal naming ord-2 and the limit", err)
	}
	if n := f.total(); n != 0 {
		t.Errorf("%d requests sent for a refused batch, want none", n)
	}
	exact := letter(3)
	exact.Payload = strings.Repeat("é", model.MaxCellChars)
	if err := s.DeadLetter(ctx(t), []model.DeadLetter{exact}); err != nil {
		t.Fatalf("a payload of exactly 50,000 characters: %v", err)
	}
	if got := cellAt(f.emu.Cells(f.id, "failed_calls"), 1, 3); got != exact.Payload {
		t.Errorf("the 50,000-character payload was not stored whole (%d chars)", len([]rune(got)))
	}
}

// A tab without a key column would lose the keys that were sent: refused, nothing appended.
func TestDeadLetterNeedsKeyColumn(t *testing.T) {
	f := newFixture(t, deadBook([]any{"timestamp", "source", "url", "payload", "status"}))
	s := f.store(sheets.Options{Tabs: []model.TabConfig{deadTab("")}})
	err := s.DeadLetter(ctx(t), []model.DeadLetter{letter(1)})
	if err == nil || !strings.Contains(err.Error(), "no key column") {
		t.Fatalf("err = %v, want a refusal for the missing key column", err)
	}
	if n := f.emu.Count(mAppend); n != 0 {
		t.Errorf("%d appends, want none", n)
	}
}

// An append refused or lost is settled by its fence: one that did not land is sent again, one
// that landed is never sent twice; a read-only store sends nothing.
func TestDeadLetterRetriesAndReadOnly(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fault  emulator.Fault
		writes int
	}{
		{"503 before it landed", emulator.Fault{Method: mBatchUpdate, Status: 503}, 3},       // append, fence, append
		{"answer lost after it landed", emulator.Fault{Method: mBatchUpdate, Drop: true}, 2}, // append, fence
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, deadBook(deadHeader))
			s := f.store(sheets.Options{Tabs: []model.TabConfig{deadTab("")}})
			f.emu.InjectFault(tc.fault)
			if err := s.DeadLetter(ctx(t), []model.DeadLetter{letter(1), letter(2)}); err != nil {
				t.Fatal(err)
			}
			if got := f.emu.Count(mBatchUpdate); got != tc.writes {
				t.Errorf("spreadsheets.batchUpdate sent %d times, want %d", got, tc.writes)
			}
			rows := f.emu.Cells(f.id, "failed_calls")
			if len(rows) != 3 || cellAt(rows, 1, 7) != "ord-1" || cellAt(rows, 2, 7) != "ord-2" {
				t.Errorf("rows %v, want header + each letter once", rows)
			}
		})
	}
	f := newFixture(t, deadBook(deadHeader))
	ro := f.store(sheets.Options{Tabs: []model.TabConfig{deadTab("")}, ReadOnly: true})
	if err := ro.DeadLetter(ctx(t), []model.DeadLetter{letter(2)}); !errors.Is(err, sheets.ErrReadOnly) {
		t.Errorf("read-only: err = %v, want ErrReadOnly", err)
	}
	if n := f.total(); n != 0 {
		t.Errorf("a read-only store sent %d requests", n)
	}
}

// A column inserted between the header read and the append: the letters land one column
// off (the key under "method", "dead" under "key"). The journal entry shows the header they
// were written under, so they are cleared, found by their content, and appended again under
// the header as it is: each letter once, in its columns, nothing left under the wrong ones.
func TestDeadLetterColumnInsertedBeforeAppend(t *testing.T) {
	f := newFixture(t, deadBook(deadHeader, []any{"2025-01-01T00:00:00Z", "crm", "https://crm.example.com/v1/contacts", `{"id":"old"}`, "x", "1", "POST", "old", "dead", ""}))
	s := f.store(sheets.Options{Tabs: []model.TabConfig{deadTab("")}})
	moved := false
	f.emu.SetHook(func(r emulator.Request) {
		if r.Method == mBatchUpdate && !moved {
			moved = true
			mustDo(t, f.emu.InsertColumns(f.id, "failed_calls", 0, 1))
			mustDo(t, f.emu.SetCell(f.id, "failed_calls", 1, 0, "notes"))
		}
	})
	if err := s.DeadLetter(ctx(t), []model.DeadLetter{letter(1), letter(2)}); err != nil {
		t.Fatal(err)
	}
	f.emu.SetHook(nil)
	if n := f.emu.Count(mBatchUpdate); n < 3 {
		t.Errorf("%d writes, want the append, the clearing of the misplaced rows and the append again", n)
	}
	wb := f.load(t, s)
	tb := wb.Tab(model.RoleDeadLetter)
	var keys []string
	for _, r := range tb.Records {
		keys = append(keys, r.ID)
		if len(r.Problems) > 0 {
			t.Errorf("row %d has problems %v", r.Row, r.Problems)
		}
		if r.ID != "old" && (tb.Get(&r, model.FStatus) != "dead" || tb.Get(&r, model.FSource) != "crm") {
			t.Errorf("row %d not a whole dead letter: %v", r.Row, r.Cells)
		}
	}
	if strings.Join(keys, ",") != "old,ord-1,ord-2" {
		t.Errorf("keys %v, want old, ord-1, ord-2 once each", keys)
	}
	// The misplaced rows were cleared, not left as junk: only blank rows besides the three.
	filled := 0
	for _, row := range f.emu.Cells(f.id, "failed_calls")[1:] {
		for _, v := range row {
			if model.CellString(v) != "" {
				filled++
				break
			}
		}
	}
	if filled != 3 {
		t.Errorf("%d rows hold something, want 3", filled)
	}
}

// appendCells writes after the last row that holds anything, in any column: a tab whose column
// A is blank (no timestamps) and which has an empty row in the middle (a table break) still
// gets the letters after its last row, overwriting nothing, each under its headers.
func TestDeadLetterAfterBlankColumnAAndGap(t *testing.T) {
	old := func(key string) []any {
		return []any{"", "crm", "https://crm.example.com/v1/contacts", `{"id":"` + key + `"}`, "x", "1", "POST", key, "dead", ""}
	}
	f := newFixture(t, deadBook(deadHeader, old("a"), []any{}, old("b"), old("c")))
	s := f.store(sheets.Options{Tabs: []model.TabConfig{deadTab("")}})
	if err := s.DeadLetter(ctx(t), []model.DeadLetter{letter(1), letter(2)}); err != nil {
		t.Fatal(err)
	}
	rows := f.emu.Cells(f.id, "failed_calls")
	key := colOf(rows, "key")
	var keys []string
	for _, r := range rows[1:] {
		if len(r) > key {
			keys = append(keys, model.CellString(r[key]))
		} else {
			keys = append(keys, "")
		}
	}
	if got := strings.Join(keys, ","); got != "a,,b,c,ord-1,ord-2" {
		t.Errorf("key column %q, want a,,b,c,ord-1,ord-2", got)
	}
	if got := cellAt(rows, 5, colOf(rows, "payload")); got != letter(1).Payload {
		t.Errorf("ord-1 payload %q", got)
	}
}
