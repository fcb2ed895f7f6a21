package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/triage-dev/triage/internal/report"
	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
)

// newReplayCmd is `triage replay [--tab NAME] [--source S] [--all | ID...] [--dry-run]
// [--concurrency N] [--json] [--force] [--max-time D] [--limit N] [--report FILE.html|.md]
// [--notify URL]` (DESIGN §7): it selects dead-letter rows (replay.Select), hands them to
// replay.Run (the one replay-then-write-back loop, shared with the TUI) and reports. Progress
// goes to stderr; the summary goes to stderr, and with --json one JSON document goes to stdout.
//
// Exit codes (replay.Selection.ExitCode, replay.ExitAfterReport): 0 every selected row is done
// (delivered, duplicate, or skipped by rule); 1 some row is not (rejected, retryable,
// deferred, refused for a problem, a write-back conflict or error, an unknown ID, left out by
// --limit, not started because --max-time was nearly up, or the run was interrupted; or the
// --report asked for could not be written after a clean run); 2 usage or config; 3 the run
// halted. A failed --notify never changes it (report.Delivery).
// Cancelling ctx (Ctrl-C, SIGTERM) lets the requests in flight finish, starts nothing new, and
// still writes their outcomes back and prints the summary; --max-time
// (replay.RunOptions.Deadline) stops the run the same way before its time is up.
func newReplayCmd(g *globals, e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "replay [ID...]",
		Short: "Replay dead-lettered calls, each under its original idempotency key",
		Long: `Replay the failed calls of a dead-letter tab through the idempotent retry client: each
row's body is sent unchanged under its original idempotency key, only to the source's
allowed url_prefixes, and the outcome (status, attempts, error, replayed_at) is written
back by ID. Rows are the given IDs (their keys), or --all waiting rows (rejected and
discarded rows are skipped). A systemic failure, or three retryable failures in a row,
halts the run (exit 3); --dry-run shows what would be sent and changes nothing.

For cron, --max-time and --limit bound a run. --max-time 55m stops starting sends when the
time left is less than the longest request timeout of the selected rows' sources plus ` + model.ShortDuration(replay.WriteBackAllowance) + `
for the write-back (with the default ` + model.ShortDuration(replay.DefaultTimeout) + ` timeout: ` + model.ShortDuration(replay.DefaultTimeout+replay.WriteBackAllowance) + ` before the end), lets the requests
in flight finish, writes their outcomes back and names the rows not started; --limit 500
replays the 500 oldest waiting rows (by timestamp) and says how many it left out. Rows left
for the next run make the exit code 1; they keep their keys, so nothing is sent twice.
SIGTERM or Ctrl-C stops a run the same way.

Progress goes to stderr; the summary too, and with --json one JSON document goes to stdout.

--report FILE.html (or .md) writes a report of the run for the people who read it: counts,
the halt and why, every row not done linked to its row in Google Sheets, the refused and
skipped rows with their reasons, and the configuration (secrets redacted). It is written
whatever the outcome. --notify URL (or "env:NAME", or [notify] url in the config; the URL
must lie under [notify] url_prefixes) posts one short JSON alert when the run halts or
leaves rows not done; a clean run sends none, and a failed alert doesn't change the exit
code.`,
		Example: `  triage replay --all --dry-run
  triage replay --all --source contact-form --concurrency 2
  triage replay 7f3c9a1e 0b44d2aa --json
  triage replay --all --max-time 55m --limit 500
  triage replay --all --report replay.html --notify env:TRIAGE_NOTIFY_URL`,
		Args: cobra.ArbitraryArgs,
	}
	fs := cmd.Flags()
	f := &replayFlags{}
	fs.StringVar(&f.tab, "tab", "", "name of the dead-letter tab (default: the configured deadletter tab)")
	completeTabs(cmd, g, e)
	completeIDs(cmd, g, e, model.RoleDeadLetter)
	fs.StringVar(&f.source, "source", "", "only rows of this source")
	fs.BoolVar(&f.all, "all", false, "every row of the tab (delivered, rejected and discarded rows are skipped)")
	fs.BoolVar(&f.dry, "dry-run", false, "list what would be sent (method, URL, key, source, redacted headers); send and write nothing")
	fs.IntVar(&f.conc, "concurrency", 0, fmt.Sprintf("requests in flight at once, at most %d (default: each source's own concurrency, and %d for the sources without one)", replay.MaxConcurrency, replay.DefaultConcurrency))
	fs.BoolVar(&f.asJSON, "json", false, "one JSON document on stdout")
	fs.BoolVar(&f.force, "force", false, "also replay rows older than their source's key_ttl (a duplicate may result)")
	fs.StringVar(&f.maxTimeText, "max-time", "", fmt.Sprintf("the longest the run may take, e.g. 55m: sends stop when less is left than the longest request timeout of its sources plus %s for the write-back; what is in flight finishes and is written back, the rows not started are named (exit 1)", model.ShortDuration(replay.WriteBackAllowance)))
	fs.IntVar(&f.limit, "limit", 0, "replay at most N rows, the oldest (by timestamp) first, after every other rule; the summary says how many were left out (exit 1 when some were)")
	fs.StringVar(&f.reportPath, "report", "", "write a report of the run to FILE.html or FILE.md (the extension picks the format)")
	fs.StringVar(&f.notify, "notify", "", "post an alert when the run halts or leaves rows not done: a URL under [notify] url_prefixes, or env:NAME (default: [notify] url)")
	g.register(fs, gAll)
	cmd.RunE = func(cmd *cobra.Command, ids []string) error {
		// A --concurrency left out is no bound (0, replay.Run's default): a source's own
		// concurrency in the config stands, where a default of ours would cap it.
		f.concGiven = fs.Changed("concurrency")
		f.limitGiven = fs.Changed("limit")
		if err := f.check(ids); err != nil {
			return err
		}
		return runReplay(cmd.Context(), g, e, f, ids)
	}
	return cmd
}

