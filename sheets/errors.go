package sheets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"
	"time"

	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"

	"github.com/triage-dev/triage/googleauth"
	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
)

// Sentinel errors. Every error the store returns for one of these situations wraps the
// matching sentinel, so callers can map them with errors.Is (main maps them to exit code 2).
// The error text itself is written for the person at the terminal: what happened and what to
// do next.
var (
	// ErrReadOnly is returned by every write when the store was opened read-only; nothing
	// was sent (invariant 11).
	ErrReadOnly = errors.New("triage was opened with --readonly, so nothing is written (restart it without --readonly to make changes)")
	// ErrUnreachable means the Sheets API (or the token server) could not be reached.
	ErrUnreachable = errors.New("sheets API unreachable")
	// ErrNotShared means the API answered 403: the spreadsheet isn't shared with the
	// account triage uses.
	ErrNotShared = errors.New("spreadsheet not shared with this account")
	// ErrNotFound means the API answered 404: no spreadsheet has that ID.
	ErrNotFound = errors.New("spreadsheet not found")
	// ErrUnauthorized means the credentials were rejected (401, or the token server refused).
	ErrUnauthorized = errors.New("credentials rejected")
	// ErrAPIDisabled means the Google Cloud project of the credentials hasn't enabled the
	// Sheets API.
	ErrAPIDisabled = errors.New("sheets API not enabled for this project")
	// ErrRateLimited means the API still answered 429 after every retry.
	ErrRateLimited = errors.New("sheets API rate limit exceeded")
	// ErrNoCredentials means Connect found no way to authenticate: googleauth's sentinel,
	// so either name matches.
	ErrNoCredentials = googleauth.ErrNoCredentials
)

// Error is a failed Sheets API call: which operation, the friendly message, the kind
// (one of the sentinels above, or nil) and the underlying error (often a *googleapi.Error).
// errors.Is matches the kind; errors.As reaches the underlying error.
type Error struct {
	// Op is what the store was doing ("load", "apply 3 edits", "init").
	Op string
	// Code is the HTTP status, 0 for a network error.
	Code int
	// Attempts is how many times the call was sent.
	Attempts int
	// Kind is the sentinel this error matches, or nil.
	Kind error
	// Msg is the message for the user.
	Msg string
	// Err is the underlying error.
	Err error
}

// Error returns the operation and the message for the user.
func (e *Error) Error() string { return e.Op + ": " + e.Msg }

// Unwrap exposes both the sentinel kind and the underlying error.
func (e *Error) Unwrap() []error {
	if e.Kind == nil {
		return []error{e.Err}
	}
	return []error{e.Kind, e.Err}
}

// errorContext is what an error message needs to know about the store.
type errorContext struct {
	spreadsheetID string
	endpoint      string
	email         string
}

