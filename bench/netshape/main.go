// Command netshape runs triage and Google's Node client (bench/node) side by side against
// `triage emulator` through a proxy that makes loopback look like a real network (80 ms
// round trip, 50 Mbit/s each way by default), and prints what each costs in time and bytes:
// a 100,000-row load, an idle refresh, set-status of 1,000 IDs on a 10,000-row tab. Ratios,
// not absolute times, are what it is for: both clients run in the same run, alternately.
// docs/BENCHMARKS.md has the numbers and bench/netshape.sh the whole procedure.
//
//	go build -o /tmp/triage . && go run ./bench/netshape -triage /tmp/triage -node /tmp/benchnode
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/triage-dev/triage/internal/netshape"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "netshape:", err)
		os.Exit(1)
	}
}

// config is the command line.
type config struct {
	triage, node string
	rtt          time.Duration
	mbit         float64
	runs         int
	work         string
}

func run() error {
	var c config
	flag.StringVar(&c.triage, "triage", "", "the triage binary to measure (go build -o /tmp/triage .)")
	flag.StringVar(&c.node, "node", "", "a copy of bench/node with its node_modules (npm install); empty: triage alone")
	flag.DurationVar(&c.rtt, "rtt", 80*time.Millisecond, "round-trip time the proxy adds")
	flag.Float64Var(&c.mbit, "mbit", 50, "bandwidth of each direction, Mbit/s (0: unlimited)")
	flag.IntVar(&c.runs, "runs", 5, "runs of each command (the median is reported)")
	flag.Parse()
	if c.triage == "" {
		return errors.New("-triage is required")
	}
	work, err := os.MkdirTemp("", "netshape")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	c.work = work

	big, err := c.emulator("list100k", inboxRows(100_000))
	if err != nil {
		return err
	}
	defer big.stop()
	small, err := c.emulator("set10k", inboxRows(10_000))
	if err != nil {
		return err
	}
	defer small.stop()

	fmt.Printf("network: %v round trip, %.0f Mbit/s each way; %d runs each, medians\n\n", c.rtt, c.mbit, c.runs)
	fmt.Println("| what | triage | Google's Node client | triage / Node |")
	fmt.Println("|---|---|---|---|")
	if err := c.load(big); err != nil {
		return err
	}
	if err := c.idle(big); err != nil {
		return err
	}
	if err := c.setStatus(small); err != nil {
		return err
	}
	return c.replay()
}

// emu is a `triage emulator` process behind a shaping proxy.
type emu struct {
	id    string
	cmd   *exec.Cmd
	proxy *netshape.Shaper
	addr  string // the proxy's
	l     net.Listener
}

func (e *emu) stop() {
	e.l.Close()
	_ = e.cmd.Process.Kill()
	_ = e.cmd.Wait()
}

// emulator writes a workbook of one Inbox tab (rows) and serves it through a new proxy.
func (c *config) emulator(id string, rows [][]any) (*emu, error) {
	return c.emulatorOf(id, map[string]any{"title": "Inbox", "rows": rows, "validations": map[string][]string{"E": {"new", "read", "done"}}})
}

