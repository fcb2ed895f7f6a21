package sheets

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/triage-dev/triage/model"
	"google.golang.org/api/googleapi"
	sheetsapi "google.golang.org/api/sheets/v4"
)

// DeadLetter appends failed calls to the dead-letter tab (the configured deadletter tab, else
// failed_calls), one row each with status dead: the dead-letter sink of DESIGN §10, which
// replay.Producer calls. Columns are found by header name, as a load finds them: optional
// columns the tab lacks are skipped, extra columns are left blank. Every value is written as
// text (the RAW of invariant 2: a payload starting with "=" stays text).
//
// It records every letter or none: a letter that can't be stored whole (a field over the
// 50,000-character cell limit, a payload that is not UTF-8) refuses the batch before anything
// is sent, naming it, because shortening a payload would change the call a replay sends. A
// tab without a key column refuses a batch that carries keys (a row must keep the key that
// was sent).
//
// It costs two requests for any number of letters: a read of the header row, then one
// spreadsheets.batchUpdate that copies the header row into a journal entry (see doc.go) and
// appends every letter with appendCells, atomically. appendCells writes after the last row
// that holds anything, so a blank column A or a gap in the table can't shift a row. The
// entry shows the header as it was at the instant of the append: if someone moved a column
// in the round trip since the read, the rows are under the wrong headers, so they are
// cleared (found by their content, as a write round puts back any stray value) and the
// letters appended again under the new header. An append whose answer is lost is fenced and
// settled by its entry (the write round's way), never sent twice: each letter is recorded
// exactly once, with the key it was sent with.
func (s *Store) DeadLetter(ctx context.Context, letters []model.DeadLetter) error {
	const op = "record dead letters"
	if len(letters) == 0 {
		return nil
	}
	if s.readOnly {
		return fmt.Errorf("%s: %w", op, ErrReadOnly)
	}
	if err := model.CheckDeadLetters(letters); err != nil {
		return fmt.Errorf("%s: nothing appended: %w", op, err)
	}
	tc := s.deadLetterTab()
	work := []*tabWork{{tc: tc}}
	b := &budget{}
	for try := 1; try <= maxSinkTries; try++ {
		header, err := s.readHeader(ctx, op, b, tc)
		if err != nil {
			return err
		}
		hm, err := model.MapHeaders(tc, trimAll(header))
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		if !hm.Has(model.FKey) {
			for _, l := range letters {
				if l.Key != "" {
					return fmt.Errorf("%s: tab %q has no key column, so the keys these calls were sent with would be lost: add a %q header (or map one in [tabs.deadletter.columns]); nothing appended", op, tc.Name, "key")
				}
			}
		}
		rows := make([][]string, len(letters))
		for i, l := range letters {
			rows[i] = letterRow(hm, len(header), statusSpelling(tc, model.StatusDead), l)
		}
		written, err := s.appendLetters(ctx, op, b, work, rows)
		if err != nil {
			return err
		}
		if sameCells(written, header) {
			return nil // under the header read: each letter once, in its columns
		}
		// Someone moved a column between the read and the append: clear those rows (ours
		// whole), then append again under the header as it is now.
		keys := columnKeys(trimAll(written))
		w := &writer{s: s, op: op, work: work, b: b, lastRow: map[int]int{}}
		for _, row := range rows {
			rs := newRestore(0, keys, row)
			for c, v := range row {
				if v != "" {
					rs.cells[keyAt(keys, c)] = &owedCell{header: headerAt(trimAll(written), c), ours: v, oursKind: "text"}
				}
			}
			w.owed = append(w.owed, rs)
		}
		w.landed = true
		res, err := w.run(ctx)
		if err != nil {
			return fmt.Errorf("%s: the letters landed under the wrong columns (someone moved them meanwhile) and triage could not clear them: %w", op, err)
		}
		if len(res.Damaged) > 0 {
			_ = s.recordDamage(ctx, op, res.Damaged) // best effort, as in Apply
			msg := make([]string, len(res.Damaged))
			for i, d := range res.Damaged {
				msg[i] = d.String()
			}
			return fmt.Errorf("%s: the letters landed under the wrong columns (someone moved them meanwhile) and triage could not clear them all: %s", op, strings.Join(msg, "; "))
		}
	}
	return fmt.Errorf("%s: the header row of %q kept changing while triage appended (%d tries); nothing is left under the wrong columns: try again", op, tc.Name, maxSinkTries)
}