// classify turns a final (non-retried, or retries exhausted) error into the user-facing one.
func (c errorContext) classify(op string, err error, attempts int) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("%s: %w", op, err)
	}
	e := &Error{Op: op, Err: err, Attempts: attempts}
	var gerr *googleapi.Error
	var rerr *oauth2.RetrieveError
	switch {
	case errors.As(err, &rerr):
		e.Kind = ErrUnauthorized
		e.Msg = fmt.Sprintf("couldn't get an access token (%s); check --credentials, or run `triage auth login` again", googleauth.TokenErrorText(rerr))
		if advice := googleauth.ExpiredLogin(rerr, time.Time{}); advice != "" && strings.Contains(rerr.ErrorDescription, "expired or revoked") {
			e.Msg = "the saved login stopped working: " + advice
		}
		if rerr.Response != nil {
			e.Code = rerr.Response.StatusCode
		}
	case errors.As(err, &gerr):
		e.Code = gerr.Code
		msg := strings.TrimSpace(gerr.Message)
		if msg == "" {
			msg = strings.TrimSpace(gerr.Body)
		}
		switch {
		case gerr.Code == 401:
			e.Kind = ErrUnauthorized
			e.Msg = fmt.Sprintf("the Sheets API rejected the credentials (401: %s); check --credentials, or run `triage auth login` again", msg)
		case gerr.Code == 403 && apiDisabled(msg):
			e.Kind = ErrAPIDisabled
			e.Msg = fmt.Sprintf("the Google Sheets API is not enabled for the Cloud project of these credentials: enable it in the Cloud console (APIs & Services), then retry (403: %s)", msg)
		case gerr.Code == 403:
			e.Kind = ErrNotShared
			who := c.email
			if who == "" {
				who = "the account triage is using (`triage auth status` shows which)"
			}
			e.Msg = fmt.Sprintf("the spreadsheet isn't shared with %s: open it in Sheets, Share, add that address as Editor (Viewer for --readonly) (403: %s)", who, msg)
		case gerr.Code == 404:
			e.Kind = ErrNotFound
			e.Msg = fmt.Sprintf("no spreadsheet with ID %q: check --spreadsheet / TRIAGE_SPREADSHEET (the ID is the part of the URL between /d/ and /edit) (404: %s)", c.spreadsheetID, msg)
		case gerr.Code == 429 && gerr.Header.Get(budgetSpentHeader) != "":
			e.Kind = ErrRateLimited
			e.Msg = fmt.Sprintf("%s: nothing was done by this request; run it again in a minute, or give it longer ([quota] budget), or ask Google for a higher quota (429: %s)", model.SanitizeLine(gerr.Header.Get(budgetSpentHeader)), msg)
		case gerr.Code == 429:
			e.Kind = ErrRateLimited
			e.Msg = fmt.Sprintf("the Sheets API rate limit (60 requests a minute per user) was still exceeded after %s: wait a minute and try again (429: %s)", words.Count(attempts, "attempt", "attempts"), msg)
		case gerr.Code >= 500:
			e.Msg = fmt.Sprintf("the Sheets API kept failing (%d: %s) after %s: try again in a few minutes", gerr.Code, msg, words.Count(attempts, "attempt", "attempts"))
		default:
			e.Msg = fmt.Sprintf("the Sheets API refused the request (%d: %s)", gerr.Code, msg)
		}
	case isNetworkError(err):
		e.Kind = ErrUnreachable
		cause := err
		var uerr *url.Error
		if errors.As(err, &uerr) {
			cause = uerr.Err // the request URL is noise here; the endpoint is named already
		}
		e.Msg = fmt.Sprintf("can't reach the Sheets API at %s after %s: %v; check the network / proxy (HTTPS_PROXY)", c.endpoint, words.Count(attempts, "attempt", "attempts"), cause)
	default:
		e.Msg = err.Error()
	}
	return e
}

func apiDisabled(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "has not been used in project") || strings.Contains(m, "it is disabled") ||
		strings.Contains(m, "api has not been enabled") || strings.Contains(m, "service_disabled")
}

// isNetworkError reports whether err is a transport failure (no usable HTTP answer).
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

// isDialError reports whether err is a failure to connect at all: the connection was
// refused, the host or network is unreachable, or the DNS lookup failed. A dial that timed
// out is not one (a slow link may well answer the next time).
func isDialError(err error) bool {
	if err == nil {
		return false
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, syscall.EHOSTUNREACH) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial" && !op.Timeout()
}

// retryable reports whether a failed call may be sent again: 429, 5xx and network errors.
func retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		if gerr.Header.Get(budgetSpentHeader) != "" {
			return false // the pacer waited the quota budget out already
		}
		return gerr.Code == 429 || gerr.Code >= 500
	}
	var rerr *oauth2.RetrieveError
	if errors.As(err, &rerr) {
		return rerr.Response != nil && (rerr.Response.StatusCode == 429 || rerr.Response.StatusCode >= 500)
	}
	return isNetworkError(err)
}

// isParseRange reports whether err is Google's "Unable to parse range" (a missing tab).
func isParseRange(err error) bool {
	var gerr *googleapi.Error
	return errors.As(err, &gerr) && gerr.Code == 400 && strings.Contains(gerr.Message+gerr.Body, "Unable to parse range")
}