// emulatorOf writes a workbook of the given sheets and serves it through a new proxy.
func (c *config) emulatorOf(id string, sheets ...any) (*emu, error) {
	wb := map[string]any{"spreadsheetId": id, "title": id, "timeZone": "Etc/UTC", "sheets": sheets}
	data, err := json.Marshal(wb)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(c.work, id+".json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	upstream := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(c.triage, "emulator", "--workbook", path, "--addr", upstream)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	e := &emu{id: id, cmd: cmd, l: l, addr: l.Addr().String(),
		proxy: &netshape.Shaper{RTT: c.rtt, Rate: c.mbit * 1e6 / 8}}
	go func() { _ = e.proxy.Serve(l, upstream) }()
	// Wait for the emulator to answer (directly, not through the proxy).
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + upstream + "/v4/spreadsheets/" + id + "?fields=spreadsheetId")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return e, nil
			}
		}
		if time.Now().After(deadline) {
			e.stop()
			return nil, fmt.Errorf("the emulator for %s did not answer within 30s", id)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// inboxRows is a header and n rows, as bench/node/workbook.js writes them.
func inboxRows(n int) [][]any {
	rows := [][]any{{"Timestamp", "Name", "Email", "Message", "Status", "ID"}}
	for i := 1; i <= n; i++ {
		s := strconv.Itoa(i)
		rows = append(rows, []any{45000 + float64(i)/24, "Person " + s, "p" + s + "@example.com", "hello " + s, "new", "m" + s})
	}
	return rows
}

// measured is one command's runs: wall time and bytes through the proxy (both ways).
type measured struct {
	times []time.Duration
	bytes []int64
}

func (m measured) median() (time.Duration, int64) {
	t, b := slices.Clone(m.times), slices.Clone(m.bytes)
	slices.Sort(t)
	slices.Sort(b)
	return t[len(t)/2], b[len(b)/2]
}

// once runs a command to its end with env added, through e's proxy, and measures it.
func (e *emu) once(m *measured, dir string, env []string, name string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	u0, d0 := e.proxy.Bytes()
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	u1, d1 := e.proxy.Bytes()
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return err
		}
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	m.times = append(m.times, took)
	m.bytes = append(m.bytes, (u1-u0)+(d1-d0))
	return nil
}

// triageEnv points triage at e's proxy with an empty config.
func (c *config) triageEnv(e *emu) []string {
	return []string{"SHEETS_EMULATOR_HOST=" + e.addr, "TRIAGE_SPREADSHEET=" + e.id, "XDG_CONFIG_HOME=" + c.work, "NO_COLOR=1"}
}

func row(what string, t, n measured, unit func(measured) (string, float64)) {
	ts, tv := unit(t)
	if len(n.times) == 0 {
		fmt.Printf("| %s | %s | — | — |\n", what, ts)
		return
	}
	ns, nv := unit(n)
	fmt.Printf("| %s | %s | %s | **%.3gx** |\n", what, ts, ns, tv/nv)
}

func timeUnit(m measured) (string, float64) {
	t, b := m.median()
	return fmt.Sprintf("%d ms (%s)", t.Milliseconds(), size(b)), float64(t)
}

func bytesUnit(m measured) (string, float64) {
	_, b := m.median()
	return size(b), float64(b)
}