// replayFlags are `triage replay`'s flags.
type replayFlags struct {
	tab, source        string
	all, dry, force    bool
	asJSON             bool
	conc               int
	concGiven          bool
	reportPath, notify string
	// maxTimeText is --max-time as given, maxTime what check read from it (0: no limit).
	maxTimeText string
	maxTime     time.Duration
	limit       int
	limitGiven  bool
}

// check is the flags' cross-checks: usage errors before anything is read or sent.
func (f *replayFlags) check(ids []string) error {
	switch {
	case f.all && len(ids) > 0:
		return usageErr("replay: give --all or row IDs, not both")
	case !f.all && len(ids) == 0:
		return usageErr("replay: nothing selected: pass --all (every waiting row; add --source S for one source) or the IDs of the rows (their keys, as `triage list --tab deadletter` shows them)")
	case f.concGiven && (f.conc < 1 || f.conc > replay.MaxConcurrency):
		// 0 is not "the default": it would be a run that can't send, so it is refused like -3.
		return usageErr("replay: --concurrency %d: want a number of requests in flight from 1 to %d (leave it out for each source's own concurrency, else %d)", f.conc, replay.MaxConcurrency, replay.DefaultConcurrency)
	case f.dry && (f.reportPath != "" || f.notify != ""):
		return usageErr("replay: --report and --notify describe a run, and a dry run sends nothing (its list of calls is on stdout)")
	case f.limitGiven && f.limit < 1:
		// 0 would be a run that sends nothing, like --concurrency 0.
		return usageErr("replay: --limit %d: want a number of rows from 1 up (leave it out to replay every selected row)", f.limit)
	}
	if f.maxTimeText != "" {
		d, err := time.ParseDuration(strings.TrimSpace(f.maxTimeText))
		switch {
		case err != nil:
			return usageErr("replay: --max-time %q is not a duration: give one such as 55m or 1h30m (the longest the run may take, from start to summary)", f.maxTimeText)
		case d <= 0:
			return usageErr("replay: --max-time %s: want a positive duration such as 55m (leave it out for no time limit)", strings.TrimSpace(f.maxTimeText))
		}
		f.maxTime = d
	}
	if f.reportPath != "" {
		if err := report.CheckPath(f.reportPath); err != nil {
			return usageErr("replay: %v", err)
		}
	}
	return nil
}

