// Command triage is a terminal UI for triaging a contact-form inbox, a dead-letter queue of
// failed webhook calls and a job queue that live in a Google Sheet. See README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/triage-dev/triage/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first Ctrl-C asks for a clean stop (a replay lets calls in flight finish and writes
	// their outcomes back); once it has been seen, the default handling is back, so a second
	// Ctrl-C ends the process at once.
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := cli.Main(ctx)
	stop()
	os.Exit(code)
}
