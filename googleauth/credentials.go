// Package googleauth is triage's Google sign-in: where a credential is found (a
// credentials file, the login `triage auth login` saved, Application Default
// Credentials), the token cache that login writes and keeps fresh, and the login and logout
// themselves (an OAuth authorization-code flow with PKCE over a loopback redirect, and
// revocation). It knows nothing of spreadsheets: the sheets store asks Find for a credential
// and sends its requests through Credentials.Transport.
package googleauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/googleapi"
	sheetsapi "google.golang.org/api/sheets/v4"
)

// Identity kinds: how a connection authenticated.
const (
	KindEmulator       = "emulator"
	KindServiceAccount = "service-account"
	KindAuthorizedUser = "authorized-user"
	KindCachedLogin    = "cached-login"
	KindADC            = "adc"
)

// DefaultScopes are the OAuth scopes Find asks for when Options.Scopes is empty: the
// spreadsheets, read and written.
var DefaultScopes = []string{sheetsapi.SpreadsheetsScope}

// Sentinel errors. Every sign-in error wraps one of them, so callers can map them with
// errors.Is; the error text is written for the person at the terminal.
var (
	// ErrNoCredentials means Find found no way to authenticate, or a credential it was
	// pointed at can't be used (unreadable, of a type triage can't use, an unsafe token_uri).
	ErrNoCredentials = errors.New("no Google credentials found")
	// ErrRefused means the token server refused the credentials.
	ErrRefused = errors.New("credentials rejected")
	// ErrUnreachable means the token server could not be reached.
	ErrUnreachable = errors.New("token server unreachable")
)

// Error is a first token fetch that failed: the kind (ErrRefused or ErrUnreachable), the
// message for the person at the terminal and the underlying error (often an
// *oauth2.RetrieveError). errors.Is matches the kind; errors.As reaches the underlying error.
type Error struct {
	// Kind is ErrRefused or ErrUnreachable.
	Kind error
	// Msg is the message for the user.
	Msg string
	// Err is the underlying error.
	Err error
}

// Error returns the message, as a sign-in step's.
func (e *Error) Error() string { return "sign in: " + e.Msg }

// Unwrap exposes both the sentinel kind and the underlying error.
func (e *Error) Unwrap() []error { return []error{e.Kind, e.Err} }

// Options say where Find looks for a credential and what it asks for.
type Options struct {
	// CredentialsFile is a service-account key or authorized-user JSON (--credentials, or
	// GOOGLE_APPLICATION_CREDENTIALS as the caller resolved it: see CredentialsFromEnv).
	CredentialsFile string
	// CredentialsFromEnv says CredentialsFile came from GOOGLE_APPLICATION_CREDENTIALS, so
	// errors name that variable rather than --credentials.
	CredentialsFromEnv bool
	// HomeDir is the user's home, where gcloud keeps Application Default Credentials (for
	// Identity.Source); empty: not shown.
	HomeDir string
	// Getenv, when set, is where Find looks up GOOGLE_APPLICATION_CREDENTIALS and HOME for
	// the options above left empty. nil: nowhere: the caller resolved them (triage's settings
	// resolver is the one reader of the environment). The Google library's own Application
	// Default Credentials search reads its variables itself.
	Getenv func(string) string
	// TokenCacheFile is the CachedLogin written by `triage auth login`; it may not exist.
	TokenCacheFile string
	// Scopes are the OAuth scopes (default DefaultScopes).
	Scopes []string
	// ServiceAccountScopes are asked for as well where the credential may ask for any scope
	// (a service-account key). Other credentials keep what they were granted: asking a VM's
	// metadata server for a scope it lacks would fail the token itself.
	ServiceAccountScopes []string
	// HTTPClient is the client token requests go through (default: one with a 30 s timeout).
	HTTPClient *http.Client
}

// Credentials is a credential Find found and proved with a first token.
type Credentials struct {
	// TokenSource hands out the access tokens, refreshing them for the whole session (a
	// cached login's refreshes are written back to its file).
	TokenSource oauth2.TokenSource
	// Identity is who the API sees.
	Identity Identity
	// QuotaProject is the Cloud project API calls are billed to (the credentials file's
	// quota_project_id), "" when it names none.
	QuotaProject string
}

// Transport is base (nil: http.DefaultTransport) with every request carrying the
// credential's access token and, where the credential names one, its quota project.
func (c *Credentials) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	if c.QuotaProject != "" {
		base = quotaTransport{base: base, project: c.QuotaProject}
	}
	return &oauth2.Transport{Source: c.TokenSource, Base: base}
}

