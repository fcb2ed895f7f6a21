package sheets

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/triage-dev/triage/model"
	sheetsapi "google.golang.org/api/sheets/v4"
)

// tabMetaFields is the field mask of LoadTab's spreadsheets.get: what Load's sheet list
// gives of the one tab, and the data validation of its row 2 (the Status dropdown).
const tabMetaFields = "spreadsheetId,properties(title,timeZone),developerMetadata(metadataId,metadataKey,metadataValue),sheets(properties(sheetId,title,gridProperties),data(startColumn,columnMetadata.hiddenByUser,rowData(values(dataValidation))))"

// LoadTab reads one configured tab (by name, else by role) for a command that works on that
// tab alone (list, set-status, clear-error, requeue-stale): one spreadsheets.get limited to
// the tab (title, time zone, its sheet ID and size, hidden columns, the Status dropdown of
// row 2) and one values:batchGet of it, sent concurrently. The workbook holds that tab only
// (in Tabs, Broken or Missing); a tab that doesn't exist is in Missing, with nothing else
// sent.
//
// The rows read are kept for the store's next Apply, which plans its first round from them
// instead of reading the tab again: a command that loads, then writes, reads its tab once
// (three requests in all when nothing moves). That is as safe as a fresh read (invariant 1):
// the write's journal shows every target row as it was at the instant of the write, and a
// row that differs from this read (moved, or changed) is put back and planned again from a
// new read. Any Load, and the Apply itself, drops them.
func (s *Store) LoadTab(ctx context.Context, name string) (*model.Workbook, error) {
	const op = "load"
	tc, ok := s.tabConfig(name)
	if !ok {
		role := model.Role(strings.ToLower(strings.TrimSpace(name)))
		found := false
		for _, c := range s.tabs {
			if c.Role == role {
				tc, found = c, true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("%s: no tab %q: it is neither a configured tab's name nor a role (inbox, deadletter, queue); configured: %s", op, name, s.tabNames())
		}
	}
	s.dropPlanned()
	var (
		meta             *sheetsapi.Spreadsheet
		rows             [][][]any
		metaErr, valsErr error
		wg               sync.WaitGroup
	)
	fuse := &dialFuse{}
	wg.Go(func() {
		metaErr = s.callWith(ctx, op, &budget{fuse: fuse}, func(ctx context.Context) error {
			var err error
			meta, err = s.svc.Spreadsheets.Get(s.id).Ranges(quoteTab(tc.Name) + "!2:2").Fields(tabMetaFields).Context(ctx).Do()
			if meta != nil {
				s.gclock.saw(meta.Header)
			}
			return err
		})
	})
	wg.Go(func() { rows, valsErr = s.readTitles(ctx, op, &budget{fuse: fuse}, []string{tc.Name}) })
	wg.Wait()
	if isParseRange(metaErr) && isParseRange(valsErr) {
		// The tab does not exist: say so as Load does.
		return &model.Workbook{SpreadsheetID: s.id, Missing: []model.TabConfig{tc}, Loaded: s.now()}, nil
	}
	if metaErr != nil {
		return nil, metaErr
	}
	if valsErr != nil {
		return nil, valsErr
	}
	s.rememberSheetIDs(meta, false)
	wb := newWorkbook(s.id, meta)
	sh := findSheet(meta, tc.Name)
	if sh == nil || sh.Properties == nil {
		return nil, fmt.Errorf("%s: the Sheets API answered no sheet %q for its own range; try again", op, tc.Name)
	}
	var valid map[string]map[int][]string
	if len(tc.Statuses) == 0 {
		valid = map[string]map[int][]string{tabKey(tc.Name): rowValidations(sh)}
	}
	t, err := s.decodeTab(tc, rows[0], sh, wb.Location, valid)
	if err != nil {
		wb.Broken = append(wb.Broken, model.TabError{Config: tc, Err: err})
	} else {
		wb.Tabs = append(wb.Tabs, t)
		s.mu.Lock()
		s.planned = map[string][][]any{tabKey(tc.Name): rows[0]}
		s.mu.Unlock()
	}
	wb.Loaded = s.now()
	return wb, nil
}

// dropPlanned forgets the rows LoadTab kept for the next Apply.
func (s *Store) dropPlanned() {
	s.mu.Lock()
	s.planned = nil
	s.mu.Unlock()
}

// takePlanned returns the rows LoadTab kept, one per tab of work, when it kept every one of
// them (else nil), and forgets them: they are one command's read, planned from once.
func (s *Store) takePlanned(work []*tabWork) [][][]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	planned := s.planned
	s.planned = nil
	out := make([][][]any, len(work))
	for i, w := range work {
		rows, ok := planned[tabKey(w.tc.Name)]
		if !ok {
			return nil
		}
		out[i] = rows
	}
	return out
}

// knowDamage makes sure the store has seen the whole sheet list (and so every damage sheet)
// before an edit that sets a key cell is accepted: LoadTab's list names its tab only.
func (s *Store) knowDamage(ctx context.Context, op string, b *budget, edits []model.Edit) error {
	if s.knownTabs() != nil {
		return nil
	}
	for _, e := range edits {
		if _, setsKey := e.Set[model.FKey]; setsKey {
			meta, err := s.getMeta(ctx, op, b)
			if err != nil {
				return err
			}
			s.rememberSheetIDs(meta, true)
			return nil
		}
	}
	return nil
}
