package cli

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/internal/replymail"
	"github.com/triage-dev/triage/internal/serve"
	"github.com/triage-dev/triage/postgres"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/tui"
)

// newServeCmd is `triage serve`: the TUI for a team over SSH (DESIGN §9).
func newServeCmd(g *globals, e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the TUI to a team over SSH",
		Long: `Serve the terminal UI over SSH to the people listed in the config's [serve] section,
each as themselves: one process holds the Sheets credential and the workbook. Public-key
authentication only: keys under [serve.users.NAME], an authorized_keys file, or user
certificates from a trusted CA. The host key is created (0600) on first start and its
fingerprint logged. Logs go to stderr. SIGHUP re-reads the users; SIGTERM says goodbye to
each session and stops. See README.md, "Serving a team over SSH".`,
		Example: `  triage serve
  triage serve --addr 127.0.0.1:2222 --host-key /var/lib/triage/ssh_host_ed25519
  ssh -p 2222 -t alice@jumphost            # what each person runs`,
		Args: noArgs,
	}
	g.register(cmd.Flags(), gAll)
	fs := cmd.Flags()
	addr := fs.String("addr", "", "listen address (default [serve] addr, else "+config.DefaultServeAddr+")")
	hostKey := fs.String("host-key", "", "the server's private host key, created 0600 if missing (default [serve] host_key, else $XDG_STATE_HOME/triage/ssh_host_ed25519)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return cmdServe(cmd.Context(), g, e, *addr, *hostKey)
	}
	return cmd
}

func cmdServe(ctx context.Context, g *globals, e *env, addr, hostKey string) error {
	// SIGHUP is caught from the start: a `systemctl reload` during the first load must not
	// kill the server (its default action); it is read once the server runs.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	s, err := resolveFor(g, e, forTUI)
	if err != nil {
		return err
	}
	path, explicit := configPath(g, e)
	auth, err := serveAuth(s.cfg, e)
	if err != nil {
		return err
	}
	set, err := serveSettings(s.cfg, e, addr, hostKey, auth)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(e.stderr, nil))
	// One pacer for every session (they share the store and its credential's quota), and a
	// quota budget per request, not one for the server's life; each wait is logged.
	ctx = sheets.WithoutQuotaBudget(ctx)
	e.quotaNotice = func(line string) { log.Warn(line) }
	factory, err := sessionFactory(ctx, s, e, log)
	if err != nil {
		return err
	}
	srv, err := serve.New(set, factory, log)
	if err != nil {
		return usageErr("serve: %v", err)
	}
	go reloadOnHangup(ctx, hup, e, path, explicit, srv, log)
	if err := srv.ListenAndServe(ctx); err != nil {
		return usageErr("serve: %v", err)
	}
	return nil
}

// serveAuth resolves who may connect, refusing a config that lets nobody in or whose key
// files have problems (the same problems `triage config check` lists).
func serveAuth(cfg *config.Config, e *env) (*config.ServeAuth, error) {
	auth, probs := cfg.ServeAuth(e.vars().home)
	if len(probs) > 0 {
		return nil, &exitError{code: exitUsage, err: &config.Error{Path: cfg.Path(), Problems: probs}}
	}
	if len(auth.Keys) == 0 && len(auth.CAs) == 0 {
		return nil, usageErr("serve: nobody can log in: add a [serve.users.NAME] section with keys = [\"ssh-ed25519 AAAA...\"] and role = \"viewer\" (or triager, operator) to %s", first(cfg.Path(), e.vars().defaultConfigPath))
	}
	return auth, nil
}

// serveSettings applies the flags over [serve] (flags beat the config).
func serveSettings(cfg *config.Config, e *env, addr, hostKey string, auth *config.ServeAuth) (serve.Settings, error) {
	sc := cfg.Serve
	key := cfg.ResolvePath(sc.HostKey, e.vars().home)
	if hostKey != "" {
		key = hostKey
	}
	if key == "" {
		if e.vars().stateHome == "" {
			return serve.Settings{}, usageErr("serve: no place for the host key: pass --host-key FILE, set [serve] host_key, or set XDG_STATE_HOME or HOME")
		}
		key = filepath.Join(e.vars().stateHome, "triage", "ssh_host_ed25519")
	}
	return serve.Settings{
		Addr:            first(addr, sc.AddrValue()),
		HostKeyPath:     key,
		MaxSessions:     sc.MaxSessionsValue(),
		IdleTimeout:     sc.IdleTimeoutValue(),
		MaxAuthFailures: sc.MaxAuthFailuresValue(),
		Auth:            auth,
	}, nil
}

// sessionFactory opens the one store, starts the hub over it (one refresh loop and one cache
// for everyone; on a database, fed by its change notices) and gives every session a TUI on the hub as its person: their role checked
// where writes and replays start, their name in triaged_by. The first load happens before
// listening, so a wrong ID or a dead network is exit 2, not a broken screen for the first
// person to connect.
func sessionFactory(ctx context.Context, s *settings, e *env, log *slog.Logger) (serve.Factory, error) {
	st, _, err := openStore(ctx, s, e)
	if err != nil {
		return nil, err
	}
	sources, err := buildSources(s.cfg)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	// The version first (where Drive allows), so that the hub's first idle refresh knows this
	// read is current; then the one read of the start, which the hub keeps as its first cache.
	if _, err := st.Changed(ctx); err != nil {
		log.Warn("no change check; every refresh reads the whole sheet", "err", err)
	}
	wb, err := loadWorkbook(ctx, st)
	if err != nil {
		return nil, err
	}
	km, err := keyMap(s.cfg)
	if err != nil {
		return nil, err
	}
	rp := newReplayRunner(sources, e.vars().secret, st)
	mailer, err := replymail.New(s.cfg.Mail, e.getenv)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	// The hub's reads outlive the signal: during the shutdown grace a write that lands is
	// followed by its read, which must not fail as "context canceled". Its loop stops with ctx.
	opts := serve.HubOptions{Store: st, Replayer: rp, Refresh: s.cfg.RefreshInterval(), Logger: log, Initial: wb}
	if db, ok := st.(*postgres.Store); ok {
		// A database tells of every change: the hub reads when told, at once, and an idle
		// hub sends no queries (its interval's change check asks nothing of the server).
		if opts.Changes, err = changeNotices(ctx, db); err != nil {
			return nil, &exitError{code: exitUsage, err: err}
		}
	}
	hub := serve.NewHub(context.WithoutCancel(ctx), opts)
	go hub.Run(ctx)
	return func(u serve.User, _ []string) (tui.Options, func()) {
		sess := hub.Session(u)
		// Remote: the program runs on the jump host, not on the person's machine, so it
		// neither suspends itself nor runs an editor there.
		return sess.Options(tui.Options{SpreadsheetID: st.SpreadsheetID(), KeyMap: km, Mouse: s.cfg.Mouse, Remote: true, Mailer: mailer}), sess.Close
	}, nil
}

// reloadOnHangup re-reads the config's users on each signal from hup. A config with
// problems is logged and the users stay as they were: a typo must not lock everyone out.
// Only who may connect is reloaded; the address, limits and host key need a restart.
func reloadOnHangup(ctx context.Context, hup <-chan os.Signal, e *env, path string, explicit bool, srv *serve.Server, log *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		}
		cfg, err := config.Load(path, explicit)
		if err == nil {
			var auth *config.ServeAuth
			auth, err = serveAuth(cfg, e)
			if err == nil {
				srv.Reload(auth)
				continue
			}
		}
		log.Error("reload refused; the users stay as they were", "config", path, "error", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
}
