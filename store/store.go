// Package store states, once, the contract every triage store keeps: the sheet's
// (sheets.Store, the Sheets API) and the database's (postgres.Store, PostgreSQL). The TUI, the
// replay runner, the producer, `triage serve` and the commands talk to a store only through
// the interfaces declared here, each naming the subset it needs, so that any store that keeps
// this contract serves all of them; store/storetest holds every store to it with one body of
// tests (storetest.Exercise), which both stores' own tests run.
//
// What a store promises (the invariants are docs/DESIGN.md §3's, by number):
//
//   - Load reads the workbook: every configured tab that exists, decoded by model's rules (a
//     row that can't be decoded is kept with its problem; one bad row never fails a load).
//     Record.Row is for display and for the journal only: nothing is ever written by it.
//   - LoadTab reads one tab (a configured tab's name or a role's), for a command that works
//     on it alone; its rows are the next Apply's first read where the store can use them.
//   - Apply writes edits by identity, never by a remembered row number (invariant 1): each
//     edit's row is found at write time by its ID (a dead letter's effective key), written only
//     if every cell it expects still holds what the person saw (else a Conflict naming the
//     cell, what was seen and what is there now, and nothing of that edit written), and only
//     the cells whose value changes, with the audit stamp; edits of one call apply in order
//     (a later one sees an earlier one's values). An edit whose ID is gone is Missing. A
//     write is reported done only with proof; one that may have landed is an error wrapping
//     model.ErrMayHaveLanded, never a guess. Text is stored as text (invariant 2). A key that
//     holds a value is never changed, and a key is never given to a second row (invariant 3).
//     The person recorded is the context's (model.WithActor) where it names one.
//   - DeadLetter records failed calls as rows of the dead-letter tab, status dead, each with
//     the key it was given (a replay mints one for a letter without); on an error none of
//     them is to be taken as recorded.
//   - ReadOnly reports a store that refuses every write (Apply, DeadLetter, leases) before
//     sending anything (invariant 11).
//   - Tabs is the configured tabs, in display order; SpreadsheetID names what the store works
//     on (a spreadsheet's ID, a database's URL with its password redacted).
//   - Changed answers, cheaply, whether a refresh must read: true for every change the store
//     can see since the last Load (the sheet's Drive version lags by minutes, so an edit it
//     doesn't show yet is read by the next full read, FullReadEvery); an error means it
//     can't tell (the caller reads). ChangeCheckMode says how it learns of changes now; a
//     mode starting with "full reads" has no working check.
//
// Optional extensions, asked for by a type assertion: HistorySearcher (a store whose Load
// leaves settled rows out and searches them on demand) and Leaser (replay leases: no dead
// letter is sent by two runs at once, invariant 14).
package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/triage-dev/triage/model"
)

// Store is the whole contract every backend keeps (see the package comment for what each
// method promises). sheets.Store and postgres.Store satisfy it; storetest.Exercise holds them
// to it.
type Store interface {
	Loader
	TabLoader
	Applier
	DeadLetterSink
	ReadOnlyReporter
	ChangeChecker
	ChangeCheckModer
	// Tabs returns the configured tabs, in display order.
	Tabs() []model.TabConfig
	// SpreadsheetID names what the store works on (a database's URL, redacted).
	SpreadsheetID() string
}

// Loader reads the whole workbook.
type Loader interface {
	// Load reads every configured tab that exists (the package comment says what it promises).
	Load(ctx context.Context) (*model.Workbook, error)
}

// TabLoader reads one tab, for a command that works on it alone.
type TabLoader interface {
	// LoadTab reads the tab a name (a configured tab's name, or a role's) names.
	LoadTab(ctx context.Context, name string) (*model.Workbook, error)
}

// Applier writes edits by identity, conditionally (invariant 1).
type Applier interface {
	// Apply writes edits as the package comment says: by identity, only where every expected
	// cell still holds what was seen, reported done only with proof.
	Apply(ctx context.Context, edits []model.Edit) (model.ApplyResult, error)
}

// DeadLetterSink records failed calls as dead letters.
type DeadLetterSink interface {
	// DeadLetter records every letter or returns an error; on an error none of them is to be
	// taken as recorded.
	DeadLetter(ctx context.Context, letters []model.DeadLetter) error
}

