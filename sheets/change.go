package sheets

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	drive "google.golang.org/api/drive/v3"
	"google.golang.org/api/googleapi"

	"github.com/triage-dev/triage/model"
)

// ErrNoChangeCheck wraps the error of a change check the credential doesn't allow (Drive
// answered 401/403/404: no Drive scope, or the Drive API not enabled): the store falls back
// to full reads for good.
var ErrNoChangeCheck = errors.New("the change check is off")

// changeCheck is a Store's Drive version check.
type changeCheck struct {
	files *drive.FilesService
	mu    sync.Mutex
	// loaded is the version the last Load's data is at least as new as (0: unknown);
	// pending the version the last Changed saw, which the next Load adopts: it was read
	// before that Load's reads started, so the data is at least that new.
	loaded, pending int64
	// off says why the check is off ("" while it works).
	off string
}

// WithDrive turns on the change check through a Drive service (Connect's, or a test's
// against the emulator). Call it before the store is used.
func (s *Store) WithDrive(svc *drive.Service) *Store {
	if svc != nil {
		s.change = &changeCheck{files: svc.Files}
	}
	return s
}

// ChangeCheckMode says how refreshes learn of changes, for `config check` and status lines.
func (s *Store) ChangeCheckMode() string {
	probe := fmt.Sprintf("the row after each tab's last every refresh, the whole sheet every %s", s.fullEvery)
	c := s.change
	if c == nil {
		return "tail probe and full reads (no Drive access: the credential or the endpoint offers no change check; " + probe + ")"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off != "" {
		return "tail probe and full reads (" + c.off + "; " + probe + ")"
	}
	return "change check (Drive files.get version, a few hundred bytes per refresh; Drive's version lags by minutes, so also " + probe + ")"
}

// DefaultFullReadEvery is how often a refresh reads the whole sheet when nothing says it
// changed (Options.FullReadEvery).
const DefaultFullReadEvery = 5 * time.Minute

// Changed reports whether the spreadsheet changed since the last Load (store.ChangeChecker),
// for a few hundred bytes: true when the Drive version differs from the one that Load was at, or when that is
// unknown (a Load not preceded by Changed; the first call); else when the tail probe finds a
// row after the last one the Load read of some tab (a form's or a producer's append, which
// Drive's version, refreshed only every few minutes, may not show yet); else when the last
// full read is FullReadEvery old. When Drive refuses the credential (no Drive scope, API not
// enabled) it returns true and an error wrapping ErrNoChangeCheck, once; from then on, as
// with no Drive access at all, the tail probe and the full-read interval decide.
func (s *Store) Changed(ctx context.Context) (bool, error) {
	changed, err := s.versionChanged(ctx)
	switch {
	case err != nil:
		return true, err
	case changed:
		return true, nil
	}
	s.mu.Lock()
	tails, fullAt := s.tails, s.fullAt
	s.mu.Unlock()
	if tails == nil || s.now().Sub(fullAt) >= s.fullEvery {
		return true, nil
	}
	grew, err := s.tailsGrew(ctx, tails)
	if err != nil {
		return true, err
	}
	return grew, nil
}

// versionChanged is the Drive version check: whether the version moved (or is unknown);
// false where there is no check to make.
func (s *Store) versionChanged(ctx context.Context) (bool, error) {
	c := s.change
	if c == nil {
		return false, nil
	}
	c.mu.Lock()
	off := c.off
	c.mu.Unlock()
	if off != "" {
		return false, nil
	}
	var v int64
	err := s.call(ctx, "check the sheet for changes", func(ctx context.Context) error {
		f, err := c.files.Get(s.id).Fields("version").SupportsAllDrives(true).Context(ctx).Do()
		if err == nil {
			v = f.Version
		}
		return err
	})
	var gerr *googleapi.Error
	if errors.As(err, &gerr) && (gerr.Code == 401 || gerr.Code == 403 || gerr.Code == 404) {
		why := fmt.Sprintf("Drive answered %d to files.get: give the credential the %s scope, or enable the Drive API", gerr.Code, drive.DriveMetadataReadonlyScope)
		if gerr.Code == 404 {
			why = fmt.Sprintf("Drive answered 404 to files.get: the file is not visible to Drive for this credential (the %s scope, shared with its account)", drive.DriveMetadataReadonlyScope)
		}
		c.mu.Lock()
		c.off = why
		c.mu.Unlock()
		return true, fmt.Errorf("%w: %s; refreshes read the rows after each tab's last, and the whole sheet every %s", ErrNoChangeCheck, why, s.fullEvery)
	}
	if err != nil {
		return true, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = v
	return c.loaded == 0 || v != c.loaded, nil
}

// tailsGrew is the tail probe: one values:batchGet of the row after the last one the last
// Load read of each tab; a value in any is a row appended since. A tab gone (or renamed)
// since is a change too.
func (s *Store) tailsGrew(ctx context.Context, tails map[string]int) (bool, error) {
	titles := make([]string, 0, len(tails))
	for t := range tails {
		titles = append(titles, t)
	}
	slices.Sort(titles)
	ranges := make([]string, len(titles))
	for i, t := range titles {
		next := strconv.Itoa(tails[t] + 1)
		ranges[i] = quoteTab(t) + "!" + next + ":" + next
	}
	vrs, err := s.batchGet(ctx, "check the sheet for new rows", &budget{}, ranges)
	if isParseRange(err) {
		return true, nil
	}
	if isGridLimit(err) {
		// A tab's grid ends at its last row: an append grows it first, so nothing was added
		// to that one. Each tab is asked alone, so the others are still probed.
		if len(titles) == 1 {
			return false, nil
		}
		return s.tailsGrewOneByOne(ctx, tails, titles)
	}
	if err != nil {
		return false, err
	}
	for _, vr := range vrs {
		if vr == nil {
			continue
		}
		for _, row := range vr.Values {
			for _, v := range row {
				if model.CellString(v) != "" {
					return true, nil
				}
			}
		}
	}
	return false, nil
}

// loadStarted is called as a Load starts: the version Changed saw just before is what that
// Load's data is at least as new as; without one, nothing is known.
func (s *Store) loadStarted() {
	if c := s.change; c != nil {
		c.mu.Lock()
		c.loaded, c.pending = c.pending, 0
		c.mu.Unlock()
	}
}

// tailsGrewOneByOne is the tail probe a tab at a time, for when a tab's grid ends at its last
// row (Google refuses a range past the grid): such a tab has had nothing appended.
func (s *Store) tailsGrewOneByOne(ctx context.Context, tails map[string]int, titles []string) (bool, error) {
	for _, t := range titles {
		grew, err := s.tailsGrew(ctx, map[string]int{t: tails[t]})
		if err != nil || grew {
			return grew, err
		}
	}
	return false, nil
}

// isGridLimit reports whether err is Google's 400 for a range past a sheet's grid ("Range
// ('Inbox'!1002:1002) exceeds grid limits").
func isGridLimit(err error) bool {
	var gerr *googleapi.Error
	return errors.As(err, &gerr) && gerr.Code == 400 && strings.Contains(gerr.Message+gerr.Body, "exceeds grid limits")
}