// runReplay opens the tab, selects its rows (replay.Select), runs them (replay.Run), prints
// the summary and hands the run to its report and alert (report.Delivery).
func runReplay(ctx context.Context, g *globals, e *env, f *replayFlags, ids []string) error {
	// A --max-time is counted from here, on the replay client's clock: a supervisor's
	// timeout (cron's `timeout`, systemd's) counts the loading and settling too.
	clock := e.replayNow()
	begun := clock()
	s, err := resolve(g, e)
	if err != nil {
		return err
	}
	if s.readonly && !f.dry {
		return usageErr("replay: the sheet is open read-only (--readonly or readonly = true), and a replay writes each row's outcome back; use --dry-run to see what would be sent")
	}
	sources, err := buildSources(s.cfg)
	if err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("%w\nrun `triage config check`", err)}
	}
	// The store counts its write requests: the summary's write_back.requests.
	st, cst, err := openCountedStore(ctx, s, e)
	if err != nil {
		return err
	}
	defer closeStore(st)
	srcFilter := strings.TrimSpace(f.source)
	t, err := openReplayTab(ctx, st, f.tab, srcFilter, sources)
	if err != nil {
		return err
	}
	if err := f.checkMaxTime(t, replay.Select(t, ids, f.all, srcFilter), sources); err != nil {
		return err
	}
	var settled model.ApplyResult
	if !f.dry {
		// A killed run's write-back may have left "delivered" on rows never sent: settled
		// before the rows are selected, and read again, so those rows are replayed.
		var ran bool
		if settled, ran, err = settleFirst(ctx, st); err != nil {
			return err
		}
		if ran {
			if t, err = openReplayTab(ctx, st, f.tab, srcFilter, sources); err != nil {
				return err
			}
		}
	}
	sel := replay.Select(t, ids, f.all, srcFilter)
	var out *report.Delivery
	if !f.dry {
		tg := report.Targets{ReportPath: f.reportPath, Notify: f.notify, Config: s.cfg, Secret: e.vars().secret}
		if out, err = report.Prepare(tg, e.stderr); err != nil {
			return &exitError{code: exitUsage, err: fmt.Errorf("replay: %w", err)}
		}
	}

	opts := replay.RunOptions{Concurrency: f.conc, DryRun: f.dry, Force: f.force, Limit: f.limit}
	if f.maxTime > 0 {
		opts.Deadline = begun.Add(f.maxTime)
	}
	var prog *progressLine
	if !f.dry {
		prog = newProgressLine(e.stderr, isTerminal(e.stderr), func() int { return e.widthOf(e.stderr) }, time.Now)
		opts.Progress = prog.event
	}
	started := time.Now()
	client := newReplayClient(sources, e.vars().secret)
	client.Now = clock
	sum := replay.Run(ctx, client, cst, t, sel.Records, opts)
	ended := time.Now()
	sum.Recovered = append(settled.Recovered, sum.Recovered...)
	for _, d := range settled.Damaged {
		sum.WriteErrors = append(sum.WriteErrors, d.String())
	}
	if prog != nil {
		prog.finish()
	}

	doc := newReplayDoc(t, sel, sum, f.dry)
	doc.bounds(f, replay.StopMargin(t, sel.Records, sources))
	if name := storeName(s); name != "" {
		doc.WriteBack.Store = name
	}
	run := reportRun(s, t, sel, sum, doc, started, ended,
		report.Settings{All: f.all, IDs: ids, SourceFilter: srcFilter, Concurrency: f.conc, Force: f.force}, e.vars().secret)
	return out.Deliver(ctx, run, func(w report.Written) error {
		return printReplay(e, f.asJSON, doc, run.ExitCode, w)
	}, e.stderr)
}

// replayNow is the replay client's clock: the one --max-time is measured on (tests: a fake
// one that their receivers move on).
func (e *env) replayNow() func() time.Time {
	if e.replayClock != nil {
		return e.replayClock
	}
	return time.Now
}

