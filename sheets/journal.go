package sheets

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"math/big"
	"strings"
	"time"

	"github.com/triage-dev/triage/model"
	"google.golang.org/api/googleapi"
	sheetsapi "google.golang.org/api/sheets/v4"
)

// This file is the journal of the write round (see doc.go): every write creates, in the same
// atomic spreadsheets.batchUpdate, a hidden sheet of its own (an entry) holding a copy of
// the header row and of every row it writes, taken just before it writes them. Whether the
// answer arrives or not, the entry says what the write hit. The entry's sheetId doubles as a
// fence for a lost answer: adding a sheet with an ID that exists is an error, so once triage
// has added it itself, a write still in flight can never land.

// journalPrefix starts the title of every entry sheet. Load and the TUI never show them: they
// are not configured tabs.
const journalPrefix = "_triage_journal_"

// journalMarker starts cell A1 of an entry (never of a fence), so a read tells them apart.
const journalMarker = "triage journal"

// journalSlack is how many columns an entry has beyond the widest tab it copies, as known
// from the last metadata: a column inserted between that and the write still fits. Someone
// inserting more makes the write fail whole (400), and it is planned again on fresh metadata.
const journalSlack = 26

// staleJournal is how old another writer's entry must be before this store deletes it. An
// Apply gives up long before (its retry budget is bounded), so an entry that old belongs to
// a writer that is gone.
const staleJournal = 10 * time.Minute

// entry is one write's journal sheet.
type entry struct {
	id    int64
	title string
	// rows is the entry's height: row 0 holds the marker, then for each tab the write
	// touches its header row, then its target rows, in the plan's order.
	rows int
	// headerRow is the entry row holding each tab's header copy, by work index.
	headerRow map[int]int
}

// newEntry names a fresh entry: the time (so another writer can tell a stale one) and
// randomness (so two writers never pick the same title or sheetId).
func newEntry(now time.Time) *entry {
	var b [5]byte
	_, _ = rand.Read(b[:])
	n, _ := rand.Int(rand.Reader, big.NewInt(1<<30))
	return &entry{
		// 1e9 and up: never one of the small IDs Sheets gives the first tabs.
		id:        1_000_000_000 + n.Int64(),
		title:     journalPrefix + now.UTC().Format("20060102T150405.000Z") + "_" + strings.ToLower(base32.StdEncoding.EncodeToString(b[:])),
		headerRow: map[int]int{},
	}
}

// journalTime reads the time out of an entry's title; ok is false for any other title.
func journalTime(title string) (time.Time, bool) {
	rest, ok := strings.CutPrefix(title, journalPrefix)
	if !ok || len(rest) < len("20060102T150405.000Z") {
		return time.Time{}, false
	}
	t, err := time.Parse("20060102T150405.000Z", rest[:len("20060102T150405.000Z")])
	return t, err == nil
}

// marker is the text of an entry's A1.
func (e *entry) marker() string {
	return journalMarker + " " + e.title + ": the rows one write of triage hit, copied just before it wrote them. triage deletes it once it has checked the write."
}

// addSheet is the request that creates the entry (or, on its own, the fence).
func (e *entry) addSheet(rows, cols int) *sheetsapi.Request {
	return &sheetsapi.Request{AddSheet: &sheetsapi.AddSheetRequest{Properties: &sheetsapi.SheetProperties{
		SheetId: e.id, Title: e.title, Hidden: true,
		GridProperties: &sheetsapi.GridProperties{RowCount: int64(max(rows, 1)), ColumnCount: int64(max(cols, 1))},
	}}}
}

// copyRows is the request that copies rows [from, from+n) of a tab, whole, into the entry at
// row at. The destination is one cell: a paste fills a larger destination by repeating the
// source, and a smaller one still gets the whole source. PASTE_VALUES: a formula is copied as its value (PASTE_NORMAL would shift its
// references, and its value in the entry would not be what the row held).
func (e *entry) copyRows(sheetID int64, from, n, at int) *sheetsapi.Request {
	return &sheetsapi.Request{CopyPaste: &sheetsapi.CopyPasteRequest{
		Source:           &sheetsapi.GridRange{SheetId: sheetID, StartRowIndex: int64(from), EndRowIndex: int64(from + n)},
		Destination:      &sheetsapi.GridRange{SheetId: e.id, StartRowIndex: int64(at), EndRowIndex: int64(at + 1), EndColumnIndex: 1},
		PasteType:        "PASTE_VALUES",
		PasteOrientation: "NORMAL",
	}}
}

