package report

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/model"
)

// What an unattended run leaves behind: `triage replay --report FILE` and
// `--notify URL`. The report is written whatever the run's outcome (a halt, --json, an
// interrupt); the alert is posted only when the run halted or left rows not done.
//
// Prepare checks both before the run, so a report path or notify URL that can't work stops the
// command (a usage error) before anything is sent; Deliver, after the run, writes the report,
// lets the command print, then posts the alert. A report that can't be written is the
// command's to count (replay.ExitAfterReport); an alert that can't be posted is said on
// stderr and changes nothing. The errors of this file start with the flag or the report's path:
// the command says which command it was ("replay: ...").

// CheckPath says whether path names a report format, by its extension: FILE.html (or .htm)
// or FILE.md (or .markdown).
func CheckPath(path string) error {
	_, err := formatOf(path)
	return err
}

// formatOf is the report's format from the file's extension: "html" or "md".
func formatOf(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".html", ".htm":
		return "html", nil
	case ".md", ".markdown":
		return "md", nil
	}
	return "", fmt.Errorf("--report %q: the format is chosen by the extension: want FILE.html (for a mail client or a browser) or FILE.md (Markdown)", path)
}

// Targets is where a run's report and alert are to go, as the command line and config say.
type Targets struct {
	// ReportPath is --report ("" for no report).
	ReportPath string
	// Notify is --notify: a URL or "env:NAME" ("" for the config's [notify] url).
	Notify string
	// Config is the loaded config (may be nil): [notify] url, url_prefixes and timeout.
	Config *config.Config
	// Secret reads an environment variable (for "env:NAME").
	Secret func(string) string
}

// Delivery is a run's report file, created before the run, and its alert's checked URL. A
// nil *Delivery delivers nothing (a dry run).
type Delivery struct {
	file   *reportFile
	notify *notifier
}

// Prepare checks the notify URL (by the rule `config check` applies: config.CheckNotifyURL)
// and creates the report's temporary file, before the run. Every error it returns is a usage
// error: nothing has been sent. A notify setting read from an environment variable that is
// unset is no error: the run goes on without an alert, and a warning says so on stderr.
func Prepare(tg Targets, stderr io.Writer) (*Delivery, error) {
	n, err := resolveNotify(tg.Notify, tg.Config, tg.Secret, stderr)
	if err != nil {
		return nil, err
	}
	d := &Delivery{notify: n}
	if tg.ReportPath != "" {
		if d.file, err = createReportFile(tg.ReportPath); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// Written is what became of the report asked for: Path is where it was written, Err why it
// was not (both empty when none was asked for).
type Written struct {
	Path string
	Err  error
}

// Deliver is the step after a run: it writes the run's report (when one was asked for), hands
// what became of it to show (where the command prints its summary), then posts the run's
// alert when one is configured and the run calls for one (NewAlert), even when show failed;
// it returns show's error. The alert is posted after an interrupted run too (so not on the
// cancelled ctx), bounded by its own timeout; a failure is said on stderr.
func (d *Delivery) Deliver(ctx context.Context, run Run, show func(Written) error, stderr io.Writer) error {
	if d == nil {
		return show(Written{})
	}
	var w Written
	if d.file != nil {
		if w.Err = d.file.write(run); w.Err == nil {
			w.Path = d.file.path
		}
	}
	err := show(w)
	d.notify.send(ctx, run, w.Path, stderr)
	return err
}

// reportFile is where --report goes. A temporary file beside it is created before the run,
// so a path that can't be written is refused before anything is sent, and it is renamed
// over the path once the report is complete, so a reader never sees half a report. It is
// created 0600: it holds sheet text.
type reportFile struct {
	path, format string
	tmp          *os.File
}

func createReportFile(path string) (*reportFile, error) {
	format, err := formatOf(path)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("--report %q: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(abs), "."+filepath.Base(abs)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("--report %q can't be written (%w): create its directory or choose another path; nothing was sent", path, err)
	}
	return &reportFile{path: abs, format: format, tmp: tmp}, nil
}

// write renders the run into the temporary file and moves it to the report's path.
func (f *reportFile) write(run Run) error {
	var err error
	if f.format == "md" {
		err = Markdown(f.tmp, run)
	} else {
		err = HTML(f.tmp, run)
	}
	if cerr := f.tmp.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.tmp.Name(), f.path)
	}
	if err != nil {
		_ = os.Remove(f.tmp.Name())
		return fmt.Errorf("the report %s was not written: %w; the run's outcome is in the summary above", f.path, err)
	}
	return nil
}

// notifier posts a run's alert to a checked URL.
type notifier struct {
	url, host string
	timeout   time.Duration
}

// resolveNotify turns --notify (else [notify] url) into a notifier, checked by
// config.CheckNotifyURL: nil when no alert is configured, or when it is read from an
// environment variable that is unset (said on stderr). A URL that is not allowed is an error.
func resolveNotify(flag string, cfg *config.Config, secret func(string) string, stderr io.Writer) (*notifier, error) {
	setting, from := strings.TrimSpace(flag), "--notify"
	if setting == "" && cfg != nil {
		setting, from = strings.TrimSpace(cfg.Notify.URL), "[notify] url"
	}
	if setting == "" {
		return nil, nil
	}
	raw, fromEnv, err := config.ResolveNotifyURL(setting, secret)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", from, err)
	}
	if raw == "" && fromEnv {
		fmt.Fprintf(stderr, "triage: warning: %s reads %s, which is not set: this run sends no alert\n", from, model.SanitizeLine(setting))
		return nil, nil
	}
	var prefixes []string
	n := &notifier{url: raw, timeout: config.DefaultNotifyTimeout}
	if cfg != nil {
		prefixes, n.timeout = cfg.Notify.URLPrefixes, cfg.Notify.TimeoutDuration()
	}
	if err := config.CheckNotifyURL(raw, prefixes); err != nil {
		return nil, fmt.Errorf("%s: %v; nothing was sent", from, err)
	}
	if u, err := url.Parse(raw); err == nil {
		n.host = model.SanitizeLine(u.Host)
	}
	return n, nil
}

// send posts the run's alert when it calls for one; a failure is said on stderr.
func (n *notifier) send(ctx context.Context, run Run, reportPath string, stderr io.Writer) {
	if n == nil {
		return
	}
	a, ok := NewAlert(run, reportPath)
	if !ok {
		return
	}
	if err := Post(context.WithoutCancel(ctx), n.url, a, n.timeout); err != nil {
		fmt.Fprintf(stderr, "triage: %v (the exit code is the run's)\n", err)
		return
	}
	fmt.Fprintf(stderr, "notify: alert sent to %s\n", n.host)
}
