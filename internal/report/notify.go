package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
)

// Alert is the one JSON message posted when a run halts or leaves rows not done. Text is
// what Slack's and Teams' incoming webhooks show; the other fields are for a relay or a
// script. It holds counts, names and the halt's reason only: no payload, no header, no
// secret, and every text from the sheet or a destination is sanitised and capped.
type Alert struct {
	Text        string         `json:"text"`
	Tab         string         `json:"tab"`
	Spreadsheet string         `json:"spreadsheet"`
	Store       string         `json:"store,omitempty"` // the database the run wrote to (its password redacted); "" on the sheet
	Halted      bool           `json:"halted"`
	Cause       string         `json:"cause,omitempty"`
	HaltSource  string         `json:"halt_source,omitempty"`
	HaltDetail  string         `json:"halt_detail,omitempty"`
	Cancelled   bool           `json:"cancelled"`
	Counts      map[string]int `json:"counts"`
	Selected    int            `json:"selected"`
	Delivered   int            `json:"delivered"`
	NotDone     int            `json:"not_done"`
	ExitCode    int            `json:"exit_code"`
	Started     string         `json:"started"`
	Ended       string         `json:"ended"`
	Report      string         `json:"report,omitempty"`
}

// capAlert bounds each text in an alert: a chat line, not a report.
const capAlert = 200

// NewAlert is the alert for a run, and whether the run calls for one: a run that halted or
// left rows not done (a non-zero exit code) does; a clean run sends nothing. reportPath, when
// set, is where the run's report was written.
func NewAlert(r Run, reportPath string) (Alert, bool) {
	if r.ExitCode == 0 && r.Summary.Halted == nil {
		return Alert{}, false
	}
	a := Alert{
		Tab: r.text(r.Tab, capName), Spreadsheet: r.text(r.SpreadsheetID, capName), Store: r.text(r.Store, capAlert),
		Cancelled: r.Summary.Cancelled, Counts: map[string]int{},
		Selected: r.Selected, Delivered: r.Delivered(), NotDone: r.NotDone(), ExitCode: r.ExitCode,
		Report: r.text(reportPath, capAlert),
	}
	if !r.Started.IsZero() {
		a.Started = r.Started.Format(time.RFC3339)
	}
	if !r.Ended.IsZero() {
		a.Ended = r.Ended.Format(time.RFC3339)
	}
	var bad []string
	for _, c := range r.Counts() {
		if c.N > 0 {
			a.Counts[c.Label] = c.N
			if c.Bad {
				bad = append(bad, fmt.Sprintf("%d %s", c.N, c.Label))
			}
		}
	}
	var t strings.Builder
	fmt.Fprintf(&t, "triage replay on %s", chat(a.Tab))
	if a.Store != "" {
		fmt.Fprintf(&t, " at %s", chat(a.Store))
	}
	switch h := r.Summary.Halted; {
	case h != nil:
		a.Halted = true
		a.Cause, a.HaltSource, a.HaltDetail = r.text(h.Cause, capName), r.text(h.Source, capName), r.text(h.Detail, capAlert)
		fmt.Fprintf(&t, " halted: %s, source %s: %s", chat(a.Cause), chat(a.HaltSource), chat(a.HaltDetail))
	case r.Summary.Cancelled:
		t.WriteString(" was interrupted")
	case a.NotDone > 0:
		fmt.Fprintf(&t, ": %s not done", words.Count(a.NotDone, "row", "rows"))
	default:
		// Exit 1 with every row done: outcomes the sheet does not show.
		fmt.Fprintf(&t, ": %s", words.Count(len(r.Summary.WriteConflicts)+len(r.Summary.WriteErrors), "write-back problem", "write-back problems"))
	}
	fmt.Fprintf(&t, " · %d delivered, %d not done", a.Delivered, a.NotDone)
	if len(bad) > 0 {
		fmt.Fprintf(&t, " (%s)", strings.Join(bad, ", "))
	}
	if a.Report != "" {
		fmt.Fprintf(&t, " · report: %s", chat(a.Report))
	}
	a.Text = t.String()
	return a, true
}

// chat escapes text for a chat message: Slack reads <...> as a link or a mention and & as an
// entity (its docs name exactly these three), and Teams renders the same entities.
func chat(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// Post sends the alert: one POST of JSON to rawURL, within timeout, following no redirect
// (as replays don't). Its errors name the URL's host only, never the URL: a webhook's path
// holds its token, and errors end up in cron mail.
func Post(ctx context.Context, rawURL string, a Alert, timeout time.Duration) error {
	host := "(unreadable)"
	if u, err := url.Parse(rawURL); err == nil && u.Host != "" {
		host = model.SanitizeLine(u.Host)
	}
	body, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("notify: encode the alert: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("notify: the URL (host %s) is not a URL to post to", host)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "triage-replay-notify")
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its message quotes the URL
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("notify: no answer from %s within %s: the alert was not delivered; check the webhook", host, timeout)
		}
		return fmt.Errorf("notify: post to %s: %s: the alert was not delivered; check the webhook", host, model.SanitizeLine(err.Error()))
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 {
		what := ""
		if s := strings.TrimSpace(string(answer)); s != "" {
			what = ": " + capText(model.SanitizeLine(s), capAlert)
		}
		if resp.StatusCode/100 == 3 {
			what += " (redirects are not followed)"
		}
		return fmt.Errorf("notify: %s answered %d%s: the alert was not delivered; check the webhook", host, resp.StatusCode, what)
	}
	return nil
}
