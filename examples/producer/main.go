// Command producer is a runnable example of a caller using triage's client (replay.Producer):
// it sends -n JSON calls to -url, each keyed by its payload's "id" field, and appends every
// call that is not delivered to the failed_calls tab of a sheet, with the key it was sent
// with, so that `triage replay --all` later sends it again under that key.
//
//	SHEETS_EMULATOR_HOST=127.0.0.1:8085 go run ./examples/producer \
//	    -spreadsheet demo -url http://127.0.0.1:9000/v1/orders -n 20
//
// Without SHEETS_EMULATOR_HOST it uses -credentials (or GOOGLE_APPLICATION_CREDENTIALS, or
// Application Default Credentials) and a real spreadsheet.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"strings"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/sheets"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), `usage: producer -spreadsheet ID -url URL [-n N] [-source NAME] [-credentials FILE]

Sends N calls {"id":"order-<i>",...} to URL through replay.Producer (key = the payload's id,
sent in the Idempotency-Key header; triage's outcome table, backoff, Retry-After and timeouts)
and appends each call that is not delivered to the spreadsheet's failed_calls tab, RAW, with
that key and status dead. Replay them later with: triage replay --all

The sheet: SHEETS_EMULATOR_HOST=host:port for a local emulator (triage emulator), else
-credentials or Application Default Credentials.

`)
		flag.PrintDefaults()
	}
	spreadsheet := flag.String("spreadsheet", "", "spreadsheet ID (the part of its URL between /d/ and /edit)")
	target := flag.String("url", "", "where to send the calls; its directory is the source's only allowed prefix")
	n := flag.Int("n", 10, "how many calls to send")
	source := flag.String("source", "orders", "the source name written to each dead letter (triage's [sources.NAME])")
	creds := flag.String("credentials", "", "service-account or authorized-user JSON (default: the environment)")
	flag.Parse()
	if *spreadsheet == "" || *target == "" {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *spreadsheet, *target, *source, *creds, *n); err != nil {
		fmt.Fprintln(os.Stderr, "producer:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, spreadsheet, target, source, creds string, n int) error {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return fmt.Errorf("-url %q is not an absolute URL", target)
	}
	p := u.EscapedPath()
	prefix := u.Scheme + "://" + u.Host + p[:strings.LastIndex(p, "/")+1] // the URL's directory
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}

	// The sink: the sheet's failed_calls tab, through triage's own store.
	svc, _, err := sheets.Connect(ctx, sheets.AuthOptions{CredentialsFile: creds, Getenv: os.Getenv})
	if err != nil {
		return err
	}
	store := sheets.New(ctx, svc, sheets.Options{SpreadsheetID: spreadsheet,
		Tabs: []model.TabConfig{model.DefaultTabConfig(model.RoleDeadLetter)}})

	// The client: one source, the same rules `triage replay` applies to it.
	pr := &replay.Producer{
		Client:    &replay.Client{Sources: map[string]*replay.Source{source: {Name: source, URLPrefixes: []string{prefix}}}},
		Sink:      store,
		KeyFields: map[string]string{source: "id"}, // key = the payload's id
	}
	calls := make([]replay.Call, n)
	for i := range calls {
		calls[i] = replay.Call{Source: source, URL: target, Body: fmt.Appendf(nil, `{"id":"order-%d","amount":%d}`, i, 10*i)}
	}
	sent, halt := pr.SendAll(ctx, calls)

	lost := 0
	for _, s := range sent {
		switch {
		case s.Delivered():
			fmt.Printf("%s  %s\n", s.Key, s.Result.Outcome)
		case s.DeadLettered:
			fmt.Printf("%s  dead-lettered: %s\n", s.Key, model.SanitizeLine(s.Result.Detail))
		default:
			lost++
			fmt.Printf("%s  NOT RECORDED: %s\n", s.Key, model.SanitizeLine(s.Err.Error()))
		}
	}
	if halt != nil {
		fmt.Printf("halted (%s): %s\n", halt.Cause, model.SanitizeLine(halt.Detail))
	}
	if lost > 0 {
		return fmt.Errorf("%d calls were neither delivered nor recorded (see above)", lost)
	}
	return nil
}
