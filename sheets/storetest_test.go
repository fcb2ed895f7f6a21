package sheets_test

import (
	"testing"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/store/storetest"
)

// TestStoreContract holds the sheet store to the store contract (store/storetest): every
// invariant both stores keep, each subtest on a fresh spreadsheet in the emulator over HTTP.
// The sheet store's answers to the random calls are the recorded reference
// (storetest/testdata/agree.txt) the postgres store is held to.
func TestStoreContract(t *testing.T) {
	storetest.Exercise(t, func(t *testing.T) storetest.Backend { return testbed.SheetBackend(t, nil) })
}