// checkMaxTime refuses a --max-time too short to send anything: the run keeps the margin
// replay.StopMargin at its end for the requests in flight and the write-back, which depends
// on the selected rows' sources (sel), so it is checked once they are known, before anything
// is written or sent.
func (f *replayFlags) checkMaxTime(t *model.Table, sel replay.Selection, sources map[string]*replay.Source) error {
	if f.maxTime <= 0 {
		return nil
	}
	margin := replay.StopMargin(t, sel.Records, sources)
	if f.maxTime > margin {
		return nil
	}
	return usageErr("replay: --max-time %s leaves no time to send: the run stops starting sends %s before its end (the longest request timeout of the selected rows' sources, %s, plus %s to write outcomes back); give more than %s, or leave --max-time out",
		model.ShortDuration(f.maxTime), model.ShortDuration(margin), model.ShortDuration(margin-replay.WriteBackAllowance), model.ShortDuration(replay.WriteBackAllowance), model.ShortDuration(margin))
}

// openReplayTab loads the workbook and finds the dead-letter tab to replay (name, else the
// configured one), refusing a tab of another role and a --source (srcFilter) that neither a
// row of it nor the config names.
func openReplayTab(ctx context.Context, st store, name, srcFilter string, sources map[string]*replay.Source) (*model.Table, error) {
	wb, err := loadWorkbook(ctx, st)
	if err != nil {
		return nil, err
	}
	t, err := findTab(wb, cmp.Or(name, string(model.RoleDeadLetter)))
	if err != nil {
		return nil, err
	}
	if t.Config.Role != model.RoleDeadLetter {
		return nil, usageErr("replay: %q is %s %s tab; only dead-letter rows are replayed", t.Config.Name, article(string(t.Config.Role)), t.Config.Role)
	}
	if srcFilter != "" && sources[srcFilter] == nil && !replay.TabHasSource(t, srcFilter) {
		return nil, usageErr("replay: no source %q: no row of %q has it and it is not configured (configured: %s)", srcFilter, t.Config.Name, sourceNames(sources))
	}
	return t, nil
}

// printReplay prints a run: the rows (or, with --json, the document) on stdout, the summary
// and what became of the report on stderr; it returns the command's error, which carries
// the exit code.
func printReplay(e *env, asJSON bool, doc *replayDoc, runExit int, w report.Written) error {
	if w.Err != nil {
		doc.ReportError = "replay: " + w.Err.Error()
		doc.ExitCode = replay.ExitAfterReport(doc.ExitCode, false)
	} else {
		doc.Report = w.Path
	}
	if asJSON {
		if err := writeJSON(e.stdout, doc); err != nil {
			// The run happened: its alert still goes out and its exit code (3 for a halt)
			// still says how it ended; a lost summary can only make a clean run's 0 a 1.
			return &exitError{code: max(doc.ExitCode, exitPartial), err: fmt.Errorf("replay: write the JSON summary: %w", err)}
		}
	} else {
		printReplayRows(e.stdout, doc)
	}
	printReplaySummary(e.stderr, doc)
	if doc.ReportError != "" {
		fmt.Fprintf(e.stderr, "triage: %s\n", doc.ReportError)
	} else if w.Path != "" {
		fmt.Fprintf(e.stderr, "report: %s\n", w.Path)
	}
	switch {
	case doc.ExitCode == exitOK:
		return nil
	case doc.ExitCode == exitHalted:
		return &exitError{code: exitHalted, err: fmt.Errorf("replay halted: %s", model.SanitizeLine(doc.Halt.Detail))}
	case doc.ReportError != "" && runExit == exitOK:
		return &exitError{code: doc.ExitCode} // said above
	}
	if n := doc.notDone(); n > 0 {
		return &exitError{code: doc.ExitCode, err: fmt.Errorf("replay: %s of %d selected not done (see above)", words.Count(n, "row", "rows"), doc.Selected)}
	}
	// Every selected row is done, but the write-back hit cells of other rows it could not
	// put back (damage): they need a person.
	return &exitError{code: doc.ExitCode, err: fmt.Errorf("replay: every selected row is done, but the write-back reported %s (see above)",
		words.Count(len(doc.WriteBack.Errors)+len(doc.WriteBack.Conflicts), "problem", "problems"))}
}