func size(b int64) string {
	switch {
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

// load: `triage list --tab Inbox --json` (the whole process: connect, load 100,000 rows,
// print) against the Node client fetching the same tab (bench/node/fetch.js).
func (c *config) load(e *emu) error {
	var t, n measured
	for range c.runs {
		if err := e.once(&t, c.work, c.triageEnv(e), c.triage, "list", "--tab", "Inbox", "--json"); err != nil {
			return err
		}
		if c.node != "" {
			if err := e.once(&n, c.node, []string{"SHEETS_EMULATOR_HOST=" + e.addr}, "node", "fetch.js", e.id, "Inbox"); err != nil {
				return err
			}
		}
	}
	row("load 100,000 rows, whole process (`list --json`; Node: fetch.js)", t, n, timeUnit)
	// The floor: curl of the same values:batchGet, gzipped, nothing decoded.
	var curl measured
	u := "http://" + e.addr + "/v4/spreadsheets/" + e.id + "/values:batchGet?ranges=Inbox&valueRenderOption=UNFORMATTED_VALUE&dateTimeRenderOption=SERIAL_NUMBER&prettyPrint=false"
	for range c.runs {
		if err := e.once(&curl, c.work, nil, "curl", "-sf", "--compressed", "-o", os.DevNull, u); err != nil {
			return err
		}
	}
	row("the same load against curl of its values:batchGet (`--compressed`, nothing decoded; in the Node column)", t, curl, timeUnit)
	return nil
}

// idle: what one refresh of an unchanged sheet costs on the wire. triage with its change
// check (`config check` sends exactly that: one Drive files.get) against the Node client's
// only way to know, a full read; and triage's own full read (no Drive access) for scale.
func (c *config) idle(e *emu) error {
	var t, full, n measured
	for range c.runs {
		if err := e.once(&t, c.work, c.triageEnv(e), c.triage, "config", "check"); err != nil {
			return err
		}
		if err := e.once(&full, c.work, c.triageEnv(e), c.triage, "list", "--tab", "Inbox", "--json"); err != nil {
			return err
		}
		if c.node != "" {
			if err := e.once(&n, c.node, []string{"SHEETS_EMULATOR_HOST=" + e.addr}, "node", "fetch.js", e.id, "Inbox"); err != nil {
				return err
			}
		}
	}
	row("an idle refresh (refresh = 60s: an idle minute), bytes: triage's change check; Node: a full read", t, n, bytesUnit)
	row("an idle refresh without Drive access, bytes: triage's full read; Node: a full read", full, n, bytesUnit)
	return nil
}

// setStatus: `triage set-status` of 1,000 IDs on a 10,000-row tab (journaled, checked) against
// the Node client doing the same blind (bench/node/setstatus.js: read, locate, write).
func (c *config) setStatus(e *emu) error {
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = "m" + strconv.Itoa(1+i*10)
	}
	// triage sets them done, Node sets them back to new: every run of each changes every row.
	var t, n measured
	for range c.runs {
		args := append([]string{"set-status", "--tab", "Inbox", "--status", "done"}, ids...)
		if err := e.once(&t, c.work, c.triageEnv(e), c.triage, args...); err != nil {
			return err
		}
		if c.node != "" {
			nargs := append([]string{"setstatus.js", e.id, "Inbox", "new"}, ids...)
			if err := e.once(&n, c.node, []string{"SHEETS_EMULATOR_HOST=" + e.addr}, "node", nargs...); err != nil {
				return err
			}
		}
	}
	row("set-status of 1,000 IDs on a 10,000-row tab, whole process", t, n, timeUnit)
	return nil
}

// replayRows is how many dead letters the replay comparison replays.
const replayRows = 500

// replay: `triage replay --all` of 500 dead letters to a local receiver (answering 200 at
// once, not through the proxy: only the Sheets traffic is shaped), the outcomes written back,
// against the Node client doing the same blind (bench/node/replay.js). Each run starts from a
// fresh workbook (every row dead).
func (c *config) replay() error {
	var hits atomic.Int64
	rcv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusOK)
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = rcv.Serve(l) }()
	defer rcv.Close()
	dst := "http://" + l.Addr().String() + "/"
	cfg := filepath.Join(c.work, "triage", "config.toml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(cfg, []byte("[sources.crm]\nurl_prefixes = [\""+dst+"\"]\nconcurrency = 10\n"), 0o600); err != nil {
		return err
	}
	rows := [][]any{{"timestamp", "source", "url", "payload", "error", "attempts", "method", "key", "status", "replayed_at"}}
	for i := 1; i <= replayRows; i++ {
		rows = append(rows, []any{"2026-01-01T00:00:00Z", "crm", dst + "hook", fmt.Sprintf(`{"id":"k-%d","n":%d}`, i, i), "503", 1.0, "POST", fmt.Sprintf("k-%d", i), "dead", ""})
	}
	var t, n measured
	for range c.runs {
		for _, node := range []bool{false, true} {
			if node && c.node == "" {
				continue
			}
			e, err := c.emulatorOf("replay500", map[string]any{"title": "failed_calls", "rows": rows})
			if err != nil {
				return err
			}
			before := hits.Load()
			if node {
				err = e.once(&n, c.node, []string{"SHEETS_EMULATOR_HOST=" + e.addr}, "node", "replay.js", e.id, "failed_calls")
			} else {
				err = e.once(&t, c.work, c.triageEnv(e), c.triage, "replay", "--tab", "failed_calls", "--all", "--concurrency", "10")
			}
			e.stop()
			if err != nil {
				return err
			}
			if got := hits.Load() - before; got != replayRows {
				return fmt.Errorf("a replay run delivered %d calls, want %d", got, replayRows)
			}
		}
	}
	row(fmt.Sprintf("replay of %d dead letters to a local receiver, outcomes written back, whole process", replayRows), t, n, timeUnit)
	return nil
}
