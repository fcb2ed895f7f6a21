package sheets

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/triage-dev/triage/model"
	"google.golang.org/api/googleapi"
	sheetsapi "google.golang.org/api/sheets/v4"
)

// This file is the journal of the write round (see doc.go): every write creates, in the same
// atomic spreadsheets.batchUpdate, a hidden sheet of its own (an entry) holding a copy of the
// header row and of every row it writes, taken just before it writes them, and beside them
// the write's plan: the writer and its lease (lease.go), every target (its tab, its row as
// read, the cells written), and the values of earlier rounds still owed back. Whether the
// answer arrives or not, and whether the writer lives or not, the entry says what the write
// hit and what to put back: any triage settles it exactly as its writer would (recover.go).
//
// The entry is written so that touching it by hand is either harmless or seen:
//   - Each row carries its tag in column A ("copy 3", and "check 3" for the same row's second
//     copy), so sorting the sheet loses nothing;
//   - every row is copied twice, so a copy edited by hand disagrees with its check copy;
//   - the entry is found by its sheetId, so renaming it loses nothing;
//   - the fence is developer metadata (not shown or editable in the Sheets UI) that names the
//     entry and the plan's digest: a deleted entry, or an edited plan, is seen, and reported
//     as damage (the rows it may have changed can't be checked), never taken for a write that
//     did not land.

// journalPrefix starts the title of every entry sheet. Load and the TUI never show them: they
// are not configured tabs.
const journalPrefix = "_triage_journal_"

// journalMarker starts cell A1 of an entry, so a read tells it from any other sheet.
const journalMarker = "triage journal"

// journalVersion is the entry layout written here (entries without a plan are older
// triage's: they are deleted once stale, as that version did).
const journalVersion = 2

// journalMetaKey is the developer metadata key of a journal entry or a fence.
const journalMetaKey = "triage.journal"

// journalSlack is how many columns an entry has beyond the widest tab it copies, as known
// from the last metadata: a column inserted between that and the write still fits. Someone
// inserting more makes the write fail whole (400), and it is planned again on fresh metadata.
const journalSlack = 26

// staleJournal is how old an entry of an older triage (one without a plan, which can't be
// settled by anyone but its writer) must be before this store deletes it.
const staleJournal = 10 * time.Minute

// entry is one write's journal sheet, and its developer metadata (the fence, see fence).
type entry struct {
	id    int64
	title string
	// rows is the height of the copies' block: row 0 holds the marker and the plan, then for
	// each tab the write touches its header row, then its target rows, in the plan's order.
	// The sheet is twice as tall, less one: every copy is made twice (see the file comment).
	rows int
	// headerRow is the entry row holding each tab's header copy, by work index.
	headerRow map[int]int
	// plan is what the entry says of its write, written beside the marker so that any triage
	// can settle the write as its writer would.
	plan *journalPlan
}

