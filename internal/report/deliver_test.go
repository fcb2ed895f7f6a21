package report

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/triage-dev/triage/config"
)

func TestCheckPath(t *testing.T) {
	for path, ok := range map[string]bool{"r.html": true, "R.HTM": true, "r.md": true, "dir/r.markdown": true, "r.txt": false, "r": false} {
		if err := CheckPath(path); (err == nil) != ok {
			t.Errorf("CheckPath(%q) = %v", path, err)
		}
	}
}

// notifyConfig is a config whose alerts may go to srv.
func notifyConfig(srv *httptest.Server) *config.Config {
	return &config.Config{Notify: config.NotifySection{URLPrefixes: []string{srv.URL + "/hooks/"}}}
}

// TestPrepareRefusesBeforeTheRun: a notify URL outside the allowlist and a report path that
// can't be written are errors from Prepare (nothing is sent); an alert read from an unset
// variable is a warning and no alert; --notify wins over [notify] url.
func TestPrepareRefusesBeforeTheRun(t *testing.T) {
	srv := httptest.NewServer(&receiver{})
	defer srv.Close()
	cfg := notifyConfig(srv)
	var stderr bytes.Buffer
	if _, err := Prepare(Targets{Notify: "https://elsewhere.example/hooks/x", Config: cfg}, &stderr); err == nil ||
		!strings.HasPrefix(err.Error(), "--notify: ") || !strings.Contains(err.Error(), "nothing was sent") {
		t.Errorf("a URL outside url_prefixes: %v", err)
	}
	cfg.Notify.URL = "https://elsewhere.example/hooks/x"
	if _, err := Prepare(Targets{Config: cfg}, &stderr); err == nil || !strings.HasPrefix(err.Error(), "[notify] url: ") {
		t.Errorf("[notify] url outside url_prefixes: %v", err)
	}
	if d, err := Prepare(Targets{Notify: srv.URL + "/hooks/x", Config: cfg}, &stderr); err != nil || d.notify == nil || d.notify.url != srv.URL+"/hooks/x" {
		t.Errorf("--notify over [notify] url: %+v, %v", d, err)
	}
	secret := func(string) string { return "" }
	d, err := Prepare(Targets{Notify: "env:TRIAGE_TEST_UNSET", Config: cfg, Secret: secret}, &stderr)
	if err != nil || d.notify != nil || !strings.Contains(stderr.String(), "TRIAGE_TEST_UNSET, which is not set") {
		t.Errorf("an unset variable: %+v, %v, %q", d, err, stderr.String())
	}
	dir := t.TempDir()
	missing := filepath.Join(dir, "no", "such", "r.html")
	if _, err := Prepare(Targets{ReportPath: missing}, &stderr); err == nil || !strings.Contains(err.Error(), "can't be written") {
		t.Errorf("a report in a missing directory: %v", err)
	}
	if _, err := Prepare(Targets{ReportPath: filepath.Join(dir, "r.txt")}, &stderr); err == nil {
		t.Error("a report of no known format was accepted")
	}
}

// TestDeliverOrder: the report is written before show runs (show is told where), the alert
// goes out after it, also when show fails, and show's error is what Deliver returns; no
// temporary file is left beside the report.
func TestDeliverOrder(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	dir := t.TempDir()
	path := filepath.Join(dir, "run.md")
	var stderr bytes.Buffer
	d, err := Prepare(Targets{ReportPath: path, Notify: srv.URL + "/hooks/x", Config: notifyConfig(srv)}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	run := fixedRun(t) // halted: it calls for an alert
	printed := errors.New("stdout is gone")
	err = d.Deliver(context.Background(), run, func(w Written) error {
		if w.Err != nil || w.Path != path {
			t.Errorf("show got %+v, want the report at %s", w, path)
		}
		if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), run.Tab) {
			t.Errorf("the report is not complete when show runs: %v", err)
		}
		if len(rc.bodies) != 0 {
			t.Error("the alert went out before show")
		}
		return printed
	}, &stderr)
	if err != printed {
		t.Errorf("Deliver returned %v, want show's error", err)
	}
	if len(rc.bodies) != 1 || !strings.Contains(rc.bodies[0], `"report":`) || !strings.Contains(stderr.String(), "notify: alert sent to 127.0.0.1") {
		t.Errorf("alerts %q, stderr %q", rc.bodies, stderr.String())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the report's directory holds %d files, want the report alone", len(entries))
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the report's mode: %v, %v", fi, err)
	}
}

// TestDeliverReportNotWritten: a report that can't be written is handed to show as an error
// (the command counts it), and the alert, when the run calls for one, names no report.
func TestDeliverReportNotWritten(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	dir := t.TempDir()
	var stderr bytes.Buffer
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := Prepare(Targets{ReportPath: filepath.Join(sub, "run.html"), Notify: srv.URL + "/hooks/x", Config: notifyConfig(srv)}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(sub); err != nil { // the directory goes away during the run
		t.Fatal(err)
	}
	var got Written
	if err := d.Deliver(context.Background(), fixedRun(t), func(w Written) error { got = w; return nil }, &stderr); err != nil {
		t.Fatal(err)
	}
	if got.Path != "" || got.Err == nil || !strings.Contains(got.Err.Error(), "was not written") {
		t.Errorf("show got %+v", got)
	}
	if len(rc.bodies) != 1 || strings.Contains(rc.bodies[0], `"report":`) {
		t.Errorf("alerts %q", rc.bodies)
	}
}

// TestDeliverNothing: a nil Delivery (a dry run) only shows; a clean run posts no alert.
func TestDeliverNothing(t *testing.T) {
	var stderr bytes.Buffer
	shown := 0
	var d *Delivery
	if err := d.Deliver(context.Background(), Run{}, func(w Written) error { shown++; return nil }, &stderr); err != nil || shown != 1 {
		t.Errorf("nil Delivery: %v, shown %d", err, shown)
	}
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	d, err := Prepare(Targets{Notify: srv.URL + "/hooks/x", Config: notifyConfig(srv)}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Deliver(context.Background(), Run{Tab: "failed_calls"}, func(w Written) error { shown++; return nil }, &stderr); err != nil || shown != 2 || len(rc.bodies) != 0 || stderr.Len() != 0 {
		t.Errorf("a clean run: %v, shown %d, alerts %q, stderr %q", err, shown, rc.bodies, stderr.String())
	}
}