// Identity is who the Sheets API sees.
type Identity struct {
	// Kind is one of the Kind* constants.
	Kind string
	// Email is the account's address where known (a service account's client_email, the
	// cached login's email); it is the address the spreadsheet must be shared with.
	Email string
	// Source is the file the credentials came from, the metadata server, or the emulator URL.
	Source string
}

// String describes the identity for `triage auth status` and logs.
func (i Identity) String() string {
	who := i.Email
	if who == "" {
		who = "(address unknown)"
	}
	switch i.Kind {
	case KindEmulator:
		return "no credentials (emulator at " + i.Source + ")"
	case KindServiceAccount:
		return "service account " + who + " (key " + i.Source + ")"
	case KindAuthorizedUser:
		return "user " + who + " (authorized-user file " + i.Source + ")"
	case KindCachedLogin:
		return "user " + who + " (triage auth login, " + i.Source + ")"
	case KindADC:
		return "application default credentials " + who + " (" + i.Source + ")"
	}
	return i.Kind + " " + who
}

// CachedLogin is the file `triage auth login` writes and Find reads: the OAuth client that
// performed the login, its token (with the refresh token) and the account's address.
type CachedLogin struct {
	// ClientID and ClientSecret are the OAuth client (a desktop-app client) the login used.
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	// TokenURI is the token endpoint (default Google's).
	TokenURI string `json:"token_uri,omitempty"`
	// Token is the access token and, above all, its refresh token.
	Token *oauth2.Token `json:"token"`
	// Email is the signed-in account, shown by `triage auth status` and in 403 errors.
	Email string `json:"email,omitempty"`
}

// ReadCachedLogin reads a CachedLogin file. A missing file returns an error satisfying
// errors.Is(err, fs.ErrNotExist).
func ReadCachedLogin(path string) (*CachedLogin, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c CachedLogin
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s is not a triage login file: %v", path, err)
	}
	if c.Token == nil || (c.Token.RefreshToken == "" && c.Token.AccessToken == "") {
		return nil, fmt.Errorf("%s holds no token", path)
	}
	if c.ClientID == "" {
		return nil, fmt.Errorf("%s names no OAuth client (client_id)", path)
	}
	return &c, nil
}

// WriteCachedLogin writes a CachedLogin file readable by its owner only (0600), replacing
// any previous one atomically; the directory is created 0700 if needed.
func WriteCachedLogin(path string, c *CachedLogin) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".login-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// noCredentialsHelp is the body of the error when no credentials exist at all.
const noCredentialsHelp = `no Google credentials found. Any one of these fixes it:
  1. a service account: create a JSON key for it in the Cloud console, share the spreadsheet with its client_email (Editor), then pass --credentials key.json (or set GOOGLE_APPLICATION_CREDENTIALS);
  2. your own Google account: run ` + "`triage auth login`" + `;
  3. Application Default Credentials: run ` + "`gcloud auth application-default login --scopes=https://www.googleapis.com/auth/spreadsheets,https://www.googleapis.com/auth/cloud-platform`" + `.
To use a local emulator instead, set SHEETS_EMULATOR_HOST=host:port or pass --endpoint URL`

// keyFile is the part of a credentials JSON that Find reads itself.
type keyFile struct {
	Type           string `json:"type"`
	ClientEmail    string `json:"client_email"`
	TokenURI       string `json:"token_uri"`
	QuotaProjectID string `json:"quota_project_id"`
}

