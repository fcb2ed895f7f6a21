package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/triage-dev/triage/internal/netshape"
	"github.com/triage-dev/triage/postgres/pgtest"
)

// set-status of 50 IDs on a database is a handful of round trips, as a 20 ms network would
// make a person wait for them, connecting included: counted on the wire through a proxy, the
// whole command (open, the schema check, reading the named rows, one Apply). The sheet's
// set-status takes a few requests whatever the number of IDs; the database's must not be a
// statement per ID either.
func TestSetStatusOf50IDsIsAFewRoundTrips(t *testing.T) {
	db, _ := migratedDB(t, `INSERT INTO inbox (id, "timestamp", name, email, message, status)
SELECT 'm' || g, '2026-03-01T10:00:00Z', 'N', 'n@example.com', 'hi', 'new' FROM generate_series(1, 1000) g`)
	wire := &netshape.Shaper{}
	c := newCLI(t, "")
	c.env["TRIAGE_DATABASE_URL"] = pgtest.Through(t, db, wire)
	args := []string{"set-status", "--tab", "Inbox", "--status", "done"}
	for i := 1; i <= 50; i++ {
		args = append(args, fmt.Sprintf("m%d", i*7))
	}
	var st statements
	r := c.runTraced(&st, args...)
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "50") {
		t.Fatalf("set-status: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	trips := wire.RoundTrips()
	t.Logf("set-status of 50 IDs: %d round trips", trips)
	if trips > 12 {
		t.Errorf("set-status of 50 IDs took %d round trips, want at most 12; its statements:\n%s", trips, strings.Join(st.sql, "\n"))
	}
}