// ReadOnlyReporter is a store that can say it refuses every write (invariant 11).
type ReadOnlyReporter interface {
	// ReadOnly reports whether the store refuses every write.
	ReadOnly() bool
}

// ChangeChecker is a store that can tell, cheaply, whether a refresh must read: the sheet
// asks Drive for the file's version (a few hundred bytes where a full read of 100,000 rows is
// 15 MB) or probes the row after each tab's last; the database answers from its change
// notices, without a query.
type ChangeChecker interface {
	// Changed reports whether the store has seen a change since the last Load; an error
	// means it can't tell (read), and says why.
	Changed(ctx context.Context) (bool, error)
}

// ChangeCheckModer is a store that says how its refreshes learn of changes right now. A mode
// starting with "full reads" means it has no working check.
type ChangeCheckModer interface {
	// ChangeCheckMode describes the change check now in use.
	ChangeCheckMode() string
}

// Editor is what the TUI needs of a store: read the workbook, write edits, and say whether it
// may write at all.
type Editor interface {
	Loader
	Applier
	ReadOnlyReporter
}

// HistorySearcher is a store that loads only part of its rows and searches the rest
// (postgres.Store: Load returns the open work, SearchHistory runs a search in SQL with bound
// parameters). The rows it returns carry their IDs, so a write on them goes through Apply as
// any other.
type HistorySearcher interface {
	// NeedsHistory reports whether q selects rows of the tab that Load doesn't return (a
	// settled status, a time range over every status). It answers from what the store knows,
	// without I/O: the TUI asks it in Update.
	NeedsHistory(tab string, q model.HistorySearch) bool
	// SearchHistory returns the rows of the tab q selects, newest first, at most q.Limit.
	SearchHistory(ctx context.Context, tab string, q model.HistorySearch) (*model.Table, error)
}

// Leaser is a store that leases dead letters to one replay run at a time (invariant 14; see
// model.Leases): a row is leased to one live run; another run is told who holds it; a
// released, expired or provably dead run's rows are free again.
type Leaser interface {
	// Lease takes the free rows among keys for this run and names the holders of the rest.
	Lease(ctx context.Context, tab string, keys []string) (model.Leases, error)
	// Renew moves the run's lease on.
	Renew(ctx context.Context, l model.Leases) error
	// Release frees the rows of l that this run still holds.
	Release(ctx context.Context, l model.Leases) error
}

// FindTab returns the configured tab with a name: the exact name first, then one that
// matches ignoring case.
func FindTab(tabs []model.TabConfig, name string) (model.TabConfig, bool) {
	for _, tc := range tabs {
		if tc.Name == name {
			return tc, true
		}
	}
	for _, tc := range tabs {
		if strings.EqualFold(tc.Name, name) {
			return tc, true
		}
	}
	return model.TabConfig{}, false
}

// TabNames lists the configured tabs' names, quoted, for an error that names what is
// configured ("none" when nothing is).
func TabNames(tabs []model.TabConfig) string {
	q := make([]string, len(tabs))
	for i, tc := range tabs {
		q[i] = strconv.Quote(tc.Name)
	}
	if len(q) == 0 {
		return "none"
	}
	return strings.Join(q, ", ")
}

// ApplyOp names an Apply of n edits in its errors: "write 1 edit", "write 3 edits".
func ApplyOp(n int) string {
	op := fmt.Sprintf("write %d edit", n)
	if n != 1 {
		op += "s"
	}
	return op
}

// EditTabs is the start every Apply shares once it may write: each edit's configured tab, in
// the edits' order, or the error naming the first edit whose tab is not configured (nothing
// is sent, so nothing was written).
func EditTabs(op string, tabs []model.TabConfig, edits []model.Edit) ([]model.TabConfig, error) {
	out := make([]model.TabConfig, len(edits))
	for i, e := range edits {
		tc, ok := FindTab(tabs, e.Tab)
		if !ok {
			return nil, fmt.Errorf("%s: tab %q is not a configured tab (configured: %s); nothing was written", op, e.Tab, TabNames(tabs))
		}
		out[i] = tc
	}
	return out, nil
}

// Actor is the person an Apply records: the context's (model.WithActor: one store serves
// every session of `triage serve`, each write recording its own person), else the store's own.
func Actor(ctx context.Context, own string) string {
	if a := model.ActorFrom(ctx); a != "" {
		return a
	}
	return own
}