// replayDoc is the JSON summary of `triage replay --json`; the human summary is printed from
// it too, so both always agree.
type replayDoc struct {
	Tab    string `json:"tab"`
	DryRun bool   `json:"dry_run"`
	// Selected is how many rows the command line picked (unknown IDs included).
	Selected int `json:"selected"`
	// Planned is how many rows the run meant to send.
	Planned int `json:"planned"`
	// Counts are rows by final state: delivered, duplicate, rejected, systemic, retryable,
	// deferred, not-attempted, refused (for a problem), skipped (by rule: delivered, rejected,
	// discarded), unknown (IDs no row has), excluded (IDs of another --source); queued in a
	// dry run.
	Counts       map[string]int `json:"counts"`
	Halted       bool           `json:"halted"`
	Halt         *docHalt       `json:"halt"`
	Cancelled    bool           `json:"cancelled"`
	NotAttempted []string       `json:"not_attempted"`
	Refused      []docRefusal   `json:"refused"`
	Skipped      []docRefusal   `json:"skipped"`
	UnknownIDs   []string       `json:"unknown_ids"`
	Excluded     []docRefusal   `json:"excluded"`
	// Held are the rows another live run was replaying (skipped, each also in skipped), by run.
	Held      []docHeld    `json:"held"`
	WriteBack docWriteBack `json:"write_back"`
	// Recovered are cells a killed triage's unfinished write had left on rows it was not
	// meant for, put back before this run planned (or by its writes).
	Recovered []string  `json:"recovered"`
	Rows      []docRow  `json:"rows"`
	WouldSend []docCall `json:"would_send,omitempty"`
	// MaxTime is the --max-time given ("" without one) and StopMargin how long before its
	// end the run stops starting sends (replay.StopMargin; "" without one). TimeUp is set when
	// it stopped so and that left rows for the next run; NotStarted are the rows it never
	// started then (each in not_attempted too).
	MaxTime    string   `json:"max_time"`
	StopMargin string   `json:"stop_margin"`
	TimeUp     bool     `json:"time_up"`
	NotStarted []string `json:"not_started"`
	// Limit is the --limit given (0 without one); LeftOut are the rows it left for the next
	// run, each with its reason (rows it would have sent, newer than the ones it took).
	Limit   int          `json:"limit"`
	LeftOut []docRefusal `json:"left_out"`
	// Report is the path the --report was written to; ReportError why it was not.
	Report      string `json:"report,omitempty"`
	ReportError string `json:"report_error,omitempty"`
	ExitCode    int    `json:"exit_code"`
}

type docHalt struct {
	Cause  string `json:"cause"`
	Source string `json:"source"`
	Detail string `json:"detail"`
}

type docHeld struct {
	By    string    `json:"by"`
	Since time.Time `json:"since"`
	Until time.Time `json:"until"`
	IDs   []string  `json:"ids"`
	// Line is the summary's line for them.
	Line string `json:"line"`
}

type docRefusal struct {
	ID     string `json:"id"`
	Row    int    `json:"row"`
	Reason string `json:"reason"`
}

type docWriteBack struct {
	// Requests are the write requests to the sheet, or on a database its transactions.
	Requests int `json:"requests"`
	// Store is where they went: "the sheet", or the database (its password redacted).
	Store     string   `json:"store"`
	Conflicts []string `json:"conflicts"`
	Errors    []string `json:"errors"`
}

type docRow struct {
	ID       string         `json:"id"`
	Row      int            `json:"row"`
	Source   string         `json:"source"`
	URL      string         `json:"url"`
	Key      string         `json:"key"`
	State    model.RowState `json:"state"`
	Attempts int            `json:"attempts"`
	Detail   string         `json:"detail,omitempty"`
	// WriteBack says why the row's outcome was not written back: not done, whatever its state.
	WriteBack string `json:"write_back,omitempty"`
}

