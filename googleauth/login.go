package googleauth

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	drive "google.golang.org/api/drive/v3"

	"github.com/triage-dev/triage/model"
	"golang.org/x/oauth2/google"
)

// DefaultRevokeURI is Google's token revocation endpoint, used by Logout when the OAuth
// client file names none.
const DefaultRevokeURI = "https://oauth2.googleapis.com/revoke"

// DefaultLoginTimeout is how long a LoginFlow waits for the browser (or a pasted address)
// when LoginOptions.Timeout is zero.
const DefaultLoginTimeout = 5 * time.Minute

// LoginScopes are the scopes `triage auth login` asks for: DefaultScopes plus `openid email`,
// which make the token endpoint return an id_token naming the account.
var LoginScopes = append(slices.Clone(DefaultScopes), "openid", "email")

// ChangeCheckScope is the scope the change check needs (Drive's files.get version, Store.Changed):
// the narrowest Drive scope. `triage auth login --change-check` asks for it too; a user's own
// OAuth client must list it on its consent screen first.
const ChangeCheckScope = drive.DriveMetadataReadonlyScope

// ConsoleHelp says how to get an OAuth client file; it ends the errors about a missing or
// unusable one.
const ConsoleHelp = `create one in the Google Cloud console: APIs & Services → Credentials → Create credentials → OAuth client ID → Application type "Desktop app", download its JSON (client_secret_….json), enable the Google Sheets API for that project, then set oauth_client = "/path/to/client_secret.json" in the config file or pass --oauth-client FILE`

// OAuthClient is an OAuth client as Google's Cloud console downloads it (client_secret.json).
type OAuthClient struct {
	// ClientID and ClientSecret identify the client. A Desktop client's secret is not
	// confidential (Google says so), but triage never prints it either.
	ClientID, ClientSecret string
	// AuthURI is the authorization endpoint (the file's auth_uri; default Google's).
	AuthURI string
	// TokenURI is the token endpoint (the file's token_uri; default Google's).
	TokenURI string
	// RevokeURI is the revocation endpoint (the file's revoke_uri; default DefaultRevokeURI).
	RevokeURI string
	// Type is "installed" (a Desktop app client) or "web" (a Web application client).
	Type string
	// RedirectURIs are the redirect URIs registered for the client (only a Web client's
	// matter: Google accepts any loopback port for a Desktop client).
	RedirectURIs []string
	// Path is the file the client was read from.
	Path string
}

// clientSection is the part of client_secret.json under "installed" or "web".
type clientSection struct {
	ClientID     string   `json:"client_id"`
	ClientSecret string   `json:"client_secret"`
	AuthURI      string   `json:"auth_uri"`
	TokenURI     string   `json:"token_uri"`
	RevokeURI    string   `json:"revoke_uri"`
	RedirectURIs []string `json:"redirect_uris"`
}