// Find looks for a credential, in order: the credentials file (or
// GOOGLE_APPLICATION_CREDENTIALS: a service-account key or an authorized-user file, whose
// token_uri is honoured); the cached `triage auth login` token if the file exists;
// Application Default Credentials. It fetches one access token before returning, so bad or
// missing credentials fail here with an error saying what to do, not at the first request:
// an *Error when the token server refused or could not be reached, and no credentials at all
// an error wrapping ErrNoCredentials that lists the three ways to get some.
func Find(ctx context.Context, a Options) (*Credentials, error) {
	getenv := a.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	scopes := a.Scopes
	if len(scopes) == 0 {
		scopes = DefaultScopes
	}
	tokenClient := a.HTTPClient
	if tokenClient == nil {
		tokenClient = &http.Client{Timeout: 30 * time.Second}
	}
	// The token source outlives Find's ctx (it refreshes for the whole session).
	tokCtx := context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, tokenClient)

	credFile, credEnv := a.CredentialsFile, a.CredentialsFromEnv
	if credFile == "" {
		credFile = getenv("GOOGLE_APPLICATION_CREDENTIALS")
		credEnv = credFile != ""
	}
	home := a.HomeDir
	if home == "" {
		home = getenv("HOME")
	}
	var (
		cred credSource
		err  error
	)
	switch {
	case credFile != "":
		cred, err = fromCredentialsFile(tokCtx, credFile, credEnv, scopes, a.ServiceAccountScopes)
	case a.TokenCacheFile != "" && fileExists(a.TokenCacheFile):
		cred, err = fromCachedLogin(tokCtx, a.TokenCacheFile, scopes)
	default:
		cred, err = fromDefaultCredentials(tokCtx, home, scopes)
	}
	if err != nil {
		return nil, err
	}
	if cred.tokenURI == "" && !cred.metadata {
		cred.tokenURI = google.Endpoint.TokenURL
	}

	ts := oauth2.ReuseTokenSource(nil, cred.ts)
	if _, err := fetchToken(ctx, ts); err != nil {
		return nil, tokenError(err, cred.id, cred.tokenURI, cred.metadata)
	}
	return &Credentials{TokenSource: ts, Identity: cred.id, QuotaProject: cred.quota}, nil
}

// credSource is what one way of finding credentials yields. The three ways share it so that
// Find fetches the first token, and explains a failure, the same way whichever was used.
type credSource struct {
	ts       oauth2.TokenSource
	id       Identity
	tokenURI string
	quota    string
	metadata bool // ADC from the GCE metadata server: no file at all
}

// fromCredentialsFile reads an explicit credentials file (--credentials or
// GOOGLE_APPLICATION_CREDENTIALS). It parses the file itself before the Google library does,
// so that the operator learns which of the two named the file, a type triage can't use is
// refused by name, and the token_uri is vetted before any secret is sent to it.
func fromCredentialsFile(tokCtx context.Context, credFile string, credEnv bool, scopes, extra []string) (credSource, error) {
	b, err := os.ReadFile(credFile)
	if err != nil {
		via := "--credentials"
		if credEnv {
			via = "GOOGLE_APPLICATION_CREDENTIALS"
		}
		return credSource{}, fmt.Errorf("%w: can't read the credentials file %s (from %s): %v", ErrNoCredentials, credFile, via, err)
	}
	var kf keyFile
	if err := json.Unmarshal(b, &kf); err != nil {
		return credSource{}, fmt.Errorf("%w: %s is not a Google credentials JSON file: %v", ErrNoCredentials, credFile, err)
	}
	// Checked before the library is handed the file: it would send the signed
	// assertion (or the refresh token and client secret) to any token_uri, in clear.
	if err := checkTokenURI(credFile, "credentials file", kf.TokenURI); err != nil {
		return credSource{}, err
	}
	var (
		ctype google.CredentialsType
		id    Identity
	)
	switch kf.Type {
	case "service_account":
		ctype, id = google.ServiceAccount, Identity{Kind: KindServiceAccount, Email: kf.ClientEmail, Source: credFile}
	case "authorized_user":
		ctype, id = google.AuthorizedUser, Identity{Kind: KindAuthorizedUser, Source: credFile}
	default:
		return credSource{}, fmt.Errorf("%w: %s has credentials of type %q; triage takes a service-account key (\"service_account\") or an authorized-user file (\"authorized_user\")", ErrNoCredentials, credFile, kf.Type)
	}
	if ctype == google.ServiceAccount && len(extra) > 0 {
		scopes = append(slices.Clone(scopes), extra...)
	}
	creds, err := google.CredentialsFromJSONWithType(tokCtx, b, ctype, scopes...)
	if err != nil {
		return credSource{}, fmt.Errorf("%w: %s: %v", ErrNoCredentials, credFile, err)
	}
	return credSource{ts: creds.TokenSource, id: id, tokenURI: kf.TokenURI, quota: kf.QuotaProjectID}, nil
}