// newEntry names a fresh entry: the time (for a person looking at the hidden sheets) and
// randomness (so two writers never pick the same title, sheetId or metadataId).
func newEntry(now time.Time) *entry {
	var b [5]byte
	_, _ = rand.Read(b[:])
	n, _ := rand.Int(rand.Reader, big.NewInt(1<<30))
	return &entry{
		// 1e9 and up: never one of the small IDs Sheets gives the first tabs; below 2^31, as
		// a metadataId must be.
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

// marker is the text of an entry's marker cell.
func (e *entry) marker() string { return markerFor(e.title) }

func markerFor(title string) string {
	return journalMarker + " " + title + ": the rows one write of triage hit, copied just before it wrote them. triage deletes it once it has checked the write."
}

// addSheet is the request that creates the entry.
func (e *entry) addSheet(rows, cols int) *sheetsapi.Request {
	return &sheetsapi.Request{AddSheet: &sheetsapi.AddSheetRequest{Properties: &sheetsapi.SheetProperties{
		SheetId: e.id, Title: e.title, Hidden: true,
		GridProperties: &sheetsapi.GridProperties{RowCount: int64(max(rows, 1)), ColumnCount: int64(max(cols, 1))},
	}}}
}

// copyRows is the request that copies rows [from, from+n) of a tab, whole, into the entry at
// row at, from column B (column A holds each row's tag). The destination is one cell: a paste
// fills a larger destination by repeating the source, and a smaller one still gets the whole
// source. PASTE_VALUES: a formula is copied as its value (PASTE_NORMAL would shift its
// references, and its value in the entry would not be what the row held).
func (e *entry) copyRows(sheetID int64, from, n, at int) *sheetsapi.Request {
	return &sheetsapi.Request{CopyPaste: &sheetsapi.CopyPasteRequest{
		Source:           &sheetsapi.GridRange{SheetId: sheetID, StartRowIndex: int64(from), EndRowIndex: int64(from + n)},
		Destination:      &sheetsapi.GridRange{SheetId: e.id, StartRowIndex: int64(at), EndRowIndex: int64(at + 1), StartColumnIndex: 1, EndColumnIndex: 2},
		PasteType:        "PASTE_VALUES",
		PasteOrientation: "NORMAL",
	}}
}

// planChunk is how many characters of the plan one cell holds (Google's limit is 50,000).
const planChunk = 40000

// Tags of an entry's rows (column A): a copy and its check copy name the same row.
const (
	copyTag  = "copy "
	checkTag = "check "
)

// requests lays the entry out, to go first in the write's batch: the sheet (hidden), the
// marker and the plan in row 0, a tag in column A of every other row, each copy twice (the
// second block, from row e.rows on, repeats the first: a copy edited by hand is caught), and
// the developer metadata that fences the write (see fence). copies are the copyRows
// requests of the first block; cols the widest tab's width plus the slack.
func (e *entry) requests(cols int, copies []*sheetsapi.Request, meta journalMeta) []*sheetsapi.Request {
	text := func(v string) *sheetsapi.CellData {
		return &sheetsapi.CellData{UserEnteredValue: &sheetsapi.ExtendedValue{StringValue: &v}}
	}
	planText := e.planText()
	meta.V, meta.Sheet, meta.Title, meta.Plan = journalVersion, e.id, e.title, digest(planText)
	head := []*sheetsapi.CellData{text(e.marker())}
	for len(planText) > 0 {
		n := min(planChunk, len(planText))
		for n < len(planText) && !utf8.RuneStart(planText[n]) {
			n--
		}
		head = append(head, text(planText[:n]))
		planText = planText[n:]
	}
	width := max(cols+1, len(head))
	reqs := []*sheetsapi.Request{e.addSheet(2*e.rows-1, width),
		{UpdateCells: &sheetsapi.UpdateCellsRequest{Start: &sheetsapi.GridCoordinate{SheetId: e.id},
			Rows: []*sheetsapi.RowData{{Values: head}}, Fields: "userEnteredValue"}}}
	if e.rows > 1 {
		tags := make([]*sheetsapi.RowData, 0, 2*(e.rows-1))
		for _, tag := range []string{copyTag, checkTag} {
			for r := 1; r < e.rows; r++ {
				tags = append(tags, &sheetsapi.RowData{Values: []*sheetsapi.CellData{text(tag + strconv.Itoa(r))}})
			}
		}
		reqs = append(reqs, &sheetsapi.Request{UpdateCells: &sheetsapi.UpdateCellsRequest{
			Start: &sheetsapi.GridCoordinate{SheetId: e.id, RowIndex: 1}, Rows: tags, Fields: "userEnteredValue"}})
	}
	reqs = append(reqs, copies...)
	if e.rows > 1 {
		// The check copies: the block of first copies, copied within the entry in one request
		// (after them in the batch, so it repeats exactly what they copied).
		reqs = append(reqs, &sheetsapi.Request{CopyPaste: &sheetsapi.CopyPasteRequest{
			Source:           &sheetsapi.GridRange{SheetId: e.id, StartRowIndex: 1, EndRowIndex: int64(e.rows), StartColumnIndex: 1, EndColumnIndex: int64(width)},
			Destination:      &sheetsapi.GridRange{SheetId: e.id, StartRowIndex: int64(e.rows), EndRowIndex: int64(e.rows + 1), StartColumnIndex: 1, EndColumnIndex: 2},
			PasteType:        "PASTE_VALUES",
			PasteOrientation: "NORMAL",
		}})
	}
	return append(reqs, meta.create(e.id))
}

// responseRange is the part of the entry a write's answer carries: the marker and the first
// copy of every row (the check copies are read only when another read settles the write).
func (e *entry) responseRange() string {
	return quoteTab(e.title) + "!1:" + strconv.Itoa(e.rows)
}

// journalPlan is what an entry says of its write, in row 0 beside the marker (JSON, cut into
// cells of planChunk characters).
type journalPlan struct {
	V      int       `json:"v"`
	Writer writerID  `json:"writer"`
	Lease  time.Time `json:"lease"`
	Op     string    `json:"op"`
	// Rows is the height of the entry's block of copies (entry.rows).
	Rows int       `json:"rows"`
	Tabs []planTab `json:"tabs"`
	// Targets are the rows the write hit, as planned; Owed the values of earlier rounds of the
	// same call still owed back when it was sent (what a target's Restores index).
	Targets []planTarget  `json:"targets,omitempty"`
	Owed    []planRestore `json:"owed,omitempty"`
}

// planTab is a tab of a write: its name, its sheetId then, the entry row of its header copy,
// and the digest of its header row as read.
type planTab struct {
	Name      string `json:"name"`
	Sheet     int64  `json:"sheet"`
	HeaderRow int    `json:"headerRow"`
	Header    string `json:"header"`
}

// planTarget is one target (apply.go's target): the digest of its row as read stands for the
// row itself, which is all the check compares it with.
type planTarget struct {
	Tab      int        `json:"tab"`
	Row      int        `json:"row"`
	ID       string     `json:"id,omitempty"`
	EntryRow int        `json:"entryRow"`
	Read     string     `json:"read"`
	Cells    []planCell `json:"cells"`
	Restores []int      `json:"restores,omitempty"`
}

type planCell struct {
	Col   int         `json:"col"`
	Field model.Field `json:"field,omitempty"`
	Value string      `json:"value"`
	Raw   any         `json:"raw,omitempty"`
}

// planRestore is a restore (plan.go) as the entry carries it.
type planRestore struct {
	Tab   int                 `json:"tab"`
	At    map[string]string   `json:"at"`
	Cols  []string            `json:"cols"`
	Cells map[string]planOwed `json:"cells"`
	Ident string              `json:"ident,omitempty"`
	Row   int                 `json:"row"`
	// From names the writer whose value it is, when this write took it over from another
	// triage's unfinished write (recover.go).
	From string `json:"from,omitempty"`
}

type planOwed struct {
	Header   string `json:"header"`
	Ours     string `json:"ours"`
	Before   string `json:"before"`
	OursKind string `json:"oursKind,omitempty"`
	Raw      any    `json:"raw,omitempty"`
}

func (e *entry) planText() string {
	if e.plan == nil {
		return ""
	}
	b, _ := json.Marshal(e.plan)
	return string(b)
}

// digest is a short fingerprint of a text (the plan) or a row (rowDigest).
func digest(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:16])
}

