package cli

import (
	"context"
	"fmt"
	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/postgres/pgtest"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestMain lets a test re-run this binary as the triage CLI itself (TRIAGE_TEST_MAIN=1), so
// a test can kill a real process mid-run.
func TestMain(m *testing.M) {
	if os.Getenv("TRIAGE_TEST_MAIN") == "1" {
		os.Exit(Main(context.Background()))
	}
	// The postgres store's end-to-end tests need a server: one private cluster per run.
	pgtest.Main(m)
}

// TestReplayProcessKilledMidRunThenRunAgain kills a real `triage replay` process with
// SIGKILL while calls are being acted on (no write-back has happened yet), then runs the
// same command again: every row ends delivered, the receiver acted exactly once per row,
// every attempt of both runs carried its row's key, and no key changed.
func TestReplayProcessKilledMidRunThenRunAgain(t *testing.T) {
	const n = 40
	f := newReplayFixture(t, func(f *replayFixture) []dl {
		var rows []dl
		for i := 0; i < n; i++ {
			key := fmt.Sprintf("kill-%02d", i)
			if i%3 == 0 {
				key = "" // minted: written to the sheet before the first send
			}
			rows = append(rows, dl{"crm", f.crmURL, fmt.Sprintf(`{"n":%d}`, i), key, "dead"})
		}
		return rows
	})
	f.crm.Latency = 100 * time.Millisecond
	before := map[int]string{}
	for i := range f.rows {
		if f.rows[i].key != "" {
			before[i] = f.rows[i].key
		}
	}

	cmd := exec.Command(os.Args[0], "--spreadsheet", replayID, "--config", f.cfgPath, "replay", "--all", "--concurrency", "2")
	cmd.Env = []string{"TRIAGE_TEST_MAIN=1", "PATH=" + os.Getenv("PATH")}
	for k, v := range f.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !testbed.Until(t, func() bool { return len(f.crm.Effects()) >= 8 }) {
		cmd.Process.Kill()
		t.Fatalf("the child never got going: %d effects", len(f.crm.Effects()))
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killedAt := len(f.crm.Effects())
	if killedAt >= n {
		t.Fatalf("the child finished before it was killed (%d effects): nothing was tested", killedAt)
	}

	r := f.runCtx("--all")
	if r.code != exitOK {
		t.Fatalf("second run: exit %d\n%s", r.code, r.stderr)
	}
	keys := map[string]bool{}
	for i := range f.rows {
		k := f.cell(i, "key")
		if want, ok := before[i]; ok && k != want {
			t.Errorf("row %d: key changed from %q to %q", i, want, k)
		}
		if _, ok := before[i]; !ok && k != f.minted(i) {
			t.Errorf("row %d: minted key %q, want %q", i, k, f.minted(i))
		}
		if s := f.cell(i, "status"); s != "delivered" {
			t.Errorf("row %d ends %q, want delivered", i, s)
		}
		keys[k] = true
	}
	effects := f.crm.Effects()
	if len(effects) != n {
		t.Errorf("%d rows had an effect, want %d", len(effects), n)
	}
	for k, c := range effects {
		if c != 1 || !keys[k] {
			t.Errorf("key %q: %d effects (a row's key: %v)", k, c, keys[k])
		}
	}
	for _, a := range f.crm.Attempts() {
		if !keys[a.Key] {
			t.Errorf("an attempt carried %q, which is no row's key", a.Key)
		}
	}
	t.Logf("killed after %d of %d effects; %d attempts in all", killedAt, n, len(f.crm.Attempts()))
}
