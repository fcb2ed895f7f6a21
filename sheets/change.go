package sheets

import (
	"context"
	"errors"
	"fmt"
	"sync"

	drive "google.golang.org/api/drive/v3"
	"google.golang.org/api/googleapi"
)

// ChangeChecker is a store that can tell, for a few hundred bytes, whether the spreadsheet
// changed since its last Load (Store does, through Drive's files.get version, when the
// credential allows). A refresh loop calls Changed before a full read and skips the read when
// it says false; an error means it can't tell (read), and says why.
type ChangeChecker interface {
	Changed(ctx context.Context) (bool, error)
}

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
	c := s.change
	if c == nil {
		return "full reads (no Drive access: the credential or the endpoint offers no change check)"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off != "" {
		return "full reads (" + c.off + ")"
	}
	return "change check (Drive files.get version, a few hundred bytes per refresh)"
}

// Changed reports whether the spreadsheet changed since the last Load: true when the Drive
// version differs from the one that Load was at, or when that is unknown (a Load not preceded
// by Changed; the first call). With no Drive access it always says true; when Drive refuses
// the credential (no Drive scope, API not enabled) it returns true and an error wrapping
// ErrNoChangeCheck, once, and then true for good: refreshes fall back to full reads.
func (s *Store) Changed(ctx context.Context) (bool, error) {
	c := s.change
	if c == nil {
		return true, nil
	}
	c.mu.Lock()
	off := c.off
	c.mu.Unlock()
	if off != "" {
		return true, nil
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
		return true, fmt.Errorf("%w: %s; every refresh reads the whole sheet", ErrNoChangeCheck, why)
	}
	if err != nil {
		return true, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = v
	return c.loaded == 0 || v != c.loaded, nil
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