// rowDigest fingerprints a row's cells as text, trailing empty cells left out (Sheets leaves
// them out of a read): two rows have the same digest exactly when sameCells holds.
func rowDigest(cells []string) string {
	n := len(cells)
	for n > 0 && cells[n-1] == "" {
		n--
	}
	b, _ := json.Marshal(cells[:n])
	return digest(string(b))
}

// journalMeta is the developer metadata of an entry (or, with Fence, of a fence): not
// editable in the Sheets UI, it names the entry sheet (by ID: a renamed entry is still
// found) and the digest of its plan, and carries the lease.
type journalMeta struct {
	V      int       `json:"v"`
	Fence  bool      `json:"fence,omitempty"`
	Sheet  int64     `json:"sheet,omitempty"`
	Title  string    `json:"title,omitempty"`
	Writer writerID  `json:"writer"`
	Lease  time.Time `json:"lease"`
	Plan   string    `json:"plan,omitempty"`
	Tabs   []string  `json:"tabs,omitempty"`
	Rows   int       `json:"rows,omitempty"`
}

// create is the request that adds the metadata under the entry's ID.
func (m journalMeta) create(id int64) *sheetsapi.Request {
	b, _ := json.Marshal(m)
	return &sheetsapi.Request{CreateDeveloperMetadata: &sheetsapi.CreateDeveloperMetadataRequest{
		DeveloperMetadata: &sheetsapi.DeveloperMetadata{MetadataId: id, MetadataKey: journalMetaKey, MetadataValue: string(b),
			Location: &sheetsapi.DeveloperMetadataLocation{Spreadsheet: true}, Visibility: "DOCUMENT"}}}
}

