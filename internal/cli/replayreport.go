package cli

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
	"github.com/triage-dev/triage/internal/report"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
)

// `triage replay --report FILE` and `--notify URL` (issue 11): what an unattended run leaves
// behind. The report is written whatever the run's outcome (a halt, --json, an interrupt);
// the alert is posted only when the run halted or left rows not done.
//
// Exit codes stay the run's: a report that can't be written after the run turns a 0 into a 1
// (the run is done but the report that was asked for is missing, and cron must say so) and
// leaves 1 and 3 as they are; an alert that can't be posted is reported on stderr and changes
// nothing. A report path or notify URL that can't work is a usage error (2) before anything
// is sent.

// reportFormat is the report's format from the file's extension: "html" or "md".
func reportFormat(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".html", ".htm":
		return "html", nil
	case ".md", ".markdown":
		return "md", nil
	}
	return "", fmt.Errorf("replay: --report %q: the format is chosen by the extension: want FILE.html (for a mail client or a browser) or FILE.md (Markdown)", path)
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
	format, err := reportFormat(path)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("replay: --report %q: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(abs), "."+filepath.Base(abs)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("replay: --report %q can't be written (%w): create its directory or choose another path; nothing was sent", path, err)
	}
	return &reportFile{path: abs, format: format, tmp: tmp}, nil
}

// write renders the run into the temporary file and moves it to the report's path.
func (f *reportFile) write(run report.Run) error {
	var err error
	if f.format == "md" {
		err = report.Markdown(f.tmp, run)
	} else {
		err = report.HTML(f.tmp, run)
	}
	if cerr := f.tmp.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.tmp.Name(), f.path)
	}
	if err != nil {
		_ = os.Remove(f.tmp.Name())
		return fmt.Errorf("replay: the report %s was not written: %w; the run's outcome is in the summary above", f.path, err)
	}
	return nil
}

// notifier posts a run's alert to a checked URL.
type notifier struct {
	url, host string
	timeout   time.Duration
}

// resolveNotify turns --notify (else [notify] url) into a notifier, checked by the rule
// `config check` applies (config.CheckNotifyURL): nil when no alert is configured, or when
// it is read from an environment variable that is unset (said on stderr: the run goes on
// without one). A URL that is not allowed is a usage error.
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
		return nil, usageErr("replay: %s: %v", from, err)
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
		return nil, usageErr("replay: %s: %v; nothing was sent", from, err)
	}
	if u, err := url.Parse(raw); err == nil {
		n.host = model.SanitizeLine(u.Host)
	}
	return n, nil
}

// send posts the run's alert when it calls for one. It runs after the run, even an
// interrupted one (so not on the cancelled context), bounded by its own timeout; a failure
// is said on stderr and never changes the exit code.
func (n *notifier) send(ctx context.Context, run report.Run, reportPath string, stderr io.Writer) {
	if n == nil {
		return
	}
	a, ok := report.NewAlert(run, reportPath)
	if !ok {
		return
	}
	if err := report.Post(context.WithoutCancel(ctx), n.url, a, n.timeout); err != nil {
		fmt.Fprintf(stderr, "triage: %v (the exit code is the run's)\n", err)
		return
	}
	fmt.Fprintf(stderr, "notify: alert sent to %s\n", n.host)
}

// reportRun gathers what the report and the alert describe.
func reportRun(s *settings, t *model.Table, sel replay.Selection, sum model.ReplaySummary, doc *replayDoc, started, ended time.Time, rs report.Settings, secret func(string) string) report.Run {
	rs.Sources = report.Sources(s.cfg)
	return report.Run{
		Tab: t.Config.Name, SheetGID: t.SheetID, SpreadsheetID: s.spreadsheet,
		Summary: sum, Selected: doc.Selected, UnknownIDs: sel.Unknown, Excluded: sel.Excluded, Stuck: sel.Stuck(t, sum),
		Started: started, Ended: ended, ExitCode: doc.ExitCode,
		Settings: rs, Secrets: report.Secrets(s.cfg, secret),
	}
}