// markerCell is the request that writes the marker into A1.
func (e *entry) markerCell() *sheetsapi.Request {
	m := e.marker()
	return &sheetsapi.Request{UpdateCells: &sheetsapi.UpdateCellsRequest{
		Start:  &sheetsapi.GridCoordinate{SheetId: e.id},
		Rows:   []*sheetsapi.RowData{{Values: []*sheetsapi.CellData{{UserEnteredValue: &sheetsapi.ExtendedValue{StringValue: &m}}}}},
		Fields: "userEnteredValue",
	}}
}

// copied is an entry as read back: each row's cells as text (as a read compares them) and
// as typed values (a restore puts a number back as a number).
type copied struct {
	text [][]string
	raw  [][]any
}

func (c *copied) row(r int) ([]string, []any) {
	if c == nil || r < 0 || r >= len(c.text) {
		return nil, nil
	}
	return c.text[r], c.raw[r]
}

// holdsMarker reports whether the copy is an entry (A1 holds its marker), not a fence.
func (c *copied) holdsMarker(e *entry) bool {
	t, _ := c.row(0)
	return len(t) > 0 && t[0] == e.marker()
}

// copiedFromValues is an entry read with values.get (UNFORMATTED_VALUE).
func copiedFromValues(rows [][]any) *copied {
	c := &copied{text: make([][]string, len(rows)), raw: make([][]any, len(rows))}
	for r, row := range rows {
		c.text[r] = make([]string, len(row))
		c.raw[r] = row
		for i, v := range row {
			c.text[r][i] = model.CellString(v)
		}
	}
	return c
}

// copiedFromResponse takes the entry out of a write's answer; nil if the answer lacks it.
func copiedFromResponse(resp *sheetsapi.BatchUpdateSpreadsheetResponse, e *entry) *copied {
	if resp == nil || resp.UpdatedSpreadsheet == nil {
		return nil
	}
	for _, sh := range resp.UpdatedSpreadsheet.Sheets {
		if sh == nil || sh.Properties == nil || sh.Properties.SheetId != e.id {
			continue
		}
		c := &copied{}
		for _, gd := range sh.Data {
			if gd == nil {
				continue
			}
			for j, rd := range gd.RowData {
				r := int(gd.StartRow) + j
				for len(c.text) <= r {
					c.text, c.raw = append(c.text, nil), append(c.raw, nil)
				}
				if rd == nil {
					continue
				}
				c.text[r] = make([]string, len(rd.Values))
				c.raw[r] = make([]any, len(rd.Values))
				for i, cd := range rd.Values {
					if cd != nil {
						c.text[r][i] = effectiveString(cd.EffectiveValue)
						c.raw[r][i] = effectiveRaw(cd.EffectiveValue)
					}
				}
			}
		}
		return c
	}
	return nil
}

// effectiveString is a cell's value as values.get renders it with UNFORMATTED_VALUE (what a
// read compares), so the two can be compared.
func effectiveString(v *sheetsapi.ExtendedValue) string {
	switch {
	case v == nil:
		return ""
	case v.StringValue != nil:
		return *v.StringValue
	case v.NumberValue != nil:
		return model.CellString(*v.NumberValue)
	case v.BoolValue != nil:
		return model.CellString(*v.BoolValue)
	case v.ErrorValue != nil:
		return errorText[v.ErrorValue.Type]
	}
	return ""
}

// effectiveRaw is a cell's value with its type, as values.get gives it with UNFORMATTED_VALUE.
func effectiveRaw(v *sheetsapi.ExtendedValue) any {
	switch {
	case v == nil:
		return nil
	case v.NumberValue != nil:
		return *v.NumberValue
	case v.BoolValue != nil:
		return *v.BoolValue
	}
	return effectiveString(v)
}

// errorText is how a formula error reads in a values.get answer.
var errorText = map[string]string{
	"ERROR": "#ERROR!", "NULL_VALUE": "#NULL!", "DIVIDE_BY_ZERO": "#DIV/0!", "VALUE": "#VALUE!",
	"REF": "#REF!", "NAME": "#NAME?", "NUM": "#NUM!", "N_A": "#N/A", "LOADING": "Loading...",
}