// journalMetas reads the journal metadata of a spreadsheet's answer, by ID.
func journalMetas(list []*sheetsapi.DeveloperMetadata) map[int64]journalMeta {
	out := map[int64]journalMeta{}
	for _, dm := range list {
		if dm == nil || dm.MetadataKey != journalMetaKey {
			continue
		}
		var m journalMeta
		if json.Unmarshal([]byte(dm.MetadataValue), &m) != nil {
			// Not one this version can read (mangled by another program): kept, and left
			// alone, as an entry of a version it doesn't know is (see unfinished).
			m = journalMeta{V: -1}
		}
		out[dm.MetadataId] = m
	}
	return out
}

// deleteMeta is the request that deletes the metadata of an entry or fence.
func deleteMeta(id int64) *sheetsapi.Request {
	return &sheetsapi.Request{DeleteDeveloperMetadata: &sheetsapi.DeleteDeveloperMetadataRequest{
		DataFilter: &sheetsapi.DataFilter{DeveloperMetadataLookup: &sheetsapi.DeveloperMetadataLookup{MetadataId: id}}}}
}

// copied is an entry as read back, by tag: each row's cells as text (as a read compares them)
// and as typed values (a restore puts a number back as a number), and the plan.
type copied struct {
	text [][]string
	raw  [][]any
	// check are the second copies (text only), by the same row numbers.
	check [][]string
	// marker says row 0 held the entry's marker; plan is the plan's text.
	marker bool
	plan   string
	// problem says how the entry is not as its writer left it ("" if it is).
	problem string
}

func (c *copied) row(r int) ([]string, []any) {
	if c == nil || r < 0 || r >= len(c.text) {
		return nil, nil
	}
	return c.text[r], c.raw[r]
}

// holdsMarker reports whether the copy is an entry (it holds its marker).
func (c *copied) holdsMarker(e *entry) bool { return c != nil && c.marker }

// newCopied sorts rows read from an entry (cells as text and typed) by their tags. An entry
// is as its writer left it when the marker is there, every row has its tag once, and every
// copy equals its check copy; the check copies are compared only where withChecks says they
// were read.
func newCopied(title string, text [][]string, raw [][]any, rows int, withChecks bool) *copied {
	c := &copied{text: make([][]string, max(rows, 1)), raw: make([][]any, max(rows, 1)), check: make([][]string, max(rows, 1))}
	seen := map[string]bool{}
	bad := func(why string) {
		if c.problem == "" {
			c.problem = why
		}
	}
	for r := range text {
		tag := cellAt(text[r], 0)
		cells, vals := []string{}, []any{}
		if len(text[r]) > 1 {
			cells = text[r][1:]
		}
		if r < len(raw) && len(raw[r]) > 1 {
			vals = raw[r][1:]
		}
		switch {
		case tag == markerFor(title):
			if seen[tag] {
				bad("its marker row is there twice")
			}
			seen[tag] = true
			c.marker = true
			c.plan = strings.Join(cells, "")
			c.text[0] = []string{tag}
			c.raw[0] = []any{tag}
		case strings.HasPrefix(tag, copyTag) || strings.HasPrefix(tag, checkTag):
			n, err := strconv.Atoi(tag[strings.IndexByte(tag, ' ')+1:])
			if err != nil || n < 1 || n >= rows {
				bad("a row is tagged " + strconv.Quote(tag))
				continue
			}
			if seen[tag] {
				bad("two rows are tagged " + strconv.Quote(tag))
			}
			seen[tag] = true
			if strings.HasPrefix(tag, copyTag) {
				c.text[n], c.raw[n] = cells, vals
			} else {
				c.check[n] = cells
			}
		case strings.Join(text[r], "") == "":
		default:
			bad("a row holds text triage did not write there")
		}
	}
	if !c.marker {
		bad("its marker row is gone")
		return c
	}
	for n := 1; n < rows; n++ {
		if !seen[copyTag+strconv.Itoa(n)] || (withChecks && !seen[checkTag+strconv.Itoa(n)]) {
			bad("row " + strconv.Itoa(n) + "'s copy is gone")
			continue
		}
		if withChecks && !sameCells(c.text[n], c.check[n]) {
			bad("row " + strconv.Itoa(n) + "'s copy was edited")
		}
	}
	return c
}

// copiedFromValues is an entry read with values.get (UNFORMATTED_VALUE), check copies
// included.
func copiedFromValues(title string, rows [][]any, n int) *copied {
	text := make([][]string, len(rows))
	for r, row := range rows {
		text[r] = make([]string, len(row))
		for i, v := range row {
			text[r][i] = model.CellString(v)
		}
	}
	return newCopied(title, text, rows, n, true)
}

