package sheets

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // the spreadsheet's time zone must load on a minimal jump host too

	"github.com/triage-dev/triage/model"
	sheetsapi "google.golang.org/api/sheets/v4"
)

// Render options of every read (DESIGN §2): numbers and dates as numbers, dates as serials.
const (
	valueRender    = "UNFORMATTED_VALUE"
	dateTimeRender = "SERIAL_NUMBER"
)

// metaFields is the field mask of Load's spreadsheets.get.
const metaFields = "spreadsheetId,properties(title,timeZone),sheets(properties(sheetId,title,gridProperties),data.columnMetadata.hiddenByUser)"

// validationFields is the field mask of the one-off Status dropdown request.
const validationFields = "sheets(properties(sheetId,title),data(rowData(values(dataValidation))))"

// Options configures a Store.
type Options struct {
	// SpreadsheetID is the ID in the sheet's URL (between /d/ and /edit).
	SpreadsheetID string
	// Tabs are the configured tabs in display order.
	Tabs []model.TabConfig
	// ReadOnly makes every write return ErrReadOnly without sending anything.
	ReadOnly bool
	// Actor is who is making changes; it fills triaged_by where that column exists. An Apply
	// whose context carries an actor (WithActor) records that one instead.
	Actor string
	// Identity is who the API sees (from Connect); its Email names the account to share the
	// spreadsheet with when the API answers 403.
	Identity Identity
	// Retry bounds retries of each request; the zero value is 5 attempts, 500ms, 10s cap.
	Retry RetryPolicy
	// Now is the clock of triaged_at and Workbook.Loaded (default time.Now). triaged_at is
	// written to the millisecond and moved on by a millisecond where an Apply would repeat the
	// previous one's stamp, so a fixed clock still gives each Apply its own stamp.
	Now func() time.Time
}

// actorKey is the context key of WithActor's name.
type actorKey struct{}

// WithActor returns a context under which Store.Apply records name in triaged_by instead of
// Options.Actor: one Store shared by many people (`triage serve`) records each write's own
// person. An empty name leaves Options.Actor in force.
func WithActor(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, actorKey{}, name)
}

// Store reads and writes one spreadsheet through the Sheets API. It is safe for concurrent
// use; each Load and Apply reads the sheet afresh.
type Store struct {
	svc      *sheetsapi.Service
	id       string
	tabs     []model.TabConfig
	readOnly bool
	actor    string
	retry    RetryPolicy
	now      func() time.Time
	errs     errorContext

	// stampMu guards lastStamp, the stamp of the latest Apply (see Store.stamp).
	stampMu   sync.Mutex
	lastStamp time.Time

	mu sync.Mutex
	// dropdowns caches each tab's Status data-validation values (nil: it has none), by
	// normalised tab name; a tab present in the map is never asked again.
	dropdowns map[string][]string
	// sheetCache is each tab's sheetId and width by normalised name (a write addresses a
	// tab by ID, and its journal entry must be as wide), filled by Load, by the first Apply
	// that needs it, and by every write's answer.
	sheetCache map[string]sheetInfo
	// prunable are journal entries (see journal.go) the next write deletes: this store's,
	// checked, and other writers' stale ones.
	prunable map[int64]bool
	// damaged are the damage sheets (see damage.go) by normalised tab name, as the last
	// metadata or this store's own writes showed them.
	damaged map[string]string
}

// New returns a store for a spreadsheet reached through svc (built by Connect, or by a test
// against the emulator). It sends nothing.
func New(ctx context.Context, svc *sheetsapi.Service, opts Options) *Store {
	_ = ctx
	s := &Store{
		svc:       svc,
		id:        opts.SpreadsheetID,
		tabs:      append([]model.TabConfig(nil), opts.Tabs...),
		readOnly:  opts.ReadOnly,
		actor:     opts.Actor,
		retry:     opts.Retry.withDefaults(),
		now:       opts.Now,
		dropdowns: map[string][]string{},
	}
	if s.now == nil {
		s.now = time.Now
	}
	endpoint := "https://sheets.googleapis.com/"
	if svc != nil && svc.BasePath != "" {
		endpoint = svc.BasePath
	}
	s.errs = errorContext{spreadsheetID: opts.SpreadsheetID, endpoint: endpoint, email: opts.Identity.Email}
	return s
}

