package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// hookReceiver is a chat webhook on loopback: it records each alert posted to it.
type hookReceiver struct {
	mu    sync.Mutex
	posts []map[string]any
	raw   []string
	url   string // the webhook's URL (its path holds a "token")
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		h.mu.Lock()
		h.posts, h.raw = append(h.posts, m), append(h.raw, string(b))
		h.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL + "/hook/T0/B0/hooktoken123"
	return h
}

func (h *hookReceiver) messages() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]map[string]any(nil), h.posts...)
}

// withNotify adds a [notify] section to the fixture's config, its allowlist the webhook's
// host and /hook/, and the webhook's URL as $HOOK.
func withNotify(t *testing.T, f *replayFixture, h *hookReceiver, section string) {
	t.Helper()
	prefix := h.url[:strings.Index(h.url, "/hook/")+len("/hook/")]
	cfg, err := os.ReadFile(f.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if i := strings.Index(string(cfg), "\n[notify]"); i >= 0 {
		cfg = cfg[:i]
	}
	cfg = append(cfg, fmt.Sprintf("\n[notify]\nurl_prefixes = [%q]\n%s", prefix, section)...)
	if err := os.WriteFile(f.cfgPath, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	f.env["HOOK"] = h.url
}

func billingRows(f *replayFixture) []dl {
	return []dl{
		{"billing", f.billURL, `{"invoice":"I-1"}`, "b1", "dead"},
		{"billing", f.billURL, `{"invoice":"I-2"}`, "b2", "dead"},
		{"billing", f.billURL, `{"invoice":"I-3"}`, "b3", "dead"},
	}
}

// noSecrets fails when a text holds a source's secret or the webhook's token.
func noReplaySecrets(t *testing.T, what, s string) {
	t.Helper()
	for _, sec := range []string{crmSecret, "billing-wrong-value", "hooktoken123"} {
		if strings.Contains(s, sec) {
			t.Errorf("%s holds the secret %q", what, sec)
		}
	}
}

// TestReplayHaltWritesReportAndAlertsOnce: a run that halts on a 401 (the real CLI against
// the emulator and a receiver answering 401) writes its report, linked to the rows, and posts
// exactly one alert saying why; the exit code is the halt's.
func TestReplayHaltWritesReportAndAlertsOnce(t *testing.T) {
	f := newReplayFixture(t, billingRows)
	// A tab whose gid is not 0, so a link to the wrong tab can't pass.
	const gid = 914062753
	wb := f.emu.Workbook(replayID)
	wb.Sheets[0].SheetID = gid
	f.emu.AddWorkbook(wb)
	h := newHookReceiver(t)
	withNotify(t, f, h, "")
	dir := t.TempDir()
	path := filepath.Join(dir, "replay.html")
	r := f.runCtx("--all", "--json", "--concurrency", "1", "--report", path, "--notify", "env:HOOK")
	if r.code != exitHalted {
		t.Fatalf("exit %d, want 3\n%s", r.code, r.stderr)
	}
	doc := parseReplayJSON(t, r)
	msgs := h.messages()
	if len(msgs) != 1 {
		t.Fatalf("%d alerts, want 1", len(msgs))
	}
	m := msgs[0]
	text, _ := m["text"].(string)
	if !strings.HasPrefix(text, "triage replay on failed_calls halted: systemic, source billing: 401") || !strings.Contains(text, "BILLING_TOKEN") ||
		!strings.Contains(text, "0 delivered, 3 not done") || !strings.Contains(text, "report: "+path) {
		t.Errorf("alert text %q", text)
	}
	if m["halted"] != true || m["tab"] != replayTab || m["spreadsheet"] != replayID || m["exit_code"] != float64(3) || m["not_done"] != float64(3) {
		t.Errorf("alert %v", m)
	}
	noReplaySecrets(t, "the alert", h.raw[0])
	if strings.Contains(h.raw[0], "invoice") {
		t.Error("the alert holds a payload")
	}
	if !strings.Contains(r.stderr, "notify: alert sent to 127.0.0.1") || !strings.Contains(r.stderr, "report: "+path) {
		t.Errorf("stderr:\n%s", r.stderr)
	}

	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	noReplaySecrets(t, "the report", out)
	if !strings.Contains(out, "HALTED (systemic, source billing)") || !strings.Contains(out, "Authorization: env:BILLING_TOKEN") {
		t.Errorf("the report lacks the halt or the config:\n%s", out)
	}
	// Each not-done row links to its own row of the tab's gid.
	links := regexp.MustCompile(`<a href="https://docs\.google\.com/spreadsheets/d/r1/edit#gid=(\d+)&amp;range=A(\d+)"[^>]*>row (\d+)</a>`).FindAllStringSubmatch(out, -1)
	rows := map[string]bool{}
	for _, l := range links {
		if l[1] != fmt.Sprint(gid) || l[2] != l[3] {
			t.Errorf("link %s: gid %s (want %d), range A%s for row %s", l[0], l[1], gid, l[2], l[3])
		}
		rows[l[3]] = true
	}
	if len(rows) != 3 || !rows["2"] || !rows["3"] || !rows["4"] || len(doc.Rows) != 3 {
		t.Errorf("linked rows %v", rows)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the report's directory holds %d files (a temporary file left?)", len(entries))
	}

	// Markdown the same way; the config's [notify] url alone is enough.
	withNotify(t, f, h, "url = \"env:HOOK\"\n")
	md := filepath.Join(dir, "replay.md")
	r = f.runCtx("--all", "--report", md)
	if r.code != exitHalted || len(h.messages()) != 2 {
		t.Fatalf("exit %d, %d alerts\n%s", r.code, len(h.messages()), r.stderr)
	}
	b, err = os.ReadFile(md)
	if err != nil || !strings.Contains(string(b), fmt.Sprintf("[row 2](https://docs.google.com/spreadsheets/d/r1/edit#gid=%d&range=A2)", gid)) {
		t.Errorf("the Markdown report (%v):\n%s", err, b)
	}
}

// TestReplayCleanRunSendsNoAlert: every row done: a report, no alert, exit 0.
func TestReplayCleanRunSendsNoAlert(t *testing.T) {
	f := newReplayFixture(t, crmRows)
	h := newHookReceiver(t)
	withNotify(t, f, h, "url = \"env:HOOK\"\n")
	path := filepath.Join(t.TempDir(), "ok.md")
	r := f.runCtx("--all", "--report", path)
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if n := len(h.messages()); n != 0 {
		t.Errorf("%d alerts for a clean run", n)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), "Every selected row is done.") || !strings.Contains(string(b), "| 3 | 0 |") {
		t.Errorf("report (%v):\n%s", err, b)
	}
	noReplaySecrets(t, "the report", string(b))
}

// TestReplayNotifyOutsideAllowlistIsRefused: a notify URL that isn't under [notify]
// url_prefixes is refused before anything is sent, from the flag, the environment or the
// config, and `config check` says so with the line.
func TestReplayNotifyOutsideAllowlistIsRefused(t *testing.T) {
	f := newReplayFixture(t, crmRows)
	h := newHookReceiver(t)
	withNotify(t, f, h, "")
	for _, args := range [][]string{
		{"--notify", "https://hooks.evil.example/hook/T0/B0/hooktoken123"},
		{"--notify", strings.Replace(h.url, "/hook/", "/other/", 1)},
		{"--notify", "env:EVIL"},
	} {
		f.env["EVIL"] = "https://hooks.evil.example/hook/hooktoken123"
		r := f.runCtx(append([]string{"--all"}, args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "url_prefixes") || !strings.Contains(r.stderr, "nothing was sent") {
			t.Errorf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	if n := len(f.crm.Attempts()); n != 0 || len(h.messages()) != 0 {
		t.Errorf("%d calls sent, %d alerts", n, len(h.messages()))
	}

	withNotify(t, f, h, "url = \"https://hooks.evil.example/hook/x\"\n")
	r := f.runCtx("--all")
	if r.code != exitUsage || !strings.Contains(r.stderr, "notify.url") {
		t.Errorf("config: exit %d\n%s", r.code, r.stderr)
	}
	var out, errb strings.Builder
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return f.env[k] }}
	if code := run(t.Context(), []string{"config", "check", "--config", f.cfgPath}, e); code != exitUsage ||
		!regexp.MustCompile(`config\.toml:\d+: notify\.url: the notify URL \(host hooks\.evil\.example\) is not under`).MatchString(out.String()) {
		t.Errorf("config check: exit %d\n%s%s", code, out.String(), errb.String())
	}
}

// TestReplayDeadNotifyKeepsTheExitCode: an alert that can't be delivered is said on stderr
// (naming the host, not the URL) and the exit code stays the run's.
func TestReplayDeadNotifyKeepsTheExitCode(t *testing.T) {
	f := newReplayFixture(t, billingRows)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL + "/hook/hooktoken123"
	dead.Close()
	cfg, _ := os.ReadFile(f.cfgPath)
	cfg = append(cfg, fmt.Sprintf("\n[notify]\nurl_prefixes = [%q]\ntimeout = \"2s\"\n", dead.URL+"/hook/")...)
	if err := os.WriteFile(f.cfgPath, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	r := f.runCtx("--all", "--json", "--notify", deadURL)
	if r.code != exitHalted || !strings.Contains(r.stderr, "notify: post to 127.0.0.1") || !strings.Contains(r.stderr, "the exit code is the run's") {
		t.Errorf("halted: exit %d\n%s", r.code, r.stderr)
	}
	parseReplayJSON(t, r)

	// Some rows not done (an unknown ID): 1, whatever the alert did.
	r = f.runCtx("nope", "--notify", deadURL)
	if r.code != exitPartial || !strings.Contains(r.stderr, "the exit code is the run's") {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
	noReplaySecrets(t, "stderr", r.stderr)
}

// TestReplayReportUsage: a report path that can't work is a usage error before anything is
// sent; one that fails after a clean run makes the exit 1 and says why.
func TestReplayReportUsage(t *testing.T) {
	f := newReplayFixture(t, crmRows)
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--all", "--report", filepath.Join(dir, "r.txt")},
		{"--all", "--report", filepath.Join(dir, "missing", "r.html")},
		{"--all", "--dry-run", "--report", filepath.Join(dir, "r.html")},
		{"--all", "--dry-run", "--notify", "https://x.example/"},
	} {
		if r := f.runCtx(args...); r.code != exitUsage {
			t.Errorf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	if n := len(f.crm.Attempts()); n != 0 {
		t.Errorf("%d calls sent", n)
	}
	// The path is a directory: the run happens, the report can't take its place.
	taken := filepath.Join(dir, "taken.html")
	if err := os.Mkdir(taken, 0o700); err != nil {
		t.Fatal(err)
	}
	r := f.runCtx("--all", "--json", "--report", taken)
	if r.code != exitPartial || !strings.Contains(r.stderr, "was not written") {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
	doc := parseReplayJSON(t, r)
	if doc.Counts["delivered"] != 3 {
		t.Errorf("counts %v", doc.Counts)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files in the report's directory (a temporary file left?)", len(entries))
	}
}

// TestReplayReportByHand prints a halted run's stderr and report (go test -run ByHand -v).
func TestReplayReportByHand(t *testing.T) {
	if os.Getenv("TRIAGE_REPORT_BY_HAND") == "" {
		t.Skip("set TRIAGE_REPORT_BY_HAND=dir to look at a report")
	}
	f := newReplayFixture(t, func(f *replayFixture) []dl { return append(billingRows(f), crmRows(f)...) })
	h := newHookReceiver(t)
	withNotify(t, f, h, "url = \"env:HOOK\"\n")
	dir := os.Getenv("TRIAGE_REPORT_BY_HAND")
	r := f.runCtx("--all", "--concurrency", "1", "--report", filepath.Join(dir, "by-hand.html"))
	_ = f.runCtx("--all", "--concurrency", "1", "--report", filepath.Join(dir, "by-hand.md"))
	t.Logf("exit %d\nstdout:\n%s\nstderr:\n%s\nalerts:\n%s", r.code, r.stdout, r.stderr, strings.Join(h.raw, "\n"))
}

// brokenWriter is a stdout that can't be written (a closed pipe).
type brokenWriter struct{}

func (brokenWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// A halted run whose --json summary can't be written still exits 3 and still alerts: the
// run happened, and how it ended is what cron must learn.
func TestReplayHaltWithBrokenStdoutKeepsExitAndAlert(t *testing.T) {
	f := newReplayFixture(t, billingRows)
	h := newHookReceiver(t)
	withNotify(t, f, h, "")
	var errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: brokenWriter{}, stderr: &errb, getenv: func(k string) string { return f.env[k] }}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := run(ctx, []string{"replay", "--spreadsheet", replayID, "--config", f.cfgPath, "--all", "--json", "--concurrency", "1", "--notify", "env:HOOK"}, e)
	if code != exitHalted {
		t.Errorf("exit %d, want 3 (the run halted; only its summary was lost)\n%s", code, errb.String())
	}
	if n := len(h.messages()); n != 1 {
		t.Errorf("%d alerts, want 1", n)
	}
}