// maxSinkTries bounds DeadLetter's appends while someone keeps moving the tab's columns.
const maxSinkTries = 3

// readHeader reads a tab's header row.
func (s *Store) readHeader(ctx context.Context, op string, b *budget, tc model.TabConfig) ([]string, error) {
	var head *sheetsapi.ValueRange
	err := s.callWith(ctx, op, b, func(ctx context.Context) error {
		var err error
		head, err = s.svc.Spreadsheets.Values.Get(s.id, quoteTab(tc.Name)+"!1:1").ValueRenderOption(valueRender).Context(ctx).Do()
		return err
	})
	if err != nil {
		return nil, err
	}
	var header []string
	if len(head.Values) > 0 {
		for _, v := range head.Values[0] {
			header = append(header, model.CellString(v))
		}
	}
	return header, nil
}

// appendLetters appends rows in one atomic write with a journal entry holding the header row
// as it was at that instant, and returns that header. A lost answer is fenced (see fence): if
// the append didn't land it is sent again, in a new write; if it did, its entry is read.
func (s *Store) appendLetters(ctx context.Context, op string, b *budget, work []*tabWork, rows [][]string) ([]string, error) {
	data := make([]*sheetsapi.RowData, len(rows))
	for i, row := range rows {
		vals := make([]*sheetsapi.CellData, len(row))
		for c, v := range row {
			vals[c] = &sheetsapi.CellData{}
			if v != "" {
				v := v
				vals[c].UserEnteredValue = &sheetsapi.ExtendedValue{StringValue: &v}
			}
		}
		data[i] = &sheetsapi.RowData{Values: vals}
	}
	noPrunes := false // a write carrying old entries' deletions was refused (see writer.noPrunes)
	for {
		infos, err := s.sheetInfos(ctx, op, b, work)
		if err != nil {
			return nil, err
		}
		e := newEntry(s.now())
		e.rows, e.headerRow[0] = 2, 1
		lease := s.gclock.now().Add(leaseFor)
		e.plan = &journalPlan{V: journalVersion, Writer: s.writer, Lease: lease, Op: op, Rows: e.rows,
			Tabs: []planTab{{Name: work[0].tc.Name, Sheet: infos[0].id, HeaderRow: 1}}}
		prunes, pruneIDs := s.prunes()
		if noPrunes {
			prunes, pruneIDs = nil, nil
		}
		reqs := append(prunes, e.requests(infos[0].cols+journalSlack, []*sheetsapi.Request{e.copyRows(infos[0].id, 0, 1, 1)},
			journalMeta{Writer: s.writer, Lease: lease, Tabs: []string{work[0].tc.Name}})...)
		reqs = append(reqs, &sheetsapi.Request{AppendCells: &sheetsapi.AppendCellsRequest{SheetId: infos[0].id, Rows: data, Fields: "userEnteredValue"}})
		resp, err := s.sendWrite(ctx, &sheetsapi.BatchUpdateSpreadsheetRequest{Requests: reqs,
			IncludeSpreadsheetInResponse: true, ResponseRanges: []string{e.responseRange()}, ResponseIncludeGridData: true})
		var c *copied
		switch {
		case err == nil:
			b.answered()
			s.pruned(pruneIDs)
			s.rememberAnswer(resp)
			c = copiedFromResponse(resp, e)
		case outcomeUnknown(err):
			if ferr := s.backoff(ctx, op, b, err); ferr != nil {
				return nil, fmt.Errorf("%w (the append may have landed: the hidden sheet %q shows the header it was written under, if it did)", ferr, e.title)
			}
		default:
			var gerr *googleapi.Error
			if len(pruneIDs) > 0 && errors.As(err, &gerr) && gerr.Code == 400 {
				noPrunes = true // a journal sheet someone else deleted, perhaps; nothing applied
				continue
			}
			if isNoGrid(err) {
				s.forgetSheetIDs()
			}
			if ferr := s.backoff(ctx, op, b, err); ferr != nil {
				return nil, ferr
			}
			continue
		}
		if c == nil || !c.holdsMarker(e) {
			// No answer, or one without the entry: fence it, then read it.
			exists, err := s.fence(ctx, op, b, e, lease)
			if err != nil {
				return nil, fmt.Errorf("%w (the append may have landed: the hidden sheet %q shows the header it was written under, if it did)", err, e.title)
			}
			meta, err := s.getMeta(ctx, op, b)
			if err != nil {
				return nil, err
			}
			s.rememberSheetIDs(meta, true)
			if !exists && sheetByID(meta, e.id) != nil {
				// No metadata, yet the journal sheet the same batch made is there: the append
				// landed and someone deleted its metadata. Appending again would record the
				// letters twice; what it landed under can't be proven either.
				s.pruneID(e.id, pruneWhat{sheet: true, meta: true})
				return nil, fmt.Errorf("%s: the append landed, but its journal's developer metadata was deleted by someone before triage could check it, so the header it landed under can't be checked: check the last rows of %q", op, work[0].tc.Name)
			}
			if !exists {
				s.pruneID(e.id, pruneWhat{meta: true})
				continue // fenced before it landed: it never will; append again
			}
			m, hasMeta := s.journalMetaOf(e.id)
			if hasMeta && m.Fence {
				s.pruneID(e.id, pruneWhat{meta: true})
				continue // an earlier fence of ours: nothing landed
			}
			title, hasSheet := s.journalSheetOf(e.id)
			if !hasMeta || !hasSheet {
				s.pruneID(e.id, pruneWhat{meta: hasMeta, sheet: hasSheet})
				return nil, fmt.Errorf("%s: the append landed, but its journal sheet %q was deleted before triage could read it, so the header it landed under can't be checked: check the last rows of %q", op, e.title, work[0].tc.Name)
			}
			_, _, got, err := s.readForWrite(ctx, op, b, nil, []sheetRef{{id: e.id, title: title}})
			if err != nil {
				return nil, err
			}
			// The marker names the entry by the title it was made with: a renamed entry still reads.
			c = copiedFromValues(e.title, got[0], e.rows)
			if c.problem != "" || (m.Plan != "" && m.Plan != digest(c.plan)) {
				s.prune(e)
				return nil, fmt.Errorf("%s: the append landed, but its journal sheet %q was changed by someone before triage could read it, so the header it landed under can't be checked: check the last rows of %q", op, e.title, work[0].tc.Name)
			}
		}
		s.prune(e)
		if c != nil && c.holdsMarker(e) {
			header, _ := c.row(1)
			return header, nil
		}
		// Fenced before it landed: it never will. Append again.
	}
}