// ReadOAuthClient reads a client_secret.json downloaded from the Cloud console: a Desktop
// app client (`{"installed":{...}}`) or, less usefully, a Web application client
// (`{"web":{...}}`). Its auth_uri and token_uri are honoured (https only, except on a
// loopback host). Anything else (a service-account key, an authorized-user file, junk) is
// an error saying what the file is and what to use instead.
func ReadOAuthClient(path string) (*OAuthClient, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the OAuth client file: %w; %s", err, ConsoleHelp)
	}
	var f struct {
		Installed *clientSection `json:"installed"`
		Web       *clientSection `json:"web"`
		Type      string         `json:"type"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("not a Desktop OAuth client file: %s is not JSON (%v); %s", path, err, ConsoleHelp)
	}
	c := &OAuthClient{Path: path}
	var s *clientSection
	switch {
	case f.Installed != nil:
		s, c.Type = f.Installed, "installed"
	case f.Web != nil:
		s, c.Type = f.Web, "web"
	case f.Type == "service_account":
		return nil, fmt.Errorf("not a Desktop OAuth client file: %s is a service-account key; pass it with --credentials (or GOOGLE_APPLICATION_CREDENTIALS) instead of logging in, or, to log in as yourself, %s", path, ConsoleHelp)
	case f.Type == "authorized_user":
		return nil, fmt.Errorf("not a Desktop OAuth client file: %s already holds a user's login (authorized_user); pass it with --credentials instead, or, for triage's own login, %s", path, ConsoleHelp)
	default:
		return nil, fmt.Errorf("not a Desktop OAuth client file: %s has no \"installed\" section; %s", path, ConsoleHelp)
	}
	c.ClientID, c.ClientSecret = strings.TrimSpace(s.ClientID), strings.TrimSpace(s.ClientSecret)
	c.AuthURI, c.TokenURI, c.RevokeURI = strings.TrimSpace(s.AuthURI), strings.TrimSpace(s.TokenURI), strings.TrimSpace(s.RevokeURI)
	c.RedirectURIs = s.RedirectURIs
	if c.ClientID == "" {
		return nil, fmt.Errorf("not a Desktop OAuth client file: %s has no client_id; download the client's JSON again from the Cloud console (APIs & Services → Credentials)", path)
	}
	if c.AuthURI == "" {
		c.AuthURI = google.Endpoint.AuthURL
	}
	if c.TokenURI == "" {
		c.TokenURI = google.Endpoint.TokenURL
	}
	if c.RevokeURI == "" {
		c.RevokeURI = DefaultRevokeURI
	}
	for _, u := range []struct{ name, v string }{{"auth_uri", c.AuthURI}, {"token_uri", c.TokenURI}, {"revoke_uri", c.RevokeURI}} {
		if err := checkEndpointURL(u.v); err != nil {
			return nil, fmt.Errorf("OAuth client file %s: %s %q: %v; fix the file or download it again", path, u.name, u.v, err)
		}
	}
	return c, nil
}

// checkEndpointURL accepts an absolute https URL, or http on a loopback host.
func checkEndpointURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return errors.New("not an absolute URL")
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopbackHost(u.Hostname()) {
			return nil
		}
		return errors.New("plain http is allowed only on 127.0.0.1, ::1 or localhost (the client secret and codes would travel in clear)")
	}
	return fmt.Errorf("scheme %q: want https", u.Scheme)
}

func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// LoginRecord is the file `triage auth login` writes: a CachedLogin (so ReadCachedLogin and
// Find read it as one) plus what `triage auth status` and `triage auth logout` need.
type LoginRecord struct {
	CachedLogin
	// Scopes are the scopes the token endpoint granted.
	Scopes []string `json:"scopes,omitempty"`
	// RevokeURI is where Logout revokes the refresh token.
	RevokeURI string `json:"revoke_uri,omitempty"`
	// LoggedInAt is when the login happened.
	LoggedInAt time.Time `json:"logged_in_at,omitzero"`
}

// ReadLoginRecord reads the file `triage auth login` wrote, with ReadCachedLogin's checks.
// A missing file returns an error satisfying errors.Is(err, fs.ErrNotExist).
func ReadLoginRecord(path string) (*LoginRecord, error) {
	if _, err := ReadCachedLogin(path); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r LoginRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s is not a triage login file: %v", path, err)
	}
	return &r, nil
}

// WriteLoginRecord writes the login file readable by its owner only (0600), replacing any
// previous one atomically (as WriteCachedLogin does); the directory is created 0700 if needed.
func WriteLoginRecord(path string, r *LoginRecord) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return writePrivateFile(path, append(b, '\n'))
}

// writePrivateFile replaces path atomically with a 0600 file holding b.
func writePrivateFile(path string, b []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create the directory for %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, ".login-*.json")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// SavingTokenSource wraps the token source of a cached login (as Find builds it from
// the file at path, whose token was start) so that every new access token it hands out,
// i.e. every refresh, is written back to the file, keeping the file's other fields. The
// next triage run then starts with a fresh token instead of refreshing again. The file is
// left alone if it has gone (a logout meanwhile) or now holds another login; a failed
// write doesn't fail the request (the next run just refreshes once more).
func SavingTokenSource(path string, start *oauth2.Token, src oauth2.TokenSource) oauth2.TokenSource {
	s := &savingTokenSource{path: path, src: src}
	if start != nil {
		s.access, s.refresh = start.AccessToken, start.RefreshToken
	}
	return s
}

type savingTokenSource struct {
	path string
	src  oauth2.TokenSource

	mu      sync.Mutex
	access  string // the access token last seen (saved or read)
	refresh string // the refresh token the file is expected to hold
}

// Token returns src's token, saving it first if it is new.
func (s *savingTokenSource) Token() (*oauth2.Token, error) {
	t, err := s.src.Token()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.AccessToken != s.access {
		s.access = t.AccessToken
		if s.save(t) == nil {
			s.refresh = t.RefreshToken
		}
	}
	return t, nil
}

// save writes t into the login file if the file still holds the login t was refreshed from.
func (s *savingTokenSource) save(t *oauth2.Token) error {
	r, err := ReadLoginRecord(s.path)
	if err != nil {
		return err
	}
	if r.Token.RefreshToken != s.refresh {
		return errors.New("the login file holds another login now")
	}
	nt := *t
	if nt.RefreshToken == "" {
		nt.RefreshToken = s.refresh
	}
	r.Token = &nt
	if sc := scopesOf(t); len(sc) > 0 {
		r.Scopes = sc
	}
	return WriteLoginRecord(s.path, r)
}

// LoginOptions configure a LoginFlow.
type LoginOptions struct {
	// Client is the OAuth client (from ReadOAuthClient). Required.
	Client *OAuthClient
	// CacheFile is where the login is saved (WriteLoginRecord). Required.
	CacheFile string
	// Port is the loopback port to listen on; 0 picks a free one (or, for a Web client, the
	// port of its registered http://127.0.0.1:PORT/ redirect URI).
	Port int
	// Scopes default to LoginScopes.
	Scopes []string
	// Paste, if set, is read line by line for the address the browser was sent to (or just
	// its query part), as an alternative to the browser reaching the listener.
	Paste io.Reader
	// Log receives hints about pasted lines that are not a redirect address (may be nil).
	Log io.Writer
	// HTTPClient is used for the token request (default: a client with a 30s timeout).
	HTTPClient *http.Client
	// Timeout bounds Wait (default DefaultLoginTimeout).
	Timeout time.Duration
}

// LoginFlow is one OAuth authorization-code login with PKCE over a loopback redirect
// (RFC 8252), usable from a machine without a browser: the user opens URL() anywhere, and
// either the browser reaches the listener (same machine, or through `ssh -L`), or the user
// pastes the address the browser was sent to. Start it with StartLogin, show URL(), call
// Wait, then Close.
type LoginFlow struct {
	opts     LoginOptions
	cfg      *oauth2.Config
	state    string
	verifier string
	authURL  string
	port     int
	ln       net.Listener
	srv      *http.Server
	answers  chan answer
	done     chan struct{}
	once     sync.Once
}

// answer is a redirect's query, from the browser or pasted, with where to report the outcome
// (nil for a pasted one).
type answer struct {
	q     url.Values
	reply chan error
}

// StartLogin listens on 127.0.0.1 (opts.Port, or a free port) and prepares the authorization
// URL: offline access with prompt=consent (so a refresh token comes back), a random state
// and a PKCE S256 challenge. Nothing is sent until the user opens the URL.
func StartLogin(opts LoginOptions) (*LoginFlow, error) {
	c := opts.Client
	if c == nil || c.ClientID == "" {
		return nil, fmt.Errorf("no OAuth client: %s", ConsoleHelp)
	}
	if opts.CacheFile == "" {
		return nil, errors.New("nowhere to save the login: set XDG_STATE_HOME or HOME")
	}
	if len(opts.Scopes) == 0 {
		opts.Scopes = LoginScopes
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultLoginTimeout
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	port := opts.Port
	if port == 0 && c.Type == "web" {
		p, err := webClientPort(c)
		if err != nil {
			return nil, err
		}
		port = p
	}
	if port < 0 || port > 65535 {
		return nil, fmt.Errorf("port %d is not a TCP port: pass --port between 1024 and 65535, or leave it out to pick a free one", port)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		if port != 0 {
			return nil, fmt.Errorf("can't listen on 127.0.0.1:%d for the browser's redirect (%v): pick another --port, or leave it out to use a free one", port, err)
		}
		return nil, fmt.Errorf("can't listen on 127.0.0.1 for the browser's redirect: %w", err)
	}
	f := &LoginFlow{
		opts:     opts,
		state:    randomState(),
		verifier: oauth2.GenerateVerifier(),
		port:     ln.Addr().(*net.TCPAddr).Port,
		ln:       ln,
		answers:  make(chan answer),
		done:     make(chan struct{}),
	}
	f.cfg = &oauth2.Config{
		ClientID:     c.ClientID,
		ClientSecret: c.ClientSecret,
		Endpoint:     oauth2.Endpoint{AuthURL: c.AuthURI, TokenURL: c.TokenURI, AuthStyle: oauth2.AuthStyleInParams},
		RedirectURL:  f.RedirectURI(),
		Scopes:       opts.Scopes,
	}
	f.authURL = f.cfg.AuthCodeURL(f.state, oauth2.AccessTypeOffline,
		oauth2.SetAuthURLParam("prompt", "consent"), oauth2.S256ChallengeOption(f.verifier))
	f.srv = &http.Server{Handler: http.HandlerFunc(f.serveRedirect), ReadHeaderTimeout: 10 * time.Second}
	go f.srv.Serve(ln)
	if opts.Paste != nil {
		go f.readPasted(opts.Paste)
	}
	return f, nil
}

// webClientPort is the port of a Web client's registered loopback redirect URI: Google
// accepts only registered redirect URIs for Web clients.
func webClientPort(c *OAuthClient) (int, error) {
	for _, r := range c.RedirectURIs {
		u, err := url.Parse(r)
		if err != nil || u.Scheme != "http" || u.Hostname() != "127.0.0.1" || (u.Path != "" && u.Path != "/") {
			continue
		}
		if p, err := strconv.Atoi(u.Port()); err == nil && p > 0 {
			return p, nil
		}
	}
	return 0, fmt.Errorf("%s is a Web application OAuth client without a registered http://127.0.0.1:PORT/ redirect URI, so Google would refuse the login (redirect_uri_mismatch); better, %s", c.Path, ConsoleHelp)
}

func randomState() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// URL is the address the user opens in a browser, on any machine.
func (f *LoginFlow) URL() string { return f.authURL }

// Port is the loopback port the flow listens on (the one to forward with `ssh -L`).
func (f *LoginFlow) Port() int { return f.port }

// RedirectURI is where the browser is sent after consent: http://127.0.0.1:PORT/.
func (f *LoginFlow) RedirectURI() string {
	return "http://127.0.0.1:" + strconv.Itoa(f.port) + "/"
}

// Close stops the listener. It is safe to call more than once, and while Wait runs (Wait
// then fails).
func (f *LoginFlow) Close() error {
	f.once.Do(func() { close(f.done) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return f.srv.Shutdown(ctx)
}

// serveRedirect answers the browser's redirect to the loopback address.
func (f *LoginFlow) serveRedirect(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	if q.Get("code") == "" && q.Get("error") == "" {
		page(w, http.StatusBadRequest, "triage: this address is where Google sends your browser after you sign in; open the sign-in address triage printed instead.")
		return
	}
	a := answer{q: q, reply: make(chan error, 1)}
	select {
	case f.answers <- a:
	case <-f.done:
		page(w, http.StatusGone, "triage: this sign-in is over; run `triage auth login` again.")
		return
	case <-r.Context().Done():
		return
	}
	var err error
	select {
	case err = <-a.reply:
	case <-r.Context().Done():
		return
	}
	if err != nil {
		page(w, http.StatusBadRequest, "triage: sign-in failed: "+err.Error())
		return
	}
	page(w, http.StatusOK, "triage: signed in, you can close this tab.")
}

func page(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintf(w, "<!doctype html><html><head><meta charset=\"utf-8\"><title>triage</title></head><body><p>%s</p></body></html>\n", html.EscapeString(msg))
}

// readPasted reads pasted redirect addresses, one per line, until EOF or the flow ends.
func (f *LoginFlow) readPasted(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		q, hint := parsePasted(line)
		if hint != "" {
			f.logf("%s\n", hint)
			continue
		}
		select {
		case f.answers <- answer{q: q}:
		case <-f.done:
			return
		}
	}
}

// parsePasted reads a pasted redirect address (http://127.0.0.1:PORT/?state=..&code=..), or
// just its query; a hint says what is wrong with anything else.
func parsePasted(line string) (url.Values, string) {
	raw := line
	if strings.Contains(line, "://") {
		u, err := url.Parse(line)
		if err != nil {
			return nil, "triage: that is not an address; paste the whole address from the browser's address bar (it starts with http://127.0.0.1:)"
		}
		raw = u.RawQuery
	}
	raw = strings.TrimLeft(raw, "/?")
	q, err := url.ParseQuery(raw)
	if err != nil {
		return nil, "triage: can't read that address; paste the whole address from the browser's address bar (it starts with http://127.0.0.1:)"
	}
	if q.Get("error") != "" {
		return q, ""
	}
	if q.Get("code") == "" {
		if q.Get("client_id") != "" {
			return nil, "triage: that is the sign-in address to open; open it in a browser, sign in, then paste the address the browser ends up on (it starts with http://127.0.0.1:)"
		}
		return nil, "triage: that address has no code; paste the address the browser was sent to after you allowed access (it starts with http://127.0.0.1:)"
	}
	return q, ""
}

func (f *LoginFlow) logf(format string, a ...any) {
	if f.opts.Log != nil {
		fmt.Fprintf(f.opts.Log, format, a...)
	}
}

// Wait waits (at most opts.Timeout) for the redirect, from the browser or pasted, checks its
// state (a mismatch is refused: no code is exchanged), exchanges the code with the PKCE
// verifier, and saves the login (0600) in opts.CacheFile. The first redirect decides: a
// refused or failed one ends the flow. Call Wait once.
func (f *LoginFlow) Wait(ctx context.Context) (*LoginRecord, error) {
	ctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	// Once Wait returns, later redirects are turned away at once.
	defer f.once.Do(func() { close(f.done) })
	select {
	case a := <-f.answers:
		rec, err := f.finish(ctx, a)
		if a.reply != nil {
			a.reply <- err
		}
		return rec, err
	case <-f.done:
		return nil, errors.New("the login was stopped before the browser answered")
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("no answer from the browser within %v: run `triage auth login` again (and, if the browser is on another machine, forward the port with ssh -L or paste the address it was sent to)", f.opts.Timeout)
		}
		return nil, fmt.Errorf("login interrupted: %w", ctx.Err())
	}
}

// finish checks a redirect's answer, exchanges its code and saves the login.
func (f *LoginFlow) finish(ctx context.Context, a answer) (*LoginRecord, error) {
	// The state is checked first, error answers included: otherwise any local process or web
	// page that can reach the loopback port could end the login with a made-up error.
	if a.q.Get("state") != f.state {
		return nil, errors.New("refused: the redirect's state does not match this login (an old sign-in tab, another login, or a forged request); no code was used; run `triage auth login` again and use the address it prints")
	}
	if e := a.q.Get("error"); e != "" {
		// Text from the redirect reaches the terminal: make it inert (invariant 9).
		msg := model.SanitizeLine(e)
		if d := a.q.Get("error_description"); d != "" {
			msg += ": " + model.SanitizeLine(d)
		}
		if e == "access_denied" {
			return nil, fmt.Errorf("access was not allowed (the authorization server said %s): run `triage auth login` again and allow access to Google Sheets", msg)
		}
		return nil, fmt.Errorf("the authorization server said %s: check the OAuth client (%s) and run `triage auth login` again", msg, f.opts.Client.Path)
	}
	tokCtx := context.WithValue(ctx, oauth2.HTTPClient, f.opts.HTTPClient)
	tok, err := f.cfg.Exchange(tokCtx, a.q.Get("code"), oauth2.VerifierOption(f.verifier))
	if err != nil {
		var rerr *oauth2.RetrieveError
		if errors.As(err, &rerr) {
			return nil, fmt.Errorf("the token endpoint %s refused the code (%s): run `triage auth login` again; if it keeps failing, check that %s is the Desktop client's current JSON", f.cfg.Endpoint.TokenURL, TokenErrorText(rerr), f.opts.Client.Path)
		}
		return nil, fmt.Errorf("exchange the code at %s: %w; check the network (HTTPS_PROXY) and run `triage auth login` again", f.cfg.Endpoint.TokenURL, err)
	}
	if tok.RefreshToken == "" {
		return nil, errors.New("the token endpoint returned no refresh token, so the login would stop working within the hour: revoke triage's access at https://myaccount.google.com/permissions, then run `triage auth login` again")
	}
	granted := scopesOf(tok)
	if len(granted) > 0 {
		var missing []string
		for _, s := range f.cfg.Scopes {
			if s == "openid" || s == "email" || s == "profile" || s == ChangeCheckScope {
				// The change check's scope is optional: without it refreshes read in full.
				continue
			}
			if !slices.Contains(granted, s) {
				missing = append(missing, s)
			}
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("access to %s was not granted (on the consent screen, tick the box for Google Sheets): run `triage auth login` again", strings.Join(missing, ", "))
		}
	} else {
		granted = f.cfg.Scopes
	}
	rec := &LoginRecord{
		CachedLogin: CachedLogin{
			ClientID:     f.cfg.ClientID,
			ClientSecret: f.cfg.ClientSecret,
			TokenURI:     f.cfg.Endpoint.TokenURL,
			Token:        tok,
			Email:        idTokenEmail(tok),
		},
		Scopes:     granted,
		RevokeURI:  f.opts.Client.RevokeURI,
		LoggedInAt: time.Now().UTC().Truncate(time.Second),
	}
	if err := WriteLoginRecord(f.opts.CacheFile, rec); err != nil {
		return nil, fmt.Errorf("signed in, but could not save the login: %w; fix the directory's permissions (or set XDG_STATE_HOME) and run `triage auth login` again", err)
	}
	return rec, nil
}

// scopesOf is the token response's space-separated "scope" field.
func scopesOf(t *oauth2.Token) []string {
	s, _ := t.Extra("scope").(string)
	return strings.Fields(s)
}

// idTokenEmail is the email claim of the id_token in a token response. The token came
// straight from the token endpoint over TLS, so its signature is not checked (RFC 6749
// §10.4 / OpenID Connect Core 3.1.3.7: TLS server validation may replace it).
func idTokenEmail(t *oauth2.Token) string {
	raw, _ := t.Extra("id_token").(string)
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return ""
	}
	var claims struct {
		Email string `json:"email"`
	}
	if json.Unmarshal(b, &claims) != nil {
		return ""
	}
	return claims.Email
}

// LogoutResult says what Logout did.
type LogoutResult struct {
	// Email is the account that was signed in, where known.
	Email string
	// Revoked is true when the authorization server accepted the revocation (or said the
	// token was already invalid).
	Revoked bool
	// RevokeErr is why revocation failed; the file is deleted anyway.
	RevokeErr error
	// RevokeURI is where the revocation was sent.
	RevokeURI string
}

// Logout revokes the saved login's refresh token (at the revoke URI saved with it, default
// DefaultRevokeURI) and deletes the file, even when revocation fails (then RevokeErr says
// why). No saved login is an error satisfying errors.Is(err, fs.ErrNotExist); an
// unreadable file is deleted without revocation. The error is non-nil only when the file
// could not be deleted.
func Logout(ctx context.Context, path string, client *http.Client) (LogoutResult, error) {
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	var res LogoutResult
	rec, err := ReadLoginRecord(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return res, fmt.Errorf("not signed in (no saved login at %s): %w", path, err)
	case err != nil:
		res.RevokeErr = fmt.Errorf("the saved login is unreadable, so nothing was revoked (%v); if it was a real login, remove triage's access at https://myaccount.google.com/permissions", err)
	default:
		res.Email = rec.Email
		res.RevokeURI = rec.RevokeURI
		if res.RevokeURI == "" {
			res.RevokeURI = DefaultRevokeURI
		}
		tok := rec.Token.RefreshToken
		if tok == "" {
			tok = rec.Token.AccessToken
		}
		if err := RevokeToken(ctx, client, res.RevokeURI, tok); err != nil {
			res.RevokeErr = err
		} else {
			res.Revoked = true
		}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, fmt.Errorf("could not delete the saved login: %w; delete %s by hand", err, path)
	}
	return res, nil
}

// RevokeToken asks the authorization server at revokeURI to revoke token (RFC 7009, as
// Google's revoke endpoint takes it: a form POST). A 400 invalid_token answer means the
// token is already invalid and counts as success. The token never appears in the error.
func RevokeToken(ctx context.Context, client *http.Client, revokeURI, token string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, revokeURI, strings.NewReader(url.Values{"token": {token}}.Encode()))
	if err != nil {
		return fmt.Errorf("revoke at %s: %w", revokeURI, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("can't reach %s to revoke the login (%v); remove triage's access at https://myaccount.google.com/permissions instead", revokeURI, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 == 2 {
		return nil
	}
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	_ = json.Unmarshal(body, &e)
	if resp.StatusCode == http.StatusBadRequest && e.Error == "invalid_token" {
		return nil
	}
	what := resp.Status
	if e.Error != "" {
		what += ": " + e.Error
		if e.Description != "" {
			what += " (" + e.Description + ")"
		}
	}
	return fmt.Errorf("%s refused the revocation (%s); remove triage's access at https://myaccount.google.com/permissions instead", revokeURI, what)
}
