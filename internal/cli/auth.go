package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/spf13/cobra"
	"github.com/triage-dev/triage/googleauth"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
)

// openBrowser opens an address in the local browser, without waiting for it. Tests replace it.
var openBrowser = func(u string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		cmd = exec.Command("xdg-open", u)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}

// hostname names this machine in the printed `ssh -L` command. Tests replace it.
var hostname = os.Hostname

// timeLayout is how auth status shows times.
const timeLayout = "2006-01-02 15:04:05 MST"

// newAuthCmd is `triage auth login | status | logout`.
func newAuthCmd(g *globals, e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "Sign in to Google, show or revoke the login",
		Long: `Manage the Google login triage uses when no service-account key (--credentials) or
emulator endpoint is given: sign in, show who is signed in and which credentials are in
use, or revoke the saved login.`,
		Example: `  triage auth login
  triage auth status
  triage auth logout`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageErr("auth: want one of login, status, logout (see triage auth --help)")
		},
	}
	login := &cobra.Command{
		Use:   "login",
		Short: "Sign in with your Google account",
		Long: `Sign in with your Google account (OAuth loopback flow with PKCE) and save the token.
Works from an SSH session: open the printed address on any machine, then forward the
port with ssh -L or paste back the address the browser was sent to. FILE is the
client_secret.json of a Desktop OAuth client (default: oauth_client in the config file).`,
		Example: `  triage auth login
  triage auth login --change-check
  triage auth login --oauth-client ~/client_secret.json --no-browser --port 8085`,
		Args: noArgs,
	}
	fs := login.Flags()
	oauthClient := fs.String("oauth-client", "", "client_secret.json of a Desktop OAuth client (default: oauth_client in the config)")
	port := fs.Int("port", 0, "loopback port for the browser's redirect (default: any free port)")
	noBrowser := fs.Bool("no-browser", false, "don't try to open a browser on this machine")
	timeout := fs.Duration("timeout", googleauth.DefaultLoginTimeout, "how long to wait for the browser")
	changeCheck := fs.Bool("change-check", false, "also ask to read the sheet's Drive version (the drive.metadata.readonly scope; list it on the client's consent screen first): an idle refresh then costs a few hundred bytes instead of a full read")
	g.register(fs, gConfig)
	login.RunE = func(cmd *cobra.Command, _ []string) error {
		var scopes []string
		if *changeCheck {
			scopes = append(slices.Clone(googleauth.LoginScopes), googleauth.ChangeCheckScope)
		}
		return authLogin(cmd.Context(), g, e, *oauthClient, *port, *noBrowser, *timeout, scopes)
	}
	status := &cobra.Command{
		Use:     "status",
		Short:   "Who is signed in, scopes, expiry, and which credentials triage uses",
		Long:    "Show who is signed in, the token's scopes and expiry, and which credentials triage uses (flags and the environment come before the saved login).",
		Example: "  triage auth status",
		Args:    noArgs,
		RunE:    func(*cobra.Command, []string) error { return authStatus(g, e) },
	}
	g.register(status.Flags(), gConfig|gEndpoint|gCredentials)
	logout := &cobra.Command{
		Use:     "logout",
		Short:   "Revoke the saved login and delete it",
		Long:    "Revoke the saved login at Google and delete it from this machine.",
		Example: "  triage auth logout",
		Args:    noArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return authLogout(cmd.Context(), e) },
	}
	cmd.AddCommand(login, status, logout)
	return cmd
}

