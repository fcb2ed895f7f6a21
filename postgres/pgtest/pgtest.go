// Package pgtest starts a private PostgreSQL cluster for a package's tests: `initdb` into a
// temporary directory, then `pg_ctl start` listening only on a Unix socket in that directory,
// one cluster per package test run (Main, from TestMain), stopped and removed at the end. Each
// test gets its own database (DB), so tests never see each other's rows.
//
// Nothing is faked: the tests talk to a real server. Where the server's binaries are missing,
// the tests skip with a message saying how to install them; under CI=true they fail instead,
// so CI can't pass by skipping.
//
// initdb refuses to run as root; when the tests run as root (CI does), the cluster is made and
// run as an unprivileged user (postgres, else nobody) through the process's credentials, and
// its directory is handed to that user.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/triage-dev/triage/internal/netshape"
)

// Superuser is the cluster's superuser (initdb -U); local connections are trusted.
const Superuser = "triage"

// InstallHint says how to get the server binaries.
const InstallHint = "install the PostgreSQL server (Debian/Ubuntu: apt-get install postgresql; the tests look for initdb and pg_ctl on PATH and in /usr/lib/postgresql/*/bin)"

// Cluster is a running private cluster.
type Cluster struct {
	// Dir holds the data directory, the socket and the log.
	Dir string
	// SocketDir is the Unix socket's directory (the libpq host).
	SocketDir string
	bin       string
	cred      *syscall.Credential
	dbs       atomic.Int64
}

var (
	cluster *Cluster
	// unavailable is why no cluster runs (the binaries are missing), for DB's skip.
	unavailable string
)

// Main starts the package's cluster, runs its tests and stops it. Call it from TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// Without the server binaries the tests that need a database skip (DB says why), unless CI is
// "true": then Main fails the run.
func Main(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	c, err := Start()
	switch {
	case errors.Is(err, errNoServer) && os.Getenv("CI") != "true":
		unavailable = err.Error()
	case err != nil:
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		return 1
	default:
		cluster = c
		defer c.Stop()
	}
	return m.Run()
}

var errNoServer = errors.New("no PostgreSQL server binaries (initdb, pg_ctl): " + InstallHint)

// binDir finds the directory holding initdb and pg_ctl: PATH first, then the Debian layout.
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("pg_ctl"); err == nil {
			if real, err := filepath.EvalSymlinks(p); err == nil {
				return filepath.Dir(real), nil
			}
			return filepath.Dir(p), nil
		}
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	for i := len(matches) - 1; i >= 0; i-- {
		d := filepath.Dir(matches[i])
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d, nil
		}
	}
	return "", errNoServer
}

// Start makes and starts a cluster in a new temporary directory. Stop ends it and removes the
// directory.
func Start() (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		if cred, err = unprivileged(); err != nil {
			return nil, err
		}
	}
	reapStale(bin, cred)
	// A short path: a Unix socket's path is limited to ~100 bytes. The test process's PID in
	// the name lets a later run stop a server whose test process was killed (reapStale).
	dir, err := os.MkdirTemp("", fmt.Sprintf("pgt-%d-", os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("pgtest: temporary directory: %w", err)
	}
	c := &Cluster{Dir: dir, SocketDir: dir, bin: bin, cred: cred}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: hand %s to the server's user: %w", dir, err)
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := c.cmd("initdb", "-D", data, "-U", Superuser, "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	opts := fmt.Sprintf("-c listen_addresses='' -c unix_socket_directories='%s' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200", dir)
	if out, err := c.cmd("pg_ctl", "start", "-w", "-D", data, "-l", filepath.Join(dir, "log"), "-o", opts).CombinedOutput(); err != nil {
		logText, _ := os.ReadFile(filepath.Join(dir, "log"))
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: pg_ctl start: %w\n%s\n%s", err, out, logText)
	}
	return c, nil
}

// reapStale stops and removes the clusters of test processes that are gone: pg_ctl detaches
// the server, so a test run killed outright (SIGKILL, a CI timeout) leaves it running, with
// its memory and its directory, until a later run finds it here.
func reapStale(bin string, cred *syscall.Credential) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "pgt-*-*"))
	for _, dir := range dirs {
		var pid int
		if _, err := fmt.Sscanf(filepath.Base(dir), "pgt-%d-", &pid); err != nil || pid <= 0 || alive(pid) {
			continue
		}
		c := &Cluster{Dir: dir, bin: bin, cred: cred}
		if _, err := os.Stat(filepath.Join(dir, "data", "postmaster.pid")); err == nil {
			_ = c.cmd("pg_ctl", "stop", "-w", "-m", "immediate", "-D", filepath.Join(dir, "data")).Run()
		}
		os.RemoveAll(dir)
	}
}

// alive reports whether a process with this PID exists (signal 0 checks without sending).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// unprivileged returns the credentials of the user the server runs as when we are root.
func unprivileged() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil {
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
	}
	return nil, errors.New("pgtest: running as root, and neither a postgres nor a nobody user exists to run the server as (initdb refuses root): add one (useradd postgres) or run the tests as another user")
}

func (c *Cluster) cmd(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.Dir = c.Dir
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
		// The server's user may not read root's home or working directory.
		cmd.Env = append(os.Environ(), "HOME="+c.Dir)
	}
	return cmd
}

// Stop stops the server (fast shutdown: open connections are ended) and removes its directory.
func (c *Cluster) Stop() {
	var out bytes.Buffer
	cmd := c.cmd("pg_ctl", "stop", "-w", "-m", "fast", "-D", filepath.Join(c.Dir, "data"))
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: pg_ctl stop: %v\n%s", err, out.String())
	}
	os.RemoveAll(c.Dir)
}

// URL is the connection URL of a database of the cluster.
func (c *Cluster) URL(db string) string {
	u := url.URL{Scheme: "postgres", User: url.User(Superuser), Path: "/" + db}
	q := url.Values{}
	q.Set("host", c.SocketDir)
	q.Set("sslmode", "disable")
	u.RawQuery = q.Encode()
	return u.String()
}

// Through returns a URL of the same database as dbURL (one of the cluster's, on its Unix
// socket) reached over loopback TCP through s, a shaped network, which serves until the test
// ends: a benchmark's 2 ms round trip, or a test's count of round trips (s.RoundTrips).
func Through(t testing.TB, dbURL string, s *netshape.Shaper) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	socket := filepath.Join(q.Get("host"), ".s.PGSQL.5432")
	s.Dial = func() (net.Conn, error) { return net.Dial("unix", socket) }
	addr, stop, err := netshape.Start(s, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	q.Del("host")
	u.RawQuery = q.Encode()
	u.Host = addr
	return u.String()
}

// CreateDatabase makes a new empty database and returns its URL.
func (c *Cluster) CreateDatabase(ctx context.Context) (string, error) {
	name := fmt.Sprintf("t%d", c.dbs.Add(1))
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return "", fmt.Errorf("pgtest: connect: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("pgtest: create database: %w", err)
	}
	return c.URL(name), nil
}

// DB returns the URL of a new empty database for this test, on the package's cluster (Main).
// Without a cluster it skips the test, saying how to install the server.
func DB(t testing.TB) string {
	t.Helper()
	if cluster == nil {
		if unavailable == "" {
			t.Fatal("pgtest: no cluster: call pgtest.Main(m) from the package's TestMain")
		}
		t.Skip(unavailable)
	}
	u, err := cluster.CreateDatabase(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return u
}
