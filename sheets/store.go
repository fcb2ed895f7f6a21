package sheets

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // the spreadsheet's time zone must load on a minimal jump host too

	"github.com/triage-dev/triage/googleauth"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/store"
	sheetsapi "google.golang.org/api/sheets/v4"
)

// Render options of every read (DESIGN §2): numbers and dates as numbers, dates as serials.
const (
	valueRender    = "UNFORMATTED_VALUE"
	dateTimeRender = "SERIAL_NUMBER"
)

// metaFields is the field mask of Load's spreadsheets.get.
const metaFields = "spreadsheetId,properties(title,timeZone),developerMetadata(metadataId,metadataKey,metadataValue),sheets(properties(sheetId,title,gridProperties),data.columnMetadata.hiddenByUser)"

// validationFields is the field mask of the one-off Status dropdown request.
const validationFields = "sheets(properties(sheetId,title),data(startColumn,rowData(values(dataValidation))))"

// Options configures a Store.
type Options struct {
	// SpreadsheetID is the ID in the sheet's URL (between /d/ and /edit).
	SpreadsheetID string
	// Tabs are the configured tabs in display order.
	Tabs []model.TabConfig
	// ReadOnly makes every write return ErrReadOnly without sending anything.
	ReadOnly bool
	// Actor is who is making changes; it fills triaged_by where that column exists. An Apply
	// whose context carries an actor (model.WithActor) records that one instead.
	Actor string
	// Identity is who the API sees (from Connect); its Email names the account to share the
	// spreadsheet with when the API answers 403.
	Identity googleauth.Identity
	// Retry bounds retries of each request; the zero value is 5 attempts, 500ms, 10s cap.
	Retry RetryPolicy
	// HTTPClient, when set, is the client svc sends with (ConnectWithDrive's Conn.HTTP): reads
	// of values go through it, with the URL and query the sheets/v4 client builds, and are
	// decoded as they arrive instead of by the client's generic decode (values.go). Nil: the
	// client's Do.
	HTTPClient *http.Client
	// FullReadEvery is how often a refresh reads the whole sheet when nothing says it changed
	// (Changed): with no Drive access, the only way to see an edit in the middle of a tab;
	// with one, a bound on Drive's lag. 0 means DefaultFullReadEvery. Rows appended at the
	// end of a tab are seen sooner, by the tail probe.
	FullReadEvery time.Duration
	// Now is the clock of triaged_at and Workbook.Loaded (default time.Now). triaged_at is
	// written to the millisecond and moved on by a millisecond where an Apply would repeat the
	// previous one's stamp, so a fixed clock still gives each Apply its own stamp.
	Now func() time.Time
}

// The sheet store keeps the store contract, replay leases included (store/storetest holds it
// to them).
var (
	_ store.Store  = (*Store)(nil)
	_ store.Leaser = (*Store)(nil)
)

// Store reads and writes one spreadsheet through the Sheets API. It is safe for concurrent
// use; each Load and Apply reads the sheet afresh.
type Store struct {
	svc      *sheetsapi.Service
	hc       *http.Client
	id       string
	tabs     []model.TabConfig
	readOnly bool
	actor    string
	retry    RetryPolicy
	now      func() time.Time
	errs     errorContext

	// stamps gives each Apply its own triaged_at (Store.stamp).
	stamps model.Stamper

	mu sync.Mutex
	// dropdowns caches each tab's Status data-validation values (nil: it has none), by
	// normalised tab name; a tab present in the map is never asked again.
	dropdowns map[string][]string
	// sheetCache is each tab's sheetId and width by normalised name (a write addresses a
	// tab by ID, and its journal entry must be as wide), filled by Load, by the first Apply
	// that needs it, and by every write's answer.
	sheetCache map[string]sheetInfo
	// prunable are journal entries (see journal.go) the next write deletes: this store's,
	// checked, and other writers' once settled.
	prunable map[int64]pruneWhat
	// writer is this store's name in its journal entries, gclock Google's clock its leases
	// are told in (lease.go).
	writer writerID
	gclock googleClock
	// journals is the journal metadata the last answer that carried it showed (every
	// entry's and fence's, by ID); journalSheets the journal sheets of the last complete
	// sheet list (title by ID), for recover.go.
	journals      map[int64]journalMeta
	journalSheets map[int64]string
	// unsettled are this store's own entries that an Apply which ended on an error left with
	// values still owed: no Apply of this store is acting on them, so its next one settles
	// them at once, as another triage would once their lease ran out (recover.go).
	unsettled map[int64]bool
	// leases are the replay runs this store holds row leases for (runlease.go).
	leases runLeases
	// damaged are the damage sheets (see damage.go) by normalised tab name, as the last
	// metadata or this store's own writes showed them.
	damaged map[string]string
	// titles are the sheets of the last complete sheet list (title by normalised name), nil
	// before the first: a Load reads only tabs that exist (no request fails for a missing
	// optional tab), and a later Load reads them alongside the new list.
	titles map[string]string
	// change is the Drive version check (WithDrive), nil without one.
	change *changeCheck
	// tails are the rows the last Load read of each tab (header included), by title, and
	// fullAt when it started: the tail probe asks for the row after each (Changed).
	tails     map[string]int
	fullAt    time.Time
	fullEvery time.Duration
	// planned are the rows LoadTab read, by normalised tab name: the next Apply plans its
	// first round from them instead of reading the tab again (see LoadTab).
	planned map[string][][]any
}