// fromCachedLogin uses the token `triage auth login` saved. Its token source writes every
// refresh back to the file (SavingTokenSource), so the next run need not refresh again; a
// saved login that can't be used is an error naming `triage auth login`, the one fix for it.
func fromCachedLogin(tokCtx context.Context, path string, scopes []string) (credSource, error) {
	c, err := ReadCachedLogin(path)
	if err != nil {
		return credSource{}, fmt.Errorf("%w: the saved login is unusable (%v): run `triage auth login` again", ErrNoCredentials, err)
	}
	tokenURI := c.TokenURI
	if tokenURI == "" {
		tokenURI = google.Endpoint.TokenURL
	}
	if err := checkTokenURI(path, "saved login", tokenURI); err != nil {
		return credSource{}, err
	}
	cfg := &oauth2.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret, Scopes: scopes,
		Endpoint: oauth2.Endpoint{AuthURL: google.Endpoint.AuthURL, TokenURL: tokenURI, AuthStyle: oauth2.AuthStyleInParams}}
	return credSource{
		ts:       SavingTokenSource(path, c.Token, cfg.TokenSource(tokCtx, c.Token)),
		id:       Identity{Kind: KindCachedLogin, Email: c.Email, Source: path},
		tokenURI: tokenURI,
	}, nil
}

// fromDefaultCredentials is the last resort, Application Default Credentials. When the
// library found a file (gcloud's), its token_uri gets the same vetting as an explicit
// credentials file's; when it found only the GCE metadata server, metadata is set, because
// that server's refusal means "no credentials", not "bad credentials".
func fromDefaultCredentials(tokCtx context.Context, home string, scopes []string) (credSource, error) {
	creds, err := google.FindDefaultCredentials(tokCtx, scopes...)
	if err != nil {
		return credSource{}, noCredentials(fmt.Sprintf("no --credentials, no GOOGLE_APPLICATION_CREDENTIALS, no saved login, and Application Default Credentials said: %v", err))
	}
	cs := credSource{ts: creds.TokenSource, id: Identity{Kind: KindADC, Source: "GCE metadata server"}}
	if len(creds.JSON) == 0 {
		cs.metadata = true
		return cs, nil
	}
	var kf keyFile
	_ = json.Unmarshal(creds.JSON, &kf)
	cs.id.Email, cs.tokenURI, cs.quota = kf.ClientEmail, kf.TokenURI, kf.QuotaProjectID
	cs.id.Source = adcWellKnownFile(home)
	if err := checkTokenURI(cs.id.Source, "Application Default Credentials file", cs.tokenURI); err != nil {
		return credSource{}, err
	}
	return cs, nil
}

// checkTokenURI applies the OAuth client file's rule (checkEndpointURL) to a credentials
// file's token_uri: https anywhere, plain http only to a loopback host (a local test server).
// Over plain http to another host, the signed assertion or the refresh token and client
// secret would cross the network in clear, to whoever answers. Empty means Google's default.
func checkTokenURI(path, what, tokenURI string) error {
	if tokenURI == "" {
		return nil
	}
	if err := checkEndpointURL(tokenURI); err != nil {
		return fmt.Errorf("%w: the %s %s has token_uri %q: %v; fix token_uri in the file (Google's is %s) or create a new key",
			ErrNoCredentials, what, path, tokenURI, err, google.Endpoint.TokenURL)
	}
	return nil
}

// noCredentials is the error listing the three ways to get credentials; detail says what
// Application Default Credentials found instead.
func noCredentials(detail string) error {
	return fmt.Errorf("%w. %s\n(checked: %s)", ErrNoCredentials, strings.TrimPrefix(noCredentialsHelp, "no Google credentials found. "), detail)
}

// tokenError explains a failed first token fetch.
func tokenError(err error, id Identity, tokenURI string, metadata bool) error {
	if errors.Is(err, context.Canceled) || (errors.Is(err, context.DeadlineExceeded) && !isNetworkError(err)) {
		return fmt.Errorf("getting an access token: %w", err)
	}
	if metadata {
		// FindDefaultCredentials thought this is a Google Cloud VM, but its metadata server
		// has no token for us: as good as no credentials.
		return noCredentials(fmt.Sprintf("no --credentials, no GOOGLE_APPLICATION_CREDENTIALS, no saved login, no gcloud login, and the GCE metadata server gave no token: %v", err))
	}
	var rerr *oauth2.RetrieveError
	switch {
	case errors.As(err, &rerr):
		hint := "check the file, or create a new key"
		if id.Kind == KindCachedLogin || id.Kind == KindAuthorizedUser {
			hint = "the login may have expired or been revoked: run `triage auth login` again"
			if advice := ExpiredLogin(rerr, loginMadeAt(id)); advice != "" && id.Kind == KindCachedLogin {
				return &Error{Kind: ErrRefused, Err: err, Msg: fmt.Sprintf("the token server at %s refused the saved login of %s. %s", tokenURI, id, advice)}
			}
		}
		return &Error{Kind: ErrRefused, Err: err,
			Msg: fmt.Sprintf("the token server at %s refused the credentials of %s (%s): %s", tokenURI, id, TokenErrorText(rerr), hint)}
	case isNetworkError(err):
		return &Error{Kind: ErrUnreachable, Err: err,
			Msg: fmt.Sprintf("can't reach the token server at %s: %v; check the network / proxy (HTTPS_PROXY)", tokenURI, err)}
	}
	return &Error{Kind: ErrRefused, Err: err,
		Msg: fmt.Sprintf("couldn't get an access token for %s: %v", id, err)}
}