// ReadOnly reports whether the store refuses every write.
func (s *Store) ReadOnly() bool { return s.readOnly }

// SpreadsheetID returns the ID of the spreadsheet the store works on.
func (s *Store) SpreadsheetID() string { return s.id }

// Tabs returns the configured tabs, in display order.
func (s *Store) Tabs() []model.TabConfig { return append([]model.TabConfig(nil), s.tabs...) }

// tabConfig returns the configured tab with a name (exact, then case-insensitive).
func (s *Store) tabConfig(name string) (model.TabConfig, bool) {
	for _, tc := range s.tabs {
		if tc.Name == name {
			return tc, true
		}
	}
	for _, tc := range s.tabs {
		if strings.EqualFold(tc.Name, name) {
			return tc, true
		}
	}
	return model.TabConfig{}, false
}

// findSheet returns the sheet whose title is name (exact, then case-insensitive: Sheets
// titles are unique regardless of case).
func findSheet(meta *sheetsapi.Spreadsheet, name string) *sheetsapi.Sheet {
	if meta == nil {
		return nil
	}
	for _, sh := range meta.Sheets {
		if sh.Properties != nil && sh.Properties.Title == name {
			return sh
		}
	}
	for _, sh := range meta.Sheets {
		if sh.Properties != nil && strings.EqualFold(sh.Properties.Title, name) {
			return sh
		}
	}
	return nil
}

func tabKey(name string) string { return strings.ToLower(strings.TrimSpace(name)) }

// getMeta sends Load's spreadsheets.get, retrying within b.
func (s *Store) getMeta(ctx context.Context, op string, b *budget) (*sheetsapi.Spreadsheet, error) {
	var meta *sheetsapi.Spreadsheet
	err := s.callWith(ctx, op, b, func(ctx context.Context) error {
		var err error
		meta, err = s.svc.Spreadsheets.Get(s.id).Fields(metaFields).Context(ctx).Do()
		return err
	})
	return meta, err
}

