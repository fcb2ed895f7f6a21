// Package storetest holds every store to the store contract (package store) with one body of
// tests: Exercise runs each invariant a store keeps (docs/DESIGN.md §3) as a subtest against
// a fresh backend that the caller opens. Each store's own tests call it with an opener over
// its real backend: sheets' through the emulator over HTTP (internal/testbed.SheetBackend),
// postgres' against the package's private server (postgres/pgtest), so the postgres store is
// held to the sheet store's answers without either store's tests importing the other.
//
// It is imported by tests only (a production file importing it is a bug;
// internal/testbed's TestOnlyTestsImportTheTestbed holds that), and of ours it imports only
// model and store.
package storetest

import (
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/store"
)

// Backend is a store over its real backend, and the means to act behind its back as another
// person, or another process, would. Its Store holds Seed under Tabs, writes as Actor and
// stamps with Now; every function field is required.
type Backend struct {
	// Name names the backend in subtests and failures ("sheet", "postgres").
	Name string
	// Reference says this backend's answers are the ones every store must give (the sheet
	// store's): -storetest.update records them from it.
	Reference bool
	// Store is the store under test.
	Store store.Store
	// ErrReadOnly is the error a read-only store's writes wrap.
	ErrReadOnly error
	// OpenReadOnly opens another store over the same backend, read-only.
	OpenReadOnly func(t *testing.T) store.Store
	// Set writes one cell of the row with an identity directly, as another person would.
	Set func(t *testing.T, role model.Role, id string, f model.Field, v string)
	// Row reads the cells of the row with an identity as the backend holds them, every
	// field of the tab's schema ("" for an empty cell).
	Row func(t *testing.T, role model.Role, id string) map[model.Field]string
	// Between runs f once, between Store's next read for a write and that write.
	Between func(f func())
	// Runner opens a store of its own over the same backend, writing as actor: another
	// process, as far as the backend can tell (a replay run's leases are its own).
	Runner func(t *testing.T, actor string) store.Leaser
	// DeadRunner is a Runner whose process is gone the moment its Lease returns, without
	// releasing anything (kill -9, an OOM kill).
	DeadRunner func(t *testing.T, actor string) store.Leaser
	// Expire makes every replay lease taken so far run out.
	Expire func(t *testing.T)
}

// Now is the clock every Backend's Store stamps with.
var Now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Clock returns Now (a store's Options.Now).
func Clock() time.Time { return Now }

// Actor is the person every Backend's Store writes as when the context names nobody.
const Actor = "tester"

// Seed is every backend's starting workbook: each role's tab with the schema's headers
// (SchemaHeaders), as `triage init` makes them, and rows of text, cells in schema order.
func Seed() map[model.Role][][]string {
	return map[model.Role][][]string{
		model.RoleInbox: {
			// Timestamp, Name, Email, Message, Status, ID, triaged_by, triaged_at
			{"2026-02-01T09:00:00Z", "Ada", "ada@example.com", "hello", "new", "m1", "", ""},
			{"2026-02-01T10:00:00Z", "Bo", "bo@example.com", "=1+1", "new", "m2", "", ""},
			{"2026-02-01T11:00:00Z", "Cy", "cy@example.com", "bye", "read", "m3", "", ""},
		},
		model.RoleDeadLetter: {
			// timestamp, source, url, payload, error, attempts, method, key, status, replayed_at, triaged_by, triaged_at
			{"2026-02-02T09:00:00Z", "stripe", "https://example.com/hook", `{"n":1}`, "500", "3", "POST", "k1", "dead", "", "", ""},
			{"2026-02-02T10:00:00Z", "stripe", "https://example.com/hook", `{"n":2}`, "500", "3", "POST", "k2", "rejected", "", "", ""},
			{"2026-02-02T11:00:00Z", "stripe", "https://example.com/hook", `{"n":3}`, "timeout", "0", "POST", "", "dead", "", "", ""},
		},
		model.RoleQueue: {
			// id, type, payload, status, claimedBy, claimedAt, lastError, updatedAt, attempts, triaged_by, triaged_at
			{"j1", "email", `{"to":"a"}`, "pending", "", "", "", "", "0", "", ""},
			{"j2", "email", `{"to":"b"}`, "claimed", "w1", "2026-03-01T10:00:00Z", "", "", "1", "", ""},
			{"j3", "email", `{"to":"c"}`, "error", "w2", "2026-03-01T09:00:00Z", "boom", "", "1", "", ""},
		},
	}
}

// Tabs is every role's tab under its default configuration: a Backend's Store's tabs.
func Tabs() []model.TabConfig {
	var out []model.TabConfig
	for _, r := range model.Roles {
		out = append(out, model.DefaultTabConfig(r))
	}
	return out
}

// SchemaHeaders is the header row of a role's tab as `triage init` writes it.
func SchemaHeaders(r model.Role) []string {
	var h []string
	for _, c := range model.SchemaFor(r).Columns {
		h = append(h, c.Header)
	}
	return h
}

// Exercise runs the store contract against backends that open opens, a fresh one per subtest
// (a subtest may open more than one): loads, conditional writes, keys, read-only, dead
// letters, the actor, random calls against the sheet store's recorded answers, and replay
// leases.
func Exercise(t *testing.T, open func(t *testing.T) Backend) {
	t.Helper()
	for _, c := range []struct {
		name string
		body func(t *testing.T, open func(t *testing.T) Backend)
	}{
		{"LoadReadsTheSameWorkbook", testLoadReadsTheSameWorkbook},
		{"ConflictIsExactAndWritesNothing", testConflictIsExactAndWritesNothing},
		{"ChangeBetweenReadAndWriteIsAConflict", testChangeBetweenReadAndWriteIsAConflict},
		{"WriteLandsOnItsRowOnly", testWriteLandsOnItsRowOnly},
		{"MissingUnchangedAndInOrder", testMissingUnchangedAndInOrder},
		{"KeyNeverChanges", testKeyNeverChanges},
		{"ReadOnlyWritesNothing", testReadOnlyWritesNothing},
		{"DeadLetterRecordsTheCall", testDeadLetterRecordsTheCall},
		{"ActorPerCall", testActorPerCall},
		{"BatchedApplyAgreesWithTheSheet", testBatchedApplyAgreesWithTheSheet},
		{"LeaseContract", testLeaseContract},
	} {
		t.Run(c.name, func(t *testing.T) { c.body(t, open) })
	}
}

// EqualRows reports whether two rows (Backend.Row's answers) hold the same cells.
func EqualRows(a, b map[model.Field]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