func authLogin(ctx context.Context, g *globals, e *env, clientFile string, port int, noBrowser bool, timeout time.Duration, scopes []string) error {
	if port < 0 || port > 65535 {
		return usageErr("auth login: --port %d is not a TCP port (use 1024-65535, or leave it out for a free one)", port)
	}
	if timeout <= 0 {
		return usageErr("auth login: --timeout must be positive")
	}
	if clientFile == "" {
		s, err := resolve(g, e)
		if err != nil {
			return err
		}
		if s.cfg.OAuthClient == "" {
			return usageErr("no OAuth client for `triage auth login`: %s (config file: %s).\nOr skip the login: use a service-account key (--credentials) or Application Default Credentials (gcloud auth application-default login)",
				googleauth.ConsoleHelp, first(s.cfg.Path(), e.vars().defaultConfigPath))
		}
		clientFile = expandHome(s.cfg.OAuthClient, e)
		if !filepath.IsAbs(clientFile) && s.cfg.Path() != "" {
			clientFile = filepath.Join(filepath.Dir(s.cfg.Path()), clientFile)
		}
	} else {
		clientFile = expandHome(clientFile, e)
	}
	client, err := googleauth.ReadOAuthClient(clientFile)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	cache := tokenCachePath(e)
	if cache == "" {
		return usageErr("auth login: can't tell where to save the login: set XDG_STATE_HOME or HOME")
	}
	flow, err := googleauth.StartLogin(googleauth.LoginOptions{
		Client:    client,
		Scopes:    scopes,
		CacheFile: cache,
		Port:      port,
		Paste:     e.stdin,
		Log:       e.stderr,
		Timeout:   timeout,
	})
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	defer flow.Close()

	p := flow.Port()
	host, herr := hostname()
	if herr != nil || host == "" {
		host = "<this host>"
	}
	w := e.stderr
	fmt.Fprintf(w, "Open this address in a browser, on this machine or any other, and allow access:\n\n    %s\n\n", flow.URL())
	if !noBrowser && canOpenBrowser(e) {
		if openBrowser(flow.URL()) == nil {
			fmt.Fprintf(w, "(opened it in your browser)\n")
		}
	}
	fmt.Fprintf(w, "Google then sends the browser to %s; triage waits for it for %v (Ctrl-C to stop).\n", flow.RedirectURI(), timeout)
	fmt.Fprintf(w, "If your browser is on another machine: ssh -L %d:127.0.0.1:%d %s\n", p, p, host)
	fmt.Fprintf(w, "  (run that there first and keep it open; then the browser reaches triage by itself)\n")
	fmt.Fprintf(w, "or paste the address your browser was sent to (it starts with %s) here:\n", flow.RedirectURI())

	rec, err := flow.Wait(ctx)
	if err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("auth login: %w", err)}
	}
	who := rec.Email
	if who == "" {
		who = "(the token endpoint did not say which account)"
	}
	fmt.Fprintf(w, "\nSigned in as %s. The login is saved in %s (readable by you only); triage renews its access token by itself.\n", who, cache)
	if slices.Contains(scopes, googleauth.ChangeCheckScope) {
		if slices.Contains(rec.Scopes, googleauth.ChangeCheckScope) {
			fmt.Fprintf(w, "The change check is on: an idle refresh asks the sheet's Drive version (a few hundred bytes) before reading it.\n")
		} else {
			fmt.Fprintf(w, "Note: the Drive metadata scope was not granted (%s), so refreshes read the whole sheet; to change that, list the scope on the client's consent screen and run `triage auth login --change-check` again.\n", googleauth.ChangeCheckScope)
		}
	}
	if note := precedenceNote(g, e); note != "" {
		fmt.Fprintf(w, "Note: %s\n", note)
	}
	return nil
}

// precedenceNote says what, if anything, comes before the saved login in the credential order.
func precedenceNote(g *globals, e *env) string {
	switch {
	case g.endpoint != "":
		return fmt.Sprintf("--endpoint %s is given, so triage talks to that endpoint without credentials and the saved login is not used.", g.endpoint)
	case e.vars().emulatorHost != "":
		return fmt.Sprintf("%s=%s is set, so triage talks to that emulator without credentials and the saved login is not used; unset it to use the login.", sheets.EmulatorHostEnv, e.vars().emulatorHost)
	case g.credentials != "":
		return fmt.Sprintf("--credentials %s is given, so it is used and the saved login is not.", g.credentials)
	case e.vars().credentials != "":
		return fmt.Sprintf("GOOGLE_APPLICATION_CREDENTIALS is set (%s), so it is used and the saved login is not; unset it to use the login.", e.vars().credentials)
	}
	return ""
}

