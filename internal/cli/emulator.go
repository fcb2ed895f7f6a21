package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/triage-dev/triage/internal/demo"

	"github.com/spf13/cobra"
	"github.com/triage-dev/triage/sheets/emulator"
)

// serveEmulator starts `triage emulator`'s server and says where it listens. Whether an
// address may be served is decided in one place, emulator.ServeWith (loopback only unless
// allowRemote); here a refusal becomes the usage error that names --allow-remote, and a
// server other machines can reach gets a loud warning on stderr, because the emulator has no
// authentication and writes (and persists) whatever it is sent.
func serveEmulator(ctx context.Context, e *env, emu *emulator.Emulator, wb *emulator.Workbook, addr string, allowRemote bool) (*emulator.Server, error) {
	srv, err := emulator.ServeWith(ctx, addr, emu, emulator.ServeOptions{AllowRemote: allowRemote})
	switch {
	case errors.Is(err, emulator.ErrNotLoopback):
		return nil, usageErr("emulator: --addr %v; the emulator's API is unauthenticated and writable, so it serves loopback only (e.g. 127.0.0.1:8089) unless you pass --allow-remote", err)
	case err != nil:
		return nil, usageErr("emulator: listen on %s: %v", addr, err)
	}
	printEmulatorBanner(e, srv, wb)
	return srv, nil
}

// printEmulatorBanner tells where the emulator answers (stdout) and, when other machines can
// reach it, warns on stderr. The addresses are the ones bound: a wildcard listen is called
// that, never passed off as 127.0.0.1 alone.
func printEmulatorBanner(e *env, srv *emulator.Server, wb *emulator.Workbook) {
	hostPort := strings.TrimPrefix(srv.URL, "http://")
	switch {
	case srv.AllInterfaces:
		fmt.Fprintf(e.stdout, "Sheets API emulator serving spreadsheet %q (%q) on ALL network interfaces (%s): %s from this machine, and this machine's other addresses on the same port\n", wb.SpreadsheetID, wb.Title, srv.Addr, srv.URL)
	default:
		fmt.Fprintf(e.stdout, "Sheets API emulator serving spreadsheet %q (%q) at %s\n", wb.SpreadsheetID, wb.Title, srv.URL)
	}
	fmt.Fprintf(e.stdout, "point triage at it:\n  export SHEETS_EMULATOR_HOST=%s TRIAGE_SPREADSHEET=%s\n", hostPort, wb.SpreadsheetID)
	fmt.Fprintf(e.stdout, "or any client: curl '%s/v4/spreadsheets/%s/values/Inbox!A1:F3'\n", srv.URL, wb.SpreadsheetID)
	if !srv.Loopback {
		where := srv.Addr
		if srv.AllInterfaces {
			where = "every interface of this machine (" + srv.Addr + ")"
		}
		fmt.Fprintf(e.stderr, "WARNING: --allow-remote: the emulator listens on %s with NO authentication: anyone who can reach it can read and change spreadsheet %q", where, wb.SpreadsheetID)
		fmt.Fprintln(e.stderr, ", and with --persist rewrite its file. Use it only on a network you trust, or put it behind a firewall.")
	}
}

// newEmulatorCmd is `triage emulator`: it serves a workbook over the Sheets v4 REST API until interrupted: on loopback
// only unless --allow-remote (it has no authentication; see serveEmulator).
func newEmulatorCmd(_ *globals, e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "emulator",
		Short: "Serve a workbook over a local Sheets v4 API emulator",
		Long: `Serve a workbook (the demo workbook, or a JSON workbook file) over a faithful local
emulator of the Sheets v4 REST API until interrupted. Point triage (or any Sheets client)
at it with --endpoint or SHEETS_EMULATOR_HOST. The API has no authentication and is
writable, so it listens on loopback only unless --allow-remote.`,
		Example: `  triage emulator
  SHEETS_EMULATOR_HOST=127.0.0.1:8089 triage --spreadsheet demo
  triage emulator --workbook wb.json --persist`,
		Args: noArgs,
	}
	fs := cmd.Flags()
	addr := fs.String("addr", "127.0.0.1:8089", "listen address (loopback only unless --allow-remote)")
	path := fs.String("workbook", "", "JSON workbook to serve (default: the demo workbook)")
	persist := fs.Bool("persist", false, "write every change back to --workbook")
	allowRemote := fs.Bool("allow-remote", false, "allow an --addr other machines can reach (the API is unauthenticated and writable)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		ctx := cmd.Context()
		var wb *emulator.Workbook
		var err error
		if *path == "" {
			if *persist {
				return usageErr("emulator: --persist needs --workbook FILE")
			}
			wb, err = demo.Workbook(time.Now())
		} else {
			wb, err = emulator.LoadWorkbook(*path)
		}
		if err != nil {
			return usageErr("emulator: %v", err)
		}
		emu := emulator.New()
		emu.AddWorkbook(wb)
		if *persist {
			emu.SetPersist(wb.SpreadsheetID, *path)
		}
		srv, err := serveEmulator(ctx, e, emu, wb, *addr, *allowRemote)
		if err != nil {
			return err
		}
		defer srv.Stop()
		<-ctx.Done()
		return nil
	}
	return cmd
}
