package serve

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	gossh "golang.org/x/crypto/ssh"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/tui"
)

// readyProbe closes ready once the TUI's screen shows the workbook.
type readyProbe struct {
	tea.Model
	once  *sync.Once
	ready chan struct{}
}

func (p readyProbe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m, cmd := p.Model.Update(msg)
	if strings.Contains(ansi.Strip(m.View().Content), "Acme Support") {
		p.once.Do(func() { close(p.ready) })
	}
	return readyProbe{m, p.once, p.ready}, cmd
}

// runProgram runs a real TUI program over a hub session, 80x24, its output discarded (as an
// SSH session's goes to the client), and waits for its first screen. stop quits it and closes
// the session.
func runProgram(tb testing.TB, h *Hub, u User) (stop func()) {
	tb.Helper()
	s := h.Session(u)
	ready := make(chan struct{})
	m := tui.New(s.Options(tui.Options{SpreadsheetID: sheetID}))
	p := tea.NewProgram(readyProbe{m, &sync.Once{}, ready}, tea.WithInput(nil), tea.WithOutput(io.Discard),
		tea.WithWindowSize(80, 24), tea.WithColorProfile(colorprofile.TrueColor), tea.WithoutSignals(),
		tea.WithEnvironment([]string{"TERM=xterm-256color"}))
	done := make(chan struct{})
	go func() {
		_, _ = p.Run()
		close(done)
	}()
	select {
	case <-ready:
	case <-time.After(time.Minute):
		tb.Fatal("a session's first screen took over a minute")
	}
	return func() {
		p.Quit()
		<-done
		s.Close()
	}
}

// BenchmarkIdleRequestsPerMinute: Sheets API requests per minute for 1, 8 and 16 idle
// sessions (real TUI programs) with the hub refreshing. The interval is scaled down (20ms)
// and the count scaled to the default interval (DefaultRefresh): requests per refresh x
// refreshes per minute.
func BenchmarkIdleRequestsPerMinute(b *testing.B) {
	const interval = 20 * time.Millisecond
	const window = time.Second
	for _, n := range []int{1, 8, 16} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			f := newFixture(b, interval, 100)
			f.run(b)
			for i := range n {
				defer runProgram(b, f.hub, []User{alice, tom, vera}[i%3])()
			}
			requests, refreshes := 0, 0
			for b.Loop() {
				f.emu.ResetCounts()
				time.Sleep(window)
				requests += f.total()
				refreshes += f.emu.Count(mBatchGet)
			}
			perRefresh := float64(requests) / float64(refreshes)
			b.ReportMetric(perRefresh*float64(time.Minute/DefaultRefresh), "req/min")
			b.ReportMetric(float64(refreshes)/float64(b.N), "refreshes/window")
		})
	}
}

// heap is the live heap after two collections.
func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkSessionMemory100k: the heap each extra session costs at 100,000 inbox rows: N real
// TUI programs over one hub, after their first screen. The rows and everything derived from
// them (tui.Prepared) are the hub's, shared; a session holds its view state. For scale,
// "prepare-B" is what one more tui.Prepare of the same workbook costs: what each session
// would hold if it derived its own.
func BenchmarkSessionMemory100k(b *testing.B) {
	const sessions = 16
	f := newFixture(b, time.Hour, 100_000)
	f.run(b)
	wb := f.hub.Cached().Workbook()
	if n := len(wb.TabNamed("Inbox").Records); n != 100_000 {
		b.Fatalf("the inbox has %d rows", n)
	}
	for b.Loop() {
		before := heap()
		var stops []func()
		for i := range sessions {
			stops = append(stops, runProgram(b, f.hub, []User{alice, tom, vera}[i%3]))
		}
		after := heap()
		b.ReportMetric(float64(after-before)/sessions, "B/session")
		for _, stop := range stops {
			stop()
		}
		before = heap()
		p := tui.Prepare(wb, nil)
		after = heap()
		runtime.KeepAlive(p)
		b.ReportMetric(float64(after-before), "prepare-B")
	}
}

// BenchmarkBytesPerCursorMoveOverSSH: the bytes one cursor move puts on the wire to an SSH
// client at 80x24 (xterm-256color), through triage serve: the same cell-diffing renderer as
// a local terminal (tui.BenchmarkBytesPerCursorMove), now behind wish and the session's own
// colour profile. Counted at the client, after decryption: the TUI's bytes, not SSH framing.
func BenchmarkBytesPerCursorMoveOverSSH(b *testing.B) {
	f := newFixture(b, time.Hour, 10_000)
	f.run(b)
	signer, _ := testbed.SSHKey(b)
	fp := gossh.FingerprintSHA256(signer.PublicKey())
	auth := &config.ServeAuth{Keys: map[string]config.ServeIdentity{fp: {Name: "alice", Access: model.AccessOperator}},
		Users: map[string]model.Access{"alice": model.AccessOperator}}
	addr := serveHub(b, f, auth, nil)
	client, err := gossh.Dial("tcp", addr, &gossh.ClientConfig{User: "alice", Auth: []gossh.AuthMethod{gossh.PublicKeys(signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	out := testbed.NewByteCounter()
	sess.Stdout, sess.Stderr = out, out
	in, err := sess.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := sess.RequestPty("xterm-256color", 24, 80, gossh.TerminalModes{}); err != nil {
		b.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		b.Fatal(err)
	}
	out.BytesPerMove(b, 50*time.Millisecond, func(k string) { _, _ = in.Write([]byte(k)) })
}
