package replay_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
)

// longLocation is a 60,000-character Location: more than a sheet cell holds.
var longLocation = "https://elsewhere.example/" + strings.Repeat("a", 60000)

func assertCapped(t *testing.T, what string, res replay.Result) {
	t.Helper()
	if n := utf8.RuneCountInString(res.Detail); n > replay.MaxDetail {
		t.Errorf("%s: detail of %d characters, cap %d", what, n, replay.MaxDetail)
	}
	for _, a := range res.Attempts {
		if n := utf8.RuneCountInString(a.Err); n > replay.MaxDetail {
			t.Errorf("%s: attempt %d's error of %d characters, cap %d", what, a.N, n, replay.MaxDetail)
		}
	}
}

// TestLongLocationIsCapped: a 301 with a 60,000-character Location gives a Result whose
// texts fit the cap, with a visible marker saying how long the Location was, and the advice
// after it intact. The same for an apps-script 302 to a place it may not go.
func TestLongLocationIsCapped(t *testing.T) {
	for _, tc := range []struct{ preset string }{{"rest"}, {"apps-script"}} {
		rcv := receiver.New()
		status := 301
		if tc.preset == "apps-script" {
			status = 302
		}
		rcv.Default = receiver.Fault{Mode: receiver.Moved, Status: status, Location: longLocation}
		srv := serve(t, rcv)
		src := &replay.Source{Name: "crm", Preset: tc.preset, URLPrefixes: []string{srv.URL}}
		res := fastClient(src).Do(context.Background(), replay.Call{Key: "k", Source: "crm", URL: srv.URL + "/hook", Body: []byte(`{}`)})
		if res.Outcome != replay.Systemic || len(res.Attempts) != 1 {
			t.Fatalf("%s: %v after %d attempts", tc.preset, res.Outcome, len(res.Attempts))
		}
		assertCapped(t, tc.preset, res)
		if !strings.Contains(res.Detail, "truncated, 60026 chars") || !strings.Contains(res.Detail, "update url") {
			t.Errorf("%s: detail %.300q… lacks the marker or the advice", tc.preset, res.Detail)
		}
	}
}

// TestLongTransportErrorIsCapped: a destination that answers with a 60,000-character status
// line gets a transport error quoting it; the Result still fits the cap.
func TestLongTransportErrorIsCapped(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				r := bufio.NewReader(conn)
				for {
					l, err := r.ReadString('\n')
					if err != nil || l == "\r\n" {
						break
					}
				}
				conn.Write([]byte("HTTP/1.1 2" + strings.Repeat("9", 60000) + " OK\r\nContent-Length: 0\r\n\r\n"))
			}()
		}
	}()
	base := "http://" + ln.Addr().String()
	src := &replay.Source{Name: "crm", URLPrefixes: []string{base + "/"}, MaxAttempts: 1}
	res := fastClient(src).Do(context.Background(), replay.Call{Key: "k", Source: "crm", URL: base + "/hook", Body: []byte(`{}`)})
	if res.Outcome != replay.Retryable || len(res.Attempts) != 1 {
		t.Fatalf("%v after %d attempts: %.300q", res.Outcome, len(res.Attempts), res.Detail)
	}
	assertCapped(t, "malformed status line", res)
	if !strings.Contains(res.Detail, "truncated") {
		t.Errorf("detail %.300q… has no truncation marker", res.Detail)
	}
}

// TestLongLocationDoesNotCostOtherRowsTheirWriteBack runs a bulk replay through the real
// store on the emulated sheet (which enforces Google's 50,000-character cell limit): a row
// is delivered, then the next one's destination answers 301 with a 60,000-character
// Location. Both outcomes land in one write-back batch; the delivered row must end
// delivered, and the moved row's error cell holds the capped text.
func TestLongLocationDoesNotCostOtherRowsTheirWriteBack(t *testing.T) {
	good := receiver.New()
	moved := receiver.New()
	moved.Default = receiver.Fault{Mode: receiver.Moved, Location: longLocation}
	mux := http.NewServeMux()
	mux.Handle("/hook", good)
	mux.Handle("/moved", moved)
	srv := serve(t, mux)
	rows := []row{
		{source: "crm", url: srv.URL + "/hook", payload: payload(0), key: "k-0", attempts: "1", status: "dead"},
		{source: "crm", url: srv.URL + "/moved", payload: payload(1), key: "k-1", attempts: "1", status: "dead"},
		{source: "crm", url: srv.URL + "/hook", payload: payload(2), key: "k-2", attempts: "1", status: "dead"},
	}
	f := newSheetFixture(t, rows)
	tab := f.load(t)
	// One row at a time, in plan order: the delivered row finishes before the 301.
	c := fastClient(&replay.Source{Name: "crm", URLPrefixes: []string{srv.URL}, Concurrency: 1})
	sum := replay.Run(context.Background(), c, f.store, tab, records(tab), replay.RunOptions{Concurrency: 1})
	if sum.Halted == nil || sum.Halted.Cause != "systemic" {
		t.Fatalf("halted %+v, want the 301 to halt the run", sum.Halted)
	}
	if len(sum.WriteErrors) != 0 {
		t.Fatalf("write-back failed: %.500q", sum.WriteErrors)
	}
	if got := f.cell(0, cStatus); got != "delivered" || f.cell(0, cAttempts) != "2" {
		t.Errorf("the delivered row ended %q with %q attempts: its write-back was lost", got, f.cell(0, cAttempts))
	}
	errCell := f.cell(1, cError)
	if n := utf8.RuneCountInString(errCell); n == 0 || n > replay.MaxDetail || !strings.Contains(errCell, "truncated") {
		t.Errorf("the moved row's error cell has %d characters: %.200q", n, errCell)
	}
	if f.cell(1, cStatus) != "dead" || f.cell(1, cAttempts) != "2" {
		t.Errorf("the moved row ended %q with %q attempts", f.cell(1, cStatus), f.cell(1, cAttempts))
	}
	if f.cell(2, cStatus) != "dead" || f.cell(2, cAttempts) != "1" || len(sum.NotAttempted) != 1 {
		t.Errorf("the row after the halt ended %q with %q attempts; not attempted %v", f.cell(2, cStatus), f.cell(2, cAttempts), sum.NotAttempted)
	}
	if n := utf8.RuneCountInString(sum.Halted.String()); n > replay.MaxDetail+200 {
		t.Errorf("the HALTED line is %d characters", n)
	}
}
