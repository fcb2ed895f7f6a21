package sheets

import (
	"context"
	"errors"
	"strings"

	"google.golang.org/api/googleapi"
	sheetsapi "google.golang.org/api/sheets/v4"
)

// sheetInfo is what a write needs of a tab's metadata: its sheetId (updateCells and
// copyPaste address a tab by ID) and its grid width (a journal entry copies whole rows, so it
// must be at least as wide).
type sheetInfo struct {
	id   int64
	cols int
	// rows is the grid's row count: about how many rows a read of the tab brings (a load's
	// progress total).
	rows int
}

// sheetInfos returns the sheetInfo of every tab of a write: from the cache Load fills, else
// from one spreadsheets.get. A tab not in the spreadsheet any more gets ID -1: the read finds
// it gone too, and nothing is written to it.
func (s *Store) sheetInfos(ctx context.Context, op string, b *budget, work []*tabWork) ([]sheetInfo, error) {
	if infos := s.cachedSheetInfos(work); infos != nil {
		return infos, nil
	}
	meta, err := s.getMeta(ctx, op, b)
	if err != nil {
		return nil, err
	}
	s.rememberSheetIDs(meta, true)
	infos := make([]sheetInfo, len(work))
	for i, w := range work {
		infos[i] = sheetInfo{id: -1}
		if sh := findSheet(meta, w.tc.Name); sh != nil && sh.Properties != nil {
			infos[i] = infoOf(sh.Properties)
		}
	}
	return infos, nil
}

func infoOf(p *sheetsapi.SheetProperties) sheetInfo {
	in := sheetInfo{id: p.SheetId, cols: 26}
	if p.GridProperties != nil && p.GridProperties.ColumnCount > 0 {
		in.cols = int(p.GridProperties.ColumnCount)
	}
	if p.GridProperties != nil {
		in.rows = int(p.GridProperties.RowCount)
	}
	return in
}

// cachedSheetInfos returns the cached sheetInfo of every tab of work, or nil if one is
// unknown.
func (s *Store) cachedSheetInfos(work []*tabWork) []sheetInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	infos := make([]sheetInfo, len(work))
	for i, w := range work {
		in, ok := s.sheetCache[tabKey(w.tc.Name)]
		if !ok {
			return nil
		}
		infos[i] = in
	}
	return infos
}

// rememberSheetIDs caches every tab's sheetInfo by name, and the journal metadata the answer
// carries (recover.go). From a complete sheet list (a spreadsheets.get without ranges) it
// also learns which sheets exist, which tabs have a damage sheet, and which journal sheets
// there are; entries of an older triage (a journal sheet with no metadata) older than
// staleJournal are queued for deletion, as that version did. A list limited to some tabs
// (LoadTab's) says nothing of the other sheets.
func (s *Store) rememberSheetIDs(meta *sheetsapi.Spreadsheet, complete bool) {
	if meta == nil {
		return
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sheetCache == nil {
		s.sheetCache = map[string]sheetInfo{}
	}
	for _, sh := range meta.Sheets {
		if sh != nil && sh.Properties != nil {
			s.sheetCache[tabKey(sh.Properties.Title)] = infoOf(sh.Properties)
		}
	}
	s.journals = journalMetas(meta.DeveloperMetadata)
	if !complete {
		return
	}
	// A damage sheet someone deleted is gone from this list: the tab is clear again.
	s.damaged = map[string]string{}
	s.titles = map[string]string{}
	s.journalSheets = map[int64]string{}
	for _, sh := range meta.Sheets {
		if sh == nil || sh.Properties == nil {
			continue
		}
		title := sh.Properties.Title
		id := sh.Properties.SheetId
		s.titles[tabKey(title)] = title
		if tab, ok := damagedTab(title, s.tabs); ok {
			s.damaged[tabKey(tab)] = title
		}
		if _, ours := s.journals[id]; ours {
			s.journalSheets[id] = title
		} else if t, ok := journalTime(title); ok && now.Sub(t) > staleJournal && !s.readOnly {
			if s.prunable == nil {
				s.prunable = map[int64]pruneWhat{}
			}
			s.prunable[id] = pruneWhat{sheet: true}
		}
	}
	// What is queued for deletion but gone already (someone deleted it; a write whose answer
	// was lost did) is no longer asked for: a write deleting it would be refused whole.
	sheets := map[int64]bool{}
	for _, sh := range meta.Sheets {
		if sh != nil && sh.Properties != nil {
			sheets[sh.Properties.SheetId] = true
		}
	}
	for id, what := range s.prunable {
		_, hasMeta := s.journals[id]
		what = pruneWhat{sheet: what.sheet && sheets[id], meta: what.meta && hasMeta}
		if !what.sheet && !what.meta {
			delete(s.prunable, id)
		} else {
			s.prunable[id] = what
		}
	}
}

// rememberAnswer takes what a write's answer shows of the spreadsheet: the widths, and the
// journal metadata (another triage's unfinished writes, for the next Apply to settle).
func (s *Store) rememberAnswer(resp *sheetsapi.BatchUpdateSpreadsheetResponse) {
	s.rememberWidths(resp)
	if resp == nil || resp.UpdatedSpreadsheet == nil {
		return
	}
	s.gclock.saw(resp.Header)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.journals = journalMetas(resp.UpdatedSpreadsheet.DeveloperMetadata)
}

// knownTabs returns the sheets of the last complete sheet list (title by normalised name),
// nil before the first.
func (s *Store) knownTabs() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.titles
}

// rememberWidths updates the cached widths from a write's answer (it lists every sheet).
func (s *Store) rememberWidths(resp *sheetsapi.BatchUpdateSpreadsheetResponse) {
	if resp == nil || resp.UpdatedSpreadsheet == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sh := range resp.UpdatedSpreadsheet.Sheets {
		if sh == nil || sh.Properties == nil || sh.Properties.GridProperties == nil {
			continue
		}
		k := tabKey(sh.Properties.Title)
		if in, ok := s.sheetCache[k]; ok && in.id == sh.Properties.SheetId {
			s.sheetCache[k] = infoOf(sh.Properties)
		}
	}
}

func (s *Store) forgetSheetIDs() {
	s.mu.Lock()
	s.sheetCache = nil
	s.mu.Unlock()
}

// isNoGrid reports the 400 a write gets for a sheetId that no longer exists.
func isNoGrid(err error) bool {
	var gerr *googleapi.Error
	return errors.As(err, &gerr) && gerr.Code == 400 && strings.Contains(gerr.Message+gerr.Body, "No grid with id")
}

// requestContext bounds one request by the policy's RequestTimeout (DESIGN §4: a request has
// a deadline, and a write's expiry is an unknown outcome, settled by its journal).
func (s *Store) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.retry.RequestTimeout > 0 {
		return context.WithTimeout(ctx, s.retry.RequestTimeout)
	}
	return context.WithCancel(ctx)
}

// gridRows is the cached grid row count of a tab by title (0: not known).
func (s *Store) gridRows(title string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sheetCache[tabKey(title)].rows
}