// New returns a store for a spreadsheet reached through svc (built by Connect, or by a test
// against the emulator). It sends nothing.
func New(ctx context.Context, svc *sheetsapi.Service, opts Options) *Store {
	_ = ctx
	s := &Store{
		svc:       svc,
		hc:        opts.HTTPClient,
		id:        opts.SpreadsheetID,
		tabs:      append([]model.TabConfig(nil), opts.Tabs...),
		readOnly:  opts.ReadOnly,
		actor:     opts.Actor,
		retry:     opts.Retry.withDefaults(),
		now:       opts.Now,
		fullEvery: opts.FullReadEvery,
		dropdowns: map[string][]string{},
		writer:    newWriterID(opts.Actor),
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.fullEvery <= 0 {
		s.fullEvery = DefaultFullReadEvery
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

// tabConfig returns the configured tab with a name (store.FindTab: exact, then
// case-insensitive).
func (s *Store) tabConfig(name string) (model.TabConfig, bool) { return store.FindTab(s.tabs, name) }

// sheetByID finds a sheet of meta by its sheetId.
func sheetByID(meta *sheetsapi.Spreadsheet, id int64) *sheetsapi.Sheet {
	if meta == nil {
		return nil
	}
	for _, sh := range meta.Sheets {
		if sh.Properties != nil && sh.Properties.SheetId == id {
			return sh
		}
	}
	return nil
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
		if meta != nil {
			s.gclock.saw(meta.Header)
		}
		return err
	})
	return meta, err
}

// batchGet sends one values:batchGet with the read render options, retrying within b.
func (s *Store) batchGet(ctx context.Context, op string, b *budget, ranges []string) ([]*sheetsapi.ValueRange, error) {
	if s.hc != nil {
		var rows [][][]any
		err := s.callWith(ctx, op, b, func(ctx context.Context) error {
			var err error
			rows, err = s.rawBatchGet(ctx, ranges)
			return err
		})
		if err != nil {
			return nil, err
		}
		vrs := make([]*sheetsapi.ValueRange, len(rows))
		for i, r := range rows {
			vrs[i] = &sheetsapi.ValueRange{Values: r}
		}
		return vrs, nil
	}
	var resp *sheetsapi.BatchGetValuesResponse
	err := s.callWith(ctx, op, b, func(ctx context.Context) error {
		var err error
		resp, err = s.svc.Spreadsheets.Values.BatchGet(s.id).Ranges(ranges...).
			ValueRenderOption(valueRender).DateTimeRenderOption(dateTimeRender).
			Context(ctx).Do()
		if resp != nil {
			s.gclock.saw(resp.Header)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(resp.ValueRanges) != len(ranges) {
		return nil, fmt.Errorf("%s: the Sheets API answered %d ranges for %d requested", op, len(resp.ValueRanges), len(ranges))
	}
	// Decoded whole by the client: the progress is each range's end.
	if progress := progressOf(ctx); progress != nil {
		for i, vr := range resp.ValueRanges {
			if vr != nil {
				progress(i, len(vr.Values))
			}
		}
	}
	return resp.ValueRanges, nil
}

// Load reads every configured tab. The first Load of a store asks for the sheet list first
// (spreadsheets.get: title, time zone, sheet IDs, hidden columns), then, concurrently, one
// values:batchGet of the configured tabs that exist and the Status dropdowns (row 2 of each
// tab with no configured statuses, once per store): three requests, none of them for a tab
// that does not exist (a missing optional tab such as Jobs costs nothing). Later Loads send
// the spreadsheets.get and the batchGet of the tabs the last sheet list showed concurrently:
// two requests; a tab that appeared since is read in one more, and a batchGet that fails
// because a tab went away is sent again for the tabs that are left. Missing tabs land in
// Workbook.Missing, tabs without a required header in Workbook.Broken; the rest load.
//
// Each request retries with the full RetryPolicy, except that a Load that can't connect at
// all (refused, DNS failure) on its first requests fails after one short retry (see
// dialAttempts).
func (s *Store) Load(ctx context.Context) (*model.Workbook, error) {
	const op = "load"
	s.dropPlanned()
	s.loadStarted()
	started := s.now()
	known := s.knownTabs()
	// rows[i] are the rows of s.tabs[i]; read[i] says they were read.
	rows := make([][][]any, len(s.tabs))
	read := make([]bool, len(s.tabs))
	var (
		meta             *sheetsapi.Spreadsheet
		metaErr, valsErr error
		wg               sync.WaitGroup
		speculative      []int
		speculativeVals  [][][]any
	)
	// The first requests have their own budgets but share the dial fuse: when nothing
	// answers at all, they give up together after dialAttempts sends in all.
	fuse := &dialFuse{}
	wg.Go(func() { meta, metaErr = s.getMeta(ctx, op, &budget{fuse: fuse}) })
	if known != nil {
		// The tabs the last sheet list showed, read alongside this one.
		for i, tc := range s.tabs {
			if known[tabKey(tc.Name)] != "" {
				speculative = append(speculative, i)
			}
		}
		if len(speculative) > 0 {
			wg.Go(func() {
				titles := make([]string, len(speculative))
				for j, i := range speculative {
					titles[j] = known[tabKey(s.tabs[i].Name)]
				}
				speculativeVals, valsErr = s.readTitles(ctx, op, &budget{fuse: fuse}, titles)
			})
		}
	}
	wg.Wait()
	if metaErr != nil {
		return nil, metaErr
	}
	s.rememberSheetIDs(meta, true)
	sheetsOf := make([]*sheetsapi.Sheet, len(s.tabs))
	for i, tc := range s.tabs {
		sheetsOf[i] = findSheet(meta, tc.Name)
	}
	switch {
	case valsErr == nil:
		for j, i := range speculative {
			if sheetsOf[i] != nil {
				rows[i], read[i] = speculativeVals[j], true
			}
		}
	case isParseRange(valsErr):
		// A tab went away since the last sheet list: read what is left, below.
		valsErr = nil
	default:
		return nil, valsErr
	}
	// Every tab that exists and was not read yet (the first Load: all of them), with the
	// dropdowns not known yet, concurrently.
	var rest []int
	for i := range s.tabs {
		if sheetsOf[i] != nil && !read[i] {
			rest = append(rest, i)
		}
	}
	var (
		valid map[string]map[int][]string
		vals  [][][]any
	)
	wg.Go(func() { valid = s.fetchDropdowns(ctx, sheetsOf) })
	if len(rest) > 0 {
		titles := make([]string, len(rest))
		for j, i := range rest {
			titles[j] = sheetsOf[i].Properties.Title
		}
		wg.Go(func() { vals, valsErr = s.readTitles(ctx, op, &budget{}, titles) })
	}
	wg.Wait()
	if valsErr != nil {
		return nil, valsErr
	}
	for j, i := range rest {
		rows[i] = vals[j]
	}

	wb := newWorkbook(s.id, meta)
	tails := map[string]int{}
	for i, tc := range s.tabs {
		if sheetsOf[i] == nil {
			wb.Missing = append(wb.Missing, tc)
			continue
		}
		tails[sheetsOf[i].Properties.Title] = len(rows[i])
		if t, err := s.decodeTab(tc, rows[i], sheetsOf[i], wb.Location, valid); err != nil {
			wb.Broken = append(wb.Broken, model.TabError{Config: tc, Err: err})
		} else {
			wb.Tabs = append(wb.Tabs, t)
		}
	}
	wb.Loaded = s.now()
	s.mu.Lock()
	s.tails, s.fullAt = tails, started
	s.mu.Unlock()
	return wb, nil
}

// decodeTab decodes one tab as read, with its sheet's ID, hidden columns and Status dropdown
// (valid: the dropdowns just read, by tab; else the cache).
func (s *Store) decodeTab(tc model.TabConfig, rows [][]any, sh *sheetsapi.Sheet, loc *time.Location, valid map[string]map[int][]string) (*model.Table, error) {
	t, err := model.Decode(tc, rows, loc)
	if err != nil {
		return nil, err
	}
	t.SheetID = sh.Properties.SheetId
	t.Hidden = hiddenByUser(sh, len(t.Header.Headers))
	s.applyDropdown(t, valid)
	return t, nil
}

// readTitles reads whole sheets by title in one values:batchGet.
func (s *Store) readTitles(ctx context.Context, op string, b *budget, titles []string) ([][][]any, error) {
	ranges := make([]string, len(titles))
	for i, t := range titles {
		ranges[i] = quoteTab(t)
	}
	vrs, err := s.batchGet(s.withTabProgress(ctx, titles), op, b, ranges)
	if err != nil {
		return nil, err
	}
	out := make([][][]any, len(vrs))
	for i, vr := range vrs {
		if vr != nil {
			out[i] = vr.Values
		}
	}
	return out, nil
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

// fetchDropdowns reads the data validation of row 2 of every tab that exists (sheetsOf) and
// has neither configured statuses nor cached dropdowns, in one spreadsheets.get: before the
// tab is decoded its Status column is not known, so the whole row is asked for (a few bytes
// a cell) and applyDropdown picks the column. It returns each tab's ONE_OF_LIST values by
// column, by normalised tab name; nil when nothing was asked or the request failed (the
// defaults stand, and the next Load asks again).
func (s *Store) fetchDropdowns(ctx context.Context, sheetsOf []*sheetsapi.Sheet) map[string]map[int][]string {
	var ranges, keys []string
	s.mu.Lock()
	for i, tc := range s.tabs {
		if sheetsOf[i] == nil || len(tc.Statuses) > 0 {
			continue
		}
		if _, done := s.dropdowns[tabKey(tc.Name)]; !done {
			ranges = append(ranges, quoteTab(sheetsOf[i].Properties.Title)+"!2:2")
			keys = append(keys, tabKey(tc.Name))
		}
	}
	s.mu.Unlock()
	if len(ranges) == 0 {
		return nil
	}
	var resp *sheetsapi.Spreadsheet
	err := s.call(ctx, "read Status dropdowns", func(ctx context.Context) error {
		var err error
		resp, err = s.svc.Spreadsheets.Get(s.id).Ranges(ranges...).Fields(validationFields).Context(ctx).Do()
		return err
	})
	if err != nil {
		return nil
	}
	out := map[string]map[int][]string{}
	for i, k := range keys {
		var sh *sheetsapi.Sheet
		for _, x := range resp.Sheets {
			if x != nil && x.Properties != nil && tabKey(x.Properties.Title) == k {
				sh = x
			}
		}
		if sh == nil && len(resp.Sheets) == len(keys) && (resp.Sheets[i].Properties == nil || resp.Sheets[i].Properties.Title == "") {
			sh = resp.Sheets[i] // no titles in the answer: same order as asked
		}
		out[k] = rowValidations(sh)
	}
	return out
}

// applyDropdown sets Table.Statuses from the Status column's data validation for a tab with
// no configured list: from valid when this Load read it (and then cached: a tab is asked
// once), else from the cache.
func (s *Store) applyDropdown(t *model.Table, valid map[string]map[int][]string) {
	if len(t.Config.Statuses) > 0 {
		return
	}
	k := tabKey(t.Config.Name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if byCol, ok := valid[k]; ok {
		var v []string
		if c := t.Header.Col(model.FStatus); c >= 0 {
			v = byCol[c]
		}
		s.dropdowns[k] = v
	}
	if v := s.dropdowns[k]; len(v) > 0 && t.Header.Has(model.FStatus) {
		t.Statuses = append([]string(nil), v...)
	}
}

// rowValidations returns the ONE_OF_LIST values of every cell of a sheet's returned data that
// has one, by column.
func rowValidations(sh *sheetsapi.Sheet) map[int][]string {
	out := map[int][]string{}
	if sh == nil {
		return out
	}
	for _, gd := range sh.Data {
		if gd == nil || len(gd.RowData) == 0 || gd.RowData[0] == nil {
			continue
		}
		for c, cd := range gd.RowData[0].Values {
			if v := oneOfList(cd); v != nil {
				out[int(gd.StartColumn)+c] = v
			}
		}
	}
	return out
}

// oneOfList reads a cell's ONE_OF_LIST rule: trimmed, in the dropdown's own spelling, blanks
// and case-insensitive duplicates dropped; nil when the cell has no such rule.
func oneOfList(cd *sheetsapi.CellData) []string {
	if cd == nil || cd.DataValidation == nil || cd.DataValidation.Condition == nil {
		return nil
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