func trimAll(h []string) []string {
	out := make([]string, len(h))
	for i, v := range h {
		out[i] = strings.TrimSpace(v)
	}
	return out
}

// deadLetterTab is the store's dead-letter tab: the first configured one, else the default.
func (s *Store) deadLetterTab() model.TabConfig {
	for _, tc := range s.tabs {
		if tc.Role == model.RoleDeadLetter {
			return tc
		}
	}
	return model.DefaultTabConfig(model.RoleDeadLetter)
}

// letterRow lays a dead letter out under a header: each field in its column, "" elsewhere.
// Every value is a string, so RAW stores it as text exactly (attempts too, as a replay writes
// them).
func letterRow(hm model.HeaderMap, width int, dead string, l model.DeadLetter) []string {
	row := make([]string, width)
	set := func(f model.Field, v string) {
		if c := hm.Col(f); c >= 0 && c < width {
			row[c] = v
		}
	}
	ts := ""
	if !l.Timestamp.IsZero() {
		ts = model.FormatTime(l.Timestamp)
	}
	set(model.FTimestamp, ts)
	set(model.FSource, l.Source)
	set(model.FURL, l.URL)
	set(model.FPayload, l.Payload)
	set(model.FError, l.Error)
	set(model.FAttempts, strconv.Itoa(l.Attempts))
	set(model.FMethod, l.Method)
	set(model.FKey, l.Key)
	set(model.FStatus, dead)
	return row
}

// statusSpelling is a status as the tab's configured list spells it ("Dead"), so a new row
// matches the tab's dropdown; the status itself where the list doesn't have it.
func statusSpelling(tc model.TabConfig, status string) string {
	for _, v := range tc.Statuses {
		if strings.EqualFold(strings.TrimSpace(v), status) {
			return v
		}
	}
	return status
}