type docCall struct {
	ID      string   `json:"id"`
	Row     int      `json:"row"`
	Method  string   `json:"method"`
	URL     string   `json:"url"`
	Key     string   `json:"key"`
	Source  string   `json:"source"`
	Headers []string `json:"headers"`
}

// replayCountOrder is the order counts are printed in.
var replayCountOrder = []string{
	string(model.StateDelivered), string(model.StateDuplicate), string(model.StateRejected), string(model.StateSystemic),
	string(model.StateRetryable), string(model.StateDeferred), string(model.StateNotAttempted), string(model.StateRefused),
	string(model.StateSkipped), "unknown", "excluded", string(model.StateQueued),
}

func newReplayDoc(t *model.Table, sel replay.Selection, sum model.ReplaySummary, dry bool) *replayDoc {
	d := &replayDoc{
		Tab: t.Config.Name, DryRun: dry,
		Selected:     sel.Selected(),
		Counts:       map[string]int{},
		Cancelled:    sum.Cancelled,
		NotAttempted: append([]string{}, sum.NotAttempted...),
		Refused:      []docRefusal{},
		Skipped:      []docRefusal{},
		UnknownIDs:   append([]string{}, sel.Unknown...),
		Excluded:     []docRefusal{},
		WriteBack:    docWriteBack{Requests: sum.WriteRequests, Store: "the sheet", Conflicts: []string{}, Errors: append([]string{}, sum.WriteErrors...)},
		Recovered:    []string{},
		Rows:         []docRow{},
		Held:         []docHeld{},
		TimeUp:       sum.TimeUp,
		NotStarted:   []string{},
		LeftOut:      []docRefusal{},
	}
	if sum.TimeUp {
		d.NotStarted = append(d.NotStarted, sum.NotAttempted...)
	}
	for _, rf := range sum.LeftOut {
		d.LeftOut = append(d.LeftOut, docRefusal{ID: rf.ID, Row: rf.Row, Reason: rf.Reason})
	}
	for _, g := range sum.Held {
		d.Held = append(d.Held, docHeld{By: g.Holder.By, Since: g.Holder.Since, Until: g.Holder.Until, IDs: g.IDs, Line: g.String()})
	}
	for _, r := range sum.Recovered {
		d.Recovered = append(d.Recovered, r.String())
	}
	for _, k := range replayCountOrder {
		if k != string(model.StateQueued) || dry {
			d.Counts[k] = 0
		}
	}
	if sum.Halted != nil {
		d.Halted = true
		d.Halt = &docHalt{Cause: sum.Halted.Cause, Source: sum.Halted.Source, Detail: sum.Halted.Detail}
	}
	for _, r := range sum.Rows {
		if r.State != model.StateRefused {
			d.Planned++
			d.Counts[string(r.State)]++
		}
		d.Rows = append(d.Rows, docRow{ID: r.ID, Row: r.Row, Source: r.Source, URL: r.URL, Key: r.Key,
			State: r.State, Attempts: r.Attempts, Detail: r.Detail, WriteBack: r.WriteBack})
	}
	for _, rf := range sum.Refused {
		x := docRefusal{ID: rf.ID, Row: rf.Row, Reason: rf.Reason}
		if rf.Skipped {
			d.Skipped = append(d.Skipped, x)
			d.Counts[string(model.StateSkipped)]++
		} else {
			d.Refused = append(d.Refused, x)
			d.Counts[string(model.StateRefused)]++
		}
	}
	for _, x := range sel.Excluded {
		d.Excluded = append(d.Excluded, docRefusal{ID: x.ID, Row: x.Row, Reason: x.Reason})
	}
	d.Counts["unknown"] = len(sel.Unknown)
	d.Counts["excluded"] = len(sel.Excluded)
	for _, c := range sum.WriteConflicts {
		d.WriteBack.Conflicts = append(d.WriteBack.Conflicts, c.String())
	}
	for _, p := range sum.DryRun {
		d.WouldSend = append(d.WouldSend, docCall{ID: p.ID, Row: p.Row, Method: p.Method, URL: p.URL, Key: p.Key,
			Source: p.Source, Headers: append([]string{}, p.Headers...)})
	}
	d.ExitCode = sel.ExitCode(t, sum)
	return d
}