// writeResponseFields keeps a write's answer to what the check needs: every sheet's grid
// size (the entry's width for the next write) and the entry's cells.
const writeResponseFields = "updatedSpreadsheet(sheets(properties(sheetId,title,gridProperties(rowCount,columnCount)),data(startRow,rowData(values(effectiveValue)))))"

// outcomeUnknown reports whether a failed write may nevertheless have been applied: Google
// answered nothing usable (a network error, a deadline, a 5xx). A 4xx (429 included) is an
// answer: the request was refused whole.
func outcomeUnknown(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		return gerr.Code >= 500
	}
	return true
}

// fence settles a write whose answer was lost (see the file comment): it adds a sheet with the
// write's entry ID and title itself. If that works, the write did not land and never will:
// the entry is then an empty sheet to delete. If Sheets refuses it (400: the ID or title is
// taken), the sheet exists: the write landed, unless an earlier fence of ours, whose own
// answer was lost, made it. exists says which to look for: the caller reads the sheet, and
// the marker in A1 tells an entry from a fence.
func (s *Store) fence(ctx context.Context, op string, b *budget, e *entry) (exists bool, err error) {
	req := &sheetsapi.BatchUpdateSpreadsheetRequest{Requests: []*sheetsapi.Request{e.addSheet(1, 1)}}
	err = s.callWith(ctx, op, b, func(ctx context.Context) error {
		_, err := s.svc.Spreadsheets.BatchUpdate(s.id, req).Fields("spreadsheetId").Context(ctx).Do()
		var gerr *googleapi.Error
		if errors.As(err, &gerr) && gerr.Code == 400 {
			exists = true
			return nil
		}
		return err
	})
	return exists, err
}

// prune queues an entry (or fence) for deletion by the store's next write: it is checked
// and nothing needs it.
func (s *Store) prune(e *entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prunable == nil {
		s.prunable = map[int64]bool{}
	}
	s.prunable[e.id] = true
}

// prunes returns the deleteSheet requests of the queued entries (this store's, and other
// writers' stale ones seen in metadata), and their IDs.
func (s *Store) prunes() ([]*sheetsapi.Request, []int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var reqs []*sheetsapi.Request
	var ids []int64
	for id := range s.prunable {
		ids = append(ids, id)
		reqs = append(reqs, &sheetsapi.Request{DeleteSheet: &sheetsapi.DeleteSheetRequest{SheetId: id}})
	}
	return reqs, ids
}

// pruned forgets entries that were deleted (or that could not be, and are left for a person
// or another writer: a deleteSheet of a sheet someone else removed fails a whole write).
func (s *Store) pruned(ids []int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		delete(s.prunable, id)
	}
}

// Close deletes the journal entries of this store's checked writes (one request, none if
// there are none). The next write of any triage would delete them anyway (after
// staleJournal for another process's); a command that is about to exit calls it so that no
// hidden sheet outlives it.
func (s *Store) Close(ctx context.Context) error {
	reqs, ids := s.prunes()
	if len(reqs) == 0 || s.readOnly {
		return nil
	}
	const op = "delete triage's journal sheets"
	del := func(reqs []*sheetsapi.Request) error {
		return s.call(ctx, op, func(ctx context.Context) error {
			_, err := s.svc.Spreadsheets.BatchUpdate(s.id, &sheetsapi.BatchUpdateSpreadsheetRequest{Requests: reqs}).
				Fields("spreadsheetId").Context(ctx).Do()
			return err
		})
	}
	err := del(reqs)
	var serr *Error
	if errors.As(err, &serr) && serr.Code == 400 && len(reqs) > 1 {
		// One of them is gone already (someone deleted it; a write whose answer was lost
		// deleted it): the others one by one.
		err = nil
		for _, r := range reqs {
			if e := del([]*sheetsapi.Request{r}); e != nil && !(errors.As(e, &serr) && serr.Code == 400) {
				err = e
			}
		}
	} else if errors.As(err, &serr) && serr.Code == 400 {
		err = nil
	}
	s.pruned(ids)
	return err
}