// batchGet sends one values:batchGet with the read render options, retrying within b.
func (s *Store) batchGet(ctx context.Context, op string, b *budget, ranges []string) ([]*sheetsapi.ValueRange, error) {
	var resp *sheetsapi.BatchGetValuesResponse
	err := s.callWith(ctx, op, b, func(ctx context.Context) error {
		var err error
		resp, err = s.svc.Spreadsheets.Values.BatchGet(s.id).Ranges(ranges...).
			ValueRenderOption(valueRender).DateTimeRenderOption(dateTimeRender).
			Context(ctx).Do()
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(resp.ValueRanges) != len(ranges) {
		return nil, fmt.Errorf("%s: the Sheets API answered %d ranges for %d requested", op, len(resp.ValueRanges), len(ranges))
	}
	return resp.ValueRanges, nil
}

// Load reads every configured tab: one spreadsheets.get (title, time zone, sheet IDs, hidden
// columns) and one values:batchGet, sent concurrently. A batchGet that fails because a tab is
// missing is followed by one more for the tabs that exist. Missing tabs land in
// Workbook.Missing, tabs without a required header in Workbook.Broken; the rest load. The
// first Load also reads Status dropdowns (one request for all tabs that need one).
//
// Each request retries with the full RetryPolicy, except that a Load that can't connect at
// all (refused, DNS failure) on its first requests fails after one short retry (see
// dialAttempts).
func (s *Store) Load(ctx context.Context) (*model.Workbook, error) {
	const op = "load"
	ranges := make([]string, len(s.tabs))
	for i, tc := range s.tabs {
		ranges[i] = quoteTab(tc.Name)
	}
	var (
		meta             *sheetsapi.Spreadsheet
		vrs              []*sheetsapi.ValueRange
		metaErr, valsErr error
		wg               sync.WaitGroup
	)
	// The two first requests have their own budgets but share the dial fuse: when nothing
	// answers at all, they give up together after dialAttempts sends in all.
	fuse := &dialFuse{}
	wg.Go(func() { meta, metaErr = s.getMeta(ctx, op, &budget{fuse: fuse}) })
	if len(ranges) > 0 {
		wg.Go(func() { vrs, valsErr = s.batchGet(ctx, op, &budget{fuse: fuse}, ranges) })
	}
	wg.Wait()
	if metaErr != nil {
		return nil, metaErr
	}
	s.rememberSheetIDs(meta)
	// rows[i] are the rows of s.tabs[i]; present[i] says whether the tab exists.
	rows := make([][][]any, len(s.tabs))
	present := make([]bool, len(s.tabs))
	sheetsOf := make([]*sheetsapi.Sheet, len(s.tabs))
	for i, tc := range s.tabs {
		sheetsOf[i] = findSheet(meta, tc.Name)
		present[i] = sheetsOf[i] != nil
	}
	switch {
	case valsErr == nil:
		for i := range s.tabs {
			if vrs[i] != nil {
				rows[i] = vrs[i].Values
			}
		}
	case isParseRange(valsErr):
		if err := s.rereadPresentTabs(ctx, op, sheetsOf, rows); err != nil {
			return nil, err
		}
	default:
		return nil, valsErr
	}

	wb := newWorkbook(s.id, meta)
	for i, tc := range s.tabs {
		if !present[i] {
			wb.Missing = append(wb.Missing, tc)
			continue
		}
		t, err := model.Decode(tc, rows[i], wb.Location)
		if err != nil {
			wb.Broken = append(wb.Broken, model.TabError{Config: tc, Err: err})
			continue
		}
		sh := sheetsOf[i]
		t.SheetID = sh.Properties.SheetId
		t.Hidden = hiddenByUser(sh, len(t.Header.Headers))
		wb.Tabs = append(wb.Tabs, t)
	}
	s.applyDropdowns(ctx, wb.Tabs)
	wb.Loaded = s.now()
	return wb, nil
}

// rereadPresentTabs fills rows[i] for every tab that has a sheet (sheetsOf[i] != nil), in
// one more batchGet. It follows a batchGet that failed because a configured tab is missing:
// the API answers such a request with an error alone, so the tabs that do exist must be
// asked for again, under the titles the sheet gives them.
func (s *Store) rereadPresentTabs(ctx context.Context, op string, sheetsOf []*sheetsapi.Sheet, rows [][][]any) error {
	var again []string
	var idx []int
	for i, sh := range sheetsOf {
		if sh != nil {
			again = append(again, quoteTab(sh.Properties.Title))
			idx = append(idx, i)
		}
	}
	if len(again) == 0 {
		return nil
	}
	vrs, err := s.batchGet(ctx, op, &budget{}, again)
	if err != nil {
		return err
	}
	for j, i := range idx {
		if vrs[j] != nil {
			rows[i] = vrs[j].Values
		}
	}
	return nil
}

// newWorkbook starts a Workbook from the spreadsheet's metadata. Date serials carry no zone
// of their own and are read in the spreadsheet's time zone; UTC stands in when the sheet
// names none or one this machine can't load, so that a load never fails for it.
func newWorkbook(id string, meta *sheetsapi.Spreadsheet) *model.Workbook {
	wb := &model.Workbook{SpreadsheetID: id, Location: time.UTC}
	if meta.SpreadsheetId != "" {
		wb.SpreadsheetID = meta.SpreadsheetId
	}
	if meta.Properties != nil {
		wb.Title = meta.Properties.Title
		if tz := meta.Properties.TimeZone; tz != "" {
			if loc, err := time.LoadLocation(tz); err == nil {
				wb.Location = loc
			}
		}
	}
	return wb
}

// hiddenByUser returns which of a tab's n header columns the operator hid, from the column
// metadata of Load's spreadsheets.get. It always has one flag per header column, because
// that metadata can be shorter or longer than the header, or absent, and Table.Hidden is
// indexed by header column.
func hiddenByUser(sh *sheetsapi.Sheet, n int) []bool {
	hidden := make([]bool, n)
	if len(sh.Data) > 0 && sh.Data[0] != nil {
		for c, md := range sh.Data[0].ColumnMetadata {
			if c < len(hidden) && md != nil {
				hidden[c] = md.HiddenByUser
			}
		}
	}
	return hidden
}

// applyDropdowns sets Table.Statuses from the Status column's data validation for tabs with
// no configured list. Values are fetched once per tab (one request for all tabs that need
// them) and cached; a failed fetch leaves the defaults and is tried again next Load.
func (s *Store) applyDropdowns(ctx context.Context, tabs []*model.Table) {
	var need []*model.Table
	s.mu.Lock()
	for _, t := range tabs {
		if len(t.Config.Statuses) > 0 || !t.Header.Has(model.FStatus) {
			continue
		}
		if _, done := s.dropdowns[tabKey(t.Config.Name)]; !done {
			need = append(need, t)
		}
	}
	s.mu.Unlock()
	if len(need) > 0 {
		ranges := make([]string, len(need))
		for i, t := range need {
			col := model.ColumnLetter(t.Header.Col(model.FStatus))
			ranges[i] = quoteTab(t.Config.Name) + "!" + col + "2:" + col + "2"
		}
		var resp *sheetsapi.Spreadsheet
		err := s.call(ctx, "read Status dropdowns", func(ctx context.Context) error {
			var err error
			resp, err = s.svc.Spreadsheets.Get(s.id).Ranges(ranges...).Fields(validationFields).Context(ctx).Do()
			return err
		})
		if err == nil {
			found := make([][]string, len(need))
			for i, t := range need {
				sh := findSheet(resp, t.Config.Name)
				if sh == nil && len(resp.Sheets) == len(need) && (resp.Sheets[i].Properties == nil || resp.Sheets[i].Properties.Title == "") {
					sh = resp.Sheets[i] // no titles in the answer: same order as asked
				}
				found[i] = dropdownValues(sh)
			}
			s.mu.Lock()
			for i, t := range need {
				s.dropdowns[tabKey(t.Config.Name)] = found[i]
			}
			s.mu.Unlock()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range tabs {
		if len(t.Config.Statuses) > 0 {
			continue
		}
		if v := s.dropdowns[tabKey(t.Config.Name)]; len(v) > 0 {
			t.Statuses = append([]string(nil), v...)
		}
	}
}

// dropdownValues reads a ONE_OF_LIST rule from the first cell of a sheet's returned data:
// trimmed, in the dropdown's own spelling, blanks and case-insensitive duplicates dropped.
func dropdownValues(sh *sheetsapi.Sheet) []string {
	if sh == nil {
		return nil
	}
	for _, gd := range sh.Data {
		if gd == nil {
			continue
		}
		for _, rd := range gd.RowData {
			if rd == nil {
				continue
			}
			for _, cd := range rd.Values {
				if cd == nil || cd.DataValidation == nil || cd.DataValidation.Condition == nil {
					continue
				}
				cond := cd.DataValidation.Condition
				if cond.Type != "ONE_OF_LIST" {
					return nil
				}
				var out []string
				seen := map[string]bool{}
				for _, v := range cond.Values {
					if v == nil {
						continue
					}
					// Keep the dropdown's spelling: a write must pass its validation.
					x := strings.TrimSpace(v.UserEnteredValue)
					if k := strings.ToLower(x); x != "" && !seen[k] {
						seen[k] = true
						out = append(out, x)
					}
				}
				return out
			}
		}
	}
	return nil
}
