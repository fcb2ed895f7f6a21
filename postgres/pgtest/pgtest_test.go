package pgtest_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/triage-dev/triage/postgres/pgtest"
)

func TestMain(m *testing.M) {
	if os.Getenv("PGTEST_LEAK") == "1" {
		// A test process killed outright: its cluster started, never stopped.
		c, err := pgtest.Start()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println(c.Dir)
		os.Exit(0)
	}
	pgtest.Main(m)
}

// TestAKilledRunsServerIsReaped: a cluster whose test process is gone (killed before its
// TestMain could stop it) is stopped and removed by the next cluster's start, so leaked
// servers don't pile up on a developer's machine or a CI runner.
func TestAKilledRunsServerIsReaped(t *testing.T) {
	if os.Getenv("CI") != "true" {
		if _, err := exec.LookPath("pg_ctl"); err != nil {
			t.Skip(pgtest.InstallHint)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PGTEST_LEAK=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the leaking process: %v", err)
	}
	dir := strings.TrimSpace(string(out))
	pidFile := filepath.Join(dir, "data", "postmaster.pid")
	if _, err := os.Stat(pidFile); err != nil {
		t.Fatalf("the leaked server isn't running (%v): the test can't tell a reap from nothing", err)
	}
	c, err := pgtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the leaked cluster %s is still there after the next start (%v)", dir, err)
	}
}

// TestDatabasesAreSeparate: two tests' databases are two databases of one running server.
func TestDatabasesAreSeparate(t *testing.T) {
	a, b := pgtest.DB(t), pgtest.DB(t)
	if a == b {
		t.Fatalf("one URL for two databases: %s", a)
	}
	ctx := t.Context()
	ca, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(ctx)
	if _, err := ca.Exec(ctx, "CREATE TABLE only_here (x int)"); err != nil {
		t.Fatal(err)
	}
	cb, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(ctx)
	var n int
	if err := cb.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 'only_here'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("a table made in one test's database is in another's")
	}
	var v string
	if err := ca.QueryRow(ctx, "SHOW server_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	t.Logf("server %s at %s", v, a)
}