// bounds records the run's bounds as given: --max-time (and the margin the run keeps at its
// end) and --limit.
func (d *replayDoc) bounds(f *replayFlags, margin time.Duration) {
	if f.maxTime > 0 {
		d.MaxTime, d.StopMargin = model.ShortDuration(f.maxTime), model.ShortDuration(margin)
	}
	d.Limit = f.limit
}

// notDone counts the selected rows that did not end delivered, duplicate or skipped, or
// whose outcome could not be written back to their row (the sheet still says they wait),
// the rows left out by --limit among them.
func (d *replayDoc) notDone() int {
	n := len(d.Refused) + len(d.UnknownIDs) + len(d.Excluded) + len(d.LeftOut)
	for _, r := range d.Rows {
		switch r.State {
		case model.StateDelivered, model.StateDuplicate:
			if r.WriteBack != "" {
				n++
			}
		case model.StateRefused:
		case model.StateQueued:
			if !d.DryRun {
				n++
			}
		default:
			n++
		}
	}
	return n
}

// countsLine renders the non-zero counts: "3 delivered · 1 rejected · 2 skipped".
func countsLine(counts map[string]int) string {
	var parts []string
	for _, k := range replayCountOrder {
		if n := counts[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, " · ")
}

// printReplayRows writes the per-row results (or, in a dry run, the calls that would be sent)
// to stdout as a table. Every cell from the sheet or a destination is sanitised.
func printReplayRows(w io.Writer, d *replayDoc) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	if d.DryRun {
		if len(d.WouldSend) == 0 {
			return
		}
		fmt.Fprintln(tw, "ROW\tKEY\tMETHOD\tURL\tSOURCE\tHEADERS")
		for _, c := range d.WouldSend {
			hdr := strings.Join(c.Headers, "; ")
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", c.Row, model.SanitizeLine(c.Key), model.SanitizeLine(c.Method),
				model.SanitizeLine(c.URL), model.SanitizeLine(c.Source), model.SanitizeLine(hdr))
		}
		tw.Flush()
		return
	}
	if len(d.Rows) == 0 {
		return
	}
	fmt.Fprintln(tw, "ROW\tKEY\tSOURCE\tSTATE\tATTEMPTS\tDETAIL")
	for _, r := range d.Rows {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\n", r.Row, model.SanitizeLine(r.Key), model.SanitizeLine(r.Source),
			r.State, r.Attempts, clip(model.SanitizeLine(r.Detail), 160))
	}
	tw.Flush()
}

// maxListed bounds each list of the human summary; --json has them all.
const maxListed = 20