// copiedFromResponse takes the entry out of a write's answer (the first copies only, see
// entry.responseRange); nil if the answer lacks it.
func copiedFromResponse(resp *sheetsapi.BatchUpdateSpreadsheetResponse, e *entry) *copied {
	if resp == nil || resp.UpdatedSpreadsheet == nil {
		return nil
	}
	for _, sh := range resp.UpdatedSpreadsheet.Sheets {
		if sh == nil || sh.Properties == nil || sh.Properties.SheetId != e.id {
			continue
		}
		var text [][]string
		var raw [][]any
		for _, gd := range sh.Data {
			if gd == nil {
				continue
			}
			for j, rd := range gd.RowData {
				r := int(gd.StartRow) + j
				for len(text) <= r {
					text, raw = append(text, nil), append(raw, nil)
				}
				if rd == nil {
					continue
				}
				text[r] = make([]string, len(rd.Values))
				raw[r] = make([]any, len(rd.Values))
				for i, cd := range rd.Values {
					if cd != nil {
						text[r][i] = effectiveString(cd.EffectiveValue)
						raw[r][i] = effectiveRaw(cd.EffectiveValue)
					}
				}
			}
		}
		return newCopied(e.title, text, raw, e.rows, false)
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
// size (the entry's width for the next write), the entry's cells, and the journal metadata
// (another triage's unfinished writes, to settle).
const writeResponseFields = "updatedSpreadsheet(developerMetadata(metadataId,metadataKey,metadataValue),sheets(properties(sheetId,title,gridProperties(rowCount,columnCount)),data(startRow,rowData(values(effectiveValue)))))"

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

// fence settles a write whose answer was lost: it adds, itself, developer metadata with the
// write's entry ID. Sheets refuses an ID that exists, and a batchUpdate is atomic, so if that
// works the write did not land and never will (the fence is then metadata to delete); if it
// is refused (400), the write landed, unless an earlier fence of ours, whose own answer was
// lost, made it: the caller reads the metadata, whose value tells. Nobody can delete it from
// the Sheets UI, so a person deleting the entry sheet can't make a landed write look lost.
func (s *Store) fence(ctx context.Context, op string, b *budget, e *entry, lease time.Time) (exists bool, err error) {
	m := journalMeta{V: journalVersion, Fence: true, Writer: s.writer, Lease: lease}
	req := &sheetsapi.BatchUpdateSpreadsheetRequest{Requests: []*sheetsapi.Request{m.create(e.id)}}
	err = s.callWith(ctx, op, b, func(ctx context.Context) error {
		resp, err := s.svc.Spreadsheets.BatchUpdate(s.id, req).Fields("spreadsheetId").Context(ctx).Do()
		if resp != nil {
			s.gclock.saw(resp.Header)
		}
		var gerr *googleapi.Error
		if errors.As(err, &gerr) && gerr.Code == 400 {
			exists = true
			return nil
		}
		return err
	})
	return exists, err
}

// pruneWhat says what of an entry the next write deletes: its sheet, its metadata, or both.
type pruneWhat struct{ sheet, meta bool }

// prune queues an entry (sheet and metadata) for deletion by the store's next write: it is
// checked and nothing needs it.
func (s *Store) prune(e *entry) { s.pruneID(e.id, pruneWhat{sheet: true, meta: true}) }

func (s *Store) pruneID(id int64, what pruneWhat) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prunable == nil {
		s.prunable = map[int64]pruneWhat{}
	}
	old := s.prunable[id]
	s.prunable[id] = pruneWhat{sheet: old.sheet || what.sheet, meta: old.meta || what.meta}
}

// prunes returns the requests that delete the queued entries (this store's, and other
// writers' once settled), and their IDs.
func (s *Store) prunes() ([]*sheetsapi.Request, []int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var reqs []*sheetsapi.Request
	var ids []int64
	for id, what := range s.prunable {
		ids = append(ids, id)
		if what.sheet {
			reqs = append(reqs, &sheetsapi.Request{DeleteSheet: &sheetsapi.DeleteSheetRequest{SheetId: id}})
		}
		if what.meta {
			reqs = append(reqs, deleteMeta(id))
		}
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
		delete(s.unsettled, id)
	}
}

// Close deletes the journal entries of this store's checked writes (one request, none if
// there are none); an entry not yet settled is never deleted. A command that is about to
// exit calls it so that no hidden sheet outlives it.
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

func jsonUnmarshal(text string, v any) error { return json.Unmarshal([]byte(text), v) }
