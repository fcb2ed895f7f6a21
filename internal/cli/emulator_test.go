package cli

import (
	"bytes"
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/sheets/emulator"
)

// TestEmulatorRefusesRemoteAddrWithoutAllowRemote: an address other machines could reach is
// a usage error naming --allow-remote, decided before anything listens. The context is
// already cancelled: were an address accepted, the command would return at once (exit 0)
// instead of serving.
func TestEmulatorRefusesRemoteAddrWithoutAllowRemote(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, addr := range []string{"0.0.0.0:8089", ":8089", "[::]:8089", "192.0.2.10:8089"} {
		var out, errb bytes.Buffer
		e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
		code := run(ctx, []string{"emulator", "--addr", addr}, e)
		if code != exitUsage || !strings.Contains(errb.String(), "--allow-remote") || !strings.Contains(errb.String(), addr) {
			t.Errorf("--addr %s: exit %d, stderr %q; want exit %d naming --allow-remote", addr, code, errb.String(), exitUsage)
		}
		if out.Len() != 0 {
			t.Errorf("--addr %s: printed %q", addr, out.String())
		}
	}
}

// TestEmulatorServesLoopback runs the command on a loopback port, --allow-remote or not: it
// serves, prints the address it really listens on, and warns of nothing.
func TestEmulatorServesLoopback(t *testing.T) {
	for _, extra := range [][]string{nil, {"--allow-remote"}} {
		var out, errb testbed.Buffer
		e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan int, 1)
		go func() { done <- run(ctx, append([]string{"emulator", "--addr", "127.0.0.1:0"}, extra...), e) }()
		urlRE := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+)\n`)
		var url string
		testbed.Until(t, func() bool {
			if m := urlRE.FindStringSubmatch(out.String()); m != nil {
				url = m[1]
			}
			return url != ""
		})
		if url == "" {
			cancel()
			t.Fatalf("%v: no URL printed: %q %q", extra, out.String(), errb.String())
		}
		resp, err := http.Get(url + "/v4/spreadsheets/" + demoSpreadsheetIDFrom(out.String()) + "/values/A1")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%v: GET status %d", extra, resp.StatusCode)
		}
		if strings.Contains(errb.String(), "WARNING") {
			t.Errorf("%v: a loopback emulator warned: %q", extra, errb.String())
		}
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("%v: exit %d", extra, code)
		}
	}
}

func demoSpreadsheetIDFrom(out string) string {
	m := regexp.MustCompile(`TRIAGE_SPREADSHEET=(\S+)`).FindStringSubmatch(out)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestEmulatorBannerTellsTheTruth: an emulator others can reach is announced as such, with a
// loud warning on stderr; a wildcard listen is called "all interfaces", not passed off as
// 127.0.0.1. (The servers are described, not started: no test listens on a public interface.)
func TestEmulatorBannerTellsTheTruth(t *testing.T) {
	wb := &emulator.Workbook{SpreadsheetID: "s1", Title: "T"}
	cases := []struct {
		srv      emulator.Server
		out      []string
		warn     bool
		warnText []string
	}{
		{emulator.Server{URL: "http://127.0.0.1:8089", Addr: "0.0.0.0:8089", AllInterfaces: true},
			[]string{"ALL network interfaces (0.0.0.0:8089)", "http://127.0.0.1:8089"}, true, []string{"every interface", "NO authentication", "read and change"}},
		{emulator.Server{URL: "http://192.0.2.10:8089", Addr: "192.0.2.10:8089"},
			[]string{"at http://192.0.2.10:8089", "SHEETS_EMULATOR_HOST=192.0.2.10:8089"}, true, []string{"192.0.2.10:8089", "NO authentication"}},
		{emulator.Server{URL: "http://127.0.0.1:8089", Addr: "127.0.0.1:8089", Loopback: true},
			[]string{"at http://127.0.0.1:8089"}, false, nil},
	}
	for _, tc := range cases {
		var out, errb bytes.Buffer
		printEmulatorBanner(&env{stdout: &out, stderr: &errb}, &tc.srv, wb)
		for _, s := range tc.out {
			if !strings.Contains(out.String(), s) {
				t.Errorf("%+v: stdout lacks %q:\n%s", tc.srv, s, out.String())
			}
		}
		if got := strings.Contains(errb.String(), "WARNING"); got != tc.warn {
			t.Errorf("%+v: warning %v, want %v: %q", tc.srv, got, tc.warn, errb.String())
		}
		for _, s := range tc.warnText {
			if !strings.Contains(errb.String(), s) {
				t.Errorf("%+v: warning lacks %q: %q", tc.srv, s, errb.String())
			}
		}
		if tc.srv.AllInterfaces && strings.Contains(out.String(), "at http://127.0.0.1") {
			t.Errorf("a wildcard listen presented as 127.0.0.1 only: %s", out.String())
		}
	}
}