// printReplaySummary writes the human summary to stderr: counts, the halt (loudly), rows not
// attempted, refused and failed rows with their reasons, unknown IDs, and the write-back.
func printReplaySummary(w io.Writer, d *replayDoc) {
	verb := "replay"
	if d.DryRun {
		verb = "dry run"
	}
	fmt.Fprintf(w, "%s of %q: %s selected, %d planned: %s\n", verb, d.Tab, words.Count(d.Selected, "row", "rows"), d.Planned, countsLine(d.Counts))
	if d.DryRun {
		fmt.Fprintf(w, "dry run: %s would be sent (listed on stdout); nothing was sent or written\n", words.Count(len(d.WouldSend), "call", "calls"))
	}
	if d.Halt != nil {
		fmt.Fprintf(w, "\n*** HALTED (%s, source %s): %s ***\n", d.Halt.Cause, model.SanitizeLine(d.Halt.Source), model.SanitizeLine(d.Halt.Detail))
		fmt.Fprintf(w, "nothing new was sent after the halt; %s not attempted: fix the cause and run the same command again\n\n",
			words.Count(len(d.NotAttempted), "row", "rows"))
	} else if d.Cancelled {
		fmt.Fprintf(w, "interrupted: requests in flight finished and their outcomes were written back; %s not attempted: run the same command again to continue (every row keeps its key, so nothing is applied twice)\n",
			words.Count(len(d.NotAttempted), "row", "rows"))
	} else if d.TimeUp {
		left := words.Count(len(d.NotStarted), "row", "rows") + " not started: the next run sends them"
		if len(d.NotStarted) == 0 {
			left = "the rows whose retries it cut short are the next run's"
		}
		fmt.Fprintf(w, "time is up: --max-time %s was nearly over (sends stop %s before its end, for the requests in flight and the write-back); requests in flight finished and their outcomes were written back; %s (every row keeps its key, so nothing is applied twice)\n",
			d.MaxTime, d.StopMargin, left)
	}
	if n := len(d.LeftOut); n > 0 {
		fmt.Fprintf(w, "limit: --limit %d left out %s (the oldest go first): the next run replays them\n",
			d.Limit, words.Count(n, "eligible row", "eligible rows"))
	}
	list := func(label string, items []string) {
		for i, s := range items {
			if i == maxListed {
				fmt.Fprintf(w, "%s ... and %d more (see --json)\n", label, len(items)-maxListed)
				break
			}
			fmt.Fprintf(w, "%s %s\n", label, model.SanitizeLine(s))
		}
	}
	var failed, notAttempted []string
	for _, r := range d.Rows {
		switch r.State {
		case model.StateRejected, model.StateSystemic, model.StateRetryable, model.StateDeferred:
			failed = append(failed, fmt.Sprintf("row %d (%s) %s: %s", r.Row, r.Key, r.State, r.Detail))
		case model.StateNotAttempted:
			notAttempted = append(notAttempted, fmt.Sprintf("row %d (%s)", r.Row, r.Key))
		}
	}
	list("failed:", failed)
	if d.TimeUp && d.Halt == nil && !d.Cancelled {
		list("not started:", notAttempted)
	} else {
		list("not attempted:", notAttempted)
	}
	var leftOut []string
	for _, r := range d.LeftOut {
		leftOut = append(leftOut, fmt.Sprintf("row %d (%s)", r.Row, r.ID))
	}
	list("left out:", leftOut)
	reasons := func(rs []docRefusal) []string {
		out := make([]string, len(rs))
		for i, r := range rs {
			out[i] = r.Reason
		}
		return out
	}
	// Rows another run holds are said once per run; --json lists each under skipped too.
	held := map[string]bool{}
	for _, h := range d.Held {
		fmt.Fprintln(w, model.SanitizeLine(h.Line))
		for _, id := range h.IDs {
			held[id] = true
		}
	}
	var skipped []docRefusal
	for _, s := range d.Skipped {
		if !held[s.ID] {
			skipped = append(skipped, s)
		}
	}
	list("refused:", reasons(d.Refused))
	list("skipped:", reasons(skipped))
	list("not selected:", reasons(d.Excluded))
	for i, id := range d.UnknownIDs {
		if i == maxListed {
			fmt.Fprintf(w, "unknown ID: ... and %d more (see --json)\n", len(d.UnknownIDs)-maxListed)
			break
		}
		fmt.Fprintf(w, "unknown ID %q: no row of %q has it (IDs are the rows' keys; refresh with `triage list --tab %s`)\n", model.SanitizeLine(id), d.Tab, d.Tab)
	}
	if !d.DryRun {
		wb := d.WriteBack
		what := words.Count(wb.Requests, "request", "requests")
		if wb.Store != "" && wb.Store != "the sheet" {
			what = words.Count(wb.Requests, "transaction", "transactions") + " on " + model.SanitizeLine(wb.Store)
		}
		fmt.Fprintf(w, "write-back: %s, %s, %s\n", what,
			words.Count(len(wb.Conflicts), "conflict", "conflicts"), words.Count(len(wb.Errors), "error", "errors"))
		list("write-back conflict:", wb.Conflicts)
		list("write-back error:", wb.Errors)
	}
	list("recovered:", d.Recovered)
}