func authStatus(g *globals, e *env) error {
	cache := tokenCachePath(e)
	if cache == "" {
		return usageErr("auth status: can't tell where the login is saved: set XDG_STATE_HOME or HOME")
	}
	w := e.stdout
	rec, err := googleauth.ReadLoginRecord(cache)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(w, "Not signed in with `triage auth login` (no saved login at %s).\n", cache)
	case err != nil:
		return &exitError{code: exitUsage, err: fmt.Errorf("auth status: the saved login is unusable: %w; run `triage auth login` again (or `triage auth logout` to delete it)", err)}
	default:
		who := rec.Email
		if who == "" {
			who = "(account address unknown)"
		}
		fmt.Fprintf(w, "Signed in as %s\n", who)
		scopes := strings.Join(rec.Scopes, " ")
		if scopes == "" {
			scopes = "(not recorded)"
		}
		fmt.Fprintf(w, "  scopes:        %s\n", scopes)
		fmt.Fprintf(w, "  access token:  %s\n", describeExpiry(rec.Token, time.Now()))
		if rec.Token.RefreshToken != "" {
			fmt.Fprintf(w, "  refresh token: saved (triage renews the access token with it)\n")
		} else {
			fmt.Fprintf(w, "  refresh token: none: run `triage auth login` again when the access token expires\n")
		}
		if !rec.LoggedInAt.IsZero() {
			fmt.Fprintf(w, "  signed in:     %s\n", rec.LoggedInAt.Local().Format(timeLayout))
			// Google ends the logins of a client in Testing after 7 days; nothing here says
			// which state the client is in, so say both.
			lapse := rec.LoggedInAt.Add(7 * 24 * time.Hour)
			fmt.Fprintf(w, "  lasts:         until revoked if the OAuth client's consent screen is published; until %s if it is in Testing (Google ends those after 7 days)\n", lapse.Local().Format(timeLayout))
		}
		fmt.Fprintf(w, "  OAuth client:  %s\n", rec.ClientID)
		fmt.Fprintf(w, "  saved in:      %s\n", cache)
		if st, err := os.Stat(cache); err == nil && st.Mode().Perm()&0o077 != 0 {
			fmt.Fprintf(w, "  warning:       the file is mode %04o, readable by others: run chmod 600 %s\n", st.Mode().Perm(), cache)
		}
	}
	fmt.Fprintf(w, "Credentials triage uses (order: --credentials / GOOGLE_APPLICATION_CREDENTIALS, saved login, Application Default Credentials):\n  %s\n", inUse(g, e, err == nil))
	return nil
}

// inUse says which credentials Connect would pick, in its order.
func inUse(g *globals, e *env, loggedIn bool) string {
	if note := precedenceNote(g, e); note != "" {
		return note
	}
	if loggedIn {
		return "the saved login (nothing comes before it)."
	}
	adc := filepath.Join(first(e.vars().cloudSDKConfig, filepath.Join(e.vars().home, ".config", "gcloud")), "application_default_credentials.json")
	if _, err := os.Stat(adc); err == nil {
		return "Application Default Credentials from " + adc + "."
	}
	return "Application Default Credentials, if this machine has any (none at " + adc + "); otherwise none: run `triage auth login`, pass --credentials key.json, or run `gcloud auth application-default login`."
}

// describeExpiry says when the access token expires, never showing the token.
func describeExpiry(t *oauth2.Token, now time.Time) string {
	if t == nil || t.Expiry.IsZero() {
		return "no expiry recorded"
	}
	d := t.Expiry.Sub(now)
	if d > 0 {
		return fmt.Sprintf("expires %s (in %s)", t.Expiry.Local().Format(timeLayout), model.Age(d))
	}
	return fmt.Sprintf("expired %s (%s ago; renewed at the next use)", t.Expiry.Local().Format(timeLayout), model.Age(-d))
}

func authLogout(ctx context.Context, e *env) error {
	cache := tokenCachePath(e)
	if cache == "" {
		return usageErr("auth logout: can't tell where the login is saved: set XDG_STATE_HOME or HOME")
	}
	res, err := googleauth.Logout(ctx, cache, nil)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(e.stderr, "Not signed in (no saved login at %s): nothing to do.\n", cache)
		return nil
	}
	if err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("auth logout: %w", err)}
	}
	who := res.Email
	if who == "" {
		who = "the saved account"
	}
	if res.RevokeErr != nil {
		return &exitError{code: exitPartial, err: fmt.Errorf("auth logout: deleted %s, but the login of %s was not revoked: %w", cache, who, res.RevokeErr)}
	}
	fmt.Fprintf(e.stderr, "Revoked the login of %s and deleted %s.\n", who, cache)
	return nil
}

// canOpenBrowser is false in an SSH session or without a display.
func canOpenBrowser(e *env) bool {
	if e.vars().ssh {
		return false
	}
	switch runtime.GOOS {
	case "darwin", "windows":
		return true
	}
	return e.vars().display
}

// expandHome expands a leading ~/ with $HOME.
func expandHome(p string, e *env) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if h := e.vars().home; h != "" {
			return filepath.Join(h, strings.TrimPrefix(p, "~"))
		}
	}
	return p
}