// loginTestingLife is how long Google keeps a refresh token of an OAuth client whose consent
// screen is in Testing (the usual state of a Desktop client made for `triage auth login`).
const loginTestingLife = 7 * 24 * time.Hour

// ExpiredLogin is what to tell a person whose login Google refused as invalid_grant ("Token
// has been expired or revoked."), "" for any other refusal: most often a client in Testing,
// whose logins Google ends after 7 days, and the two ways to stop it. madeAt, when known, is
// when the login was made.
func ExpiredLogin(r *oauth2.RetrieveError, madeAt time.Time) string {
	if r == nil || r.ErrorCode != "invalid_grant" {
		return ""
	}
	when := ""
	if !madeAt.IsZero() {
		when = fmt.Sprintf(" This one was made %s", madeAt.Local().Format("2006-01-02 15:04"))
		if time.Since(madeAt) >= loginTestingLife {
			when += ", more than 7 days ago."
		} else {
			when += "; it may also have been revoked (a password change, the account's security page, `triage auth logout`)."
		}
	}
	return fmt.Sprintf("Google ended it (%s). A login through an OAuth client whose consent screen is in Testing lasts 7 days.%s "+
		"Run `triage auth login` again now; to stop it lapsing every week, publish the client's consent screen "+
		"(Google Cloud console, Google Auth Platform, Audience: Publish app), or use a service account (--credentials key.json, the sheet shared with its address)",
		TokenErrorText(r), when)
}

// loginMadeAt is when the saved login behind id was made (zero when unknown).
func loginMadeAt(id Identity) time.Time {
	if id.Kind != KindCachedLogin || id.Source == "" {
		return time.Time{}
	}
	rec, err := ReadLoginRecord(id.Source)
	if err != nil {
		return time.Time{}
	}
	return rec.LoggedInAt
}

// fetchToken gets a token from ts, giving up when ctx is done.
func fetchToken(ctx context.Context, ts oauth2.TokenSource) (*oauth2.Token, error) {
	type result struct {
		tok *oauth2.Token
		err error
	}
	ch := make(chan result, 1)
	go func() {
		t, err := ts.Token()
		ch <- result{t, err}
	}()
	select {
	case r := <-ch:
		return r.tok, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// quotaTransport bills API calls to the credentials' quota project (gcloud user credentials
// need it: without one the Sheets API answers 403 "API has not been used in project ...").
type quotaTransport struct {
	base    http.RoundTripper
	project string
}

// RoundTrip adds the quota-project header to a copy of the request.
func (q quotaTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r2 := r.Clone(r.Context())
	r2.Header.Set("X-Goog-User-Project", q.project)
	return q.base.RoundTrip(r2)
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// adcWellKnownFile is where gcloud writes Application Default Credentials (as the oauth2
// library looks for them), under home ("" when home is unknown).
func adcWellKnownFile(home string) string {
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".config", "gcloud", "application_default_credentials.json")
}

// TokenErrorText is a token server's refusal as a person reads it: the HTTP status, the
// OAuth error code and its description, else the answer's body.
func TokenErrorText(r *oauth2.RetrieveError) string {
	parts := []string{}
	if r.Response != nil {
		parts = append(parts, r.Response.Status)
	}
	if r.ErrorCode != "" {
		parts = append(parts, r.ErrorCode)
	}
	if r.ErrorDescription != "" {
		parts = append(parts, r.ErrorDescription)
	}
	if len(parts) == 0 {
		return strings.TrimSpace(string(r.Body))
	}
	return strings.Join(parts, ": ")
}

// isNetworkError reports whether err is a transport failure (no usable HTTP answer), as the
// sheets store judges one: a token fetch that failed so was never refused.
func isNetworkError(err error) bool {
	if err == nil {
		return false
	}
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		return false
	}
	var rerr *oauth2.RetrieveError
	if errors.As(err, &rerr) {
		return false
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNABORTED) {
		return true
	}
	var nerr net.Error
	if errors.As(err, &nerr) {
		return true
	}
	var uerr *url.Error
	return errors.As(err, &uerr)
}
