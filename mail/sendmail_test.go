package mail

import (
	"bytes"
	"context"
	"errors"
	netmail "net/mail"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/triage-dev/triage/config"
)

// fakeSendmail writes a sendmail program to a temporary directory: it saves its arguments
// (one a line) and its standard input there, then runs tail (shell text). It returns the
// program's path and the directory.
func fakeSendmail(t *testing.T, tail string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "sendmail")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > '" + dir + "/args'\ncat > '" + dir + "/stdin'\n" + tail + "\n"
	if err := os.WriteFile(path, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return path, dir
}

func sendmailMailer(t *testing.T, path string) *Mailer {
	t.Helper()
	m, err := New(config.MailSection{From: "Site Owner <owner@example.com>", Sendmail: path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.Now = func() time.Time { return time.Date(2026, 3, 3, 9, 30, 0, 0, time.UTC) }
	return m
}

// TestSendmail: the program gets -i, "--" and every recipient (Bcc too) as arguments, and the
// message, without Bcc, on its standard input in LF line ends.
func TestSendmail(t *testing.T) {
	path, dir := fakeSendmail(t, "exit 0")
	m := sendmailMailer(t, path)
	rp := Reply{
		To:      []*netmail.Address{{Name: "Eve\r\nBcc: victim@x.example", Address: "eve@example.org"}},
		Cc:      []*netmail.Address{{Address: "-oQ/tmp/x@example.org"}},
		Bcc:     []*netmail.Address{{Address: "archive@example.com"}},
		Subject: "Re: Grüße",
		Body:    "Thanks.\n.\nA line with a dot.\n",
	}
	sent, err := m.Send(context.Background(), rp)
	if err != nil {
		t.Fatal(err)
	}
	args, err := os.ReadFile(filepath.Join(dir, "args"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-i", "--", "eve@example.org", "-oQ/tmp/x@example.org", "archive@example.com"}
	if got := strings.Split(strings.TrimSuffix(string(args), "\n"), "\n"); !slices.Equal(got, want) {
		t.Errorf("args %q, want %q", got, want)
	}
	if sent.Via != "sendmail "+path || !slices.Equal(sent.Recipients, want[2:]) {
		t.Errorf("sent %+v", sent)
	}
	in, err := os.ReadFile(filepath.Join(dir, "stdin"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(in, []byte("\r")) {
		t.Errorf("CR in what sendmail read:\n%q", in)
	}
	h, body := parsed(t, in)
	if h.Get("Bcc") != "" || bytes.Contains(in, []byte("archive@")) {
		t.Errorf("what sendmail read:\n%s", in)
	}
	if to, err := h.AddressList("To"); err != nil || len(to) != 1 || to[0].Name != "Eve Bcc: victim@x.example" {
		t.Errorf("To %v %v", to, err)
	}
	if s := decoded(t, h, "Subject"); s != "Re: Grüße" {
		t.Errorf("Subject %q", s)
	}
	if body != rp.Body {
		t.Errorf("body %q", body)
	}
}

// TestSendmailFailures: a program that refuses, one that is missing, one that hangs until
// the send is cancelled; each error says what happened, with the program's own words.
func TestSendmailFailures(t *testing.T) {
	rp := Reply{To: []*netmail.Address{{Address: "ann@example.org"}}, Subject: "Re: hi", Body: "thanks\n"}
	ctx := context.Background()

	path, _ := fakeSendmail(t, "echo 'sendmail: fatal: \033[31mno queue\033[0m' >&2; exit 75")
	_, err := sendmailMailer(t, path).Send(ctx, rp)
	wantErr(t, err, path+" did not take the message (exit status 75)", "it said \"sendmail: fatal: ␛[31mno queue␛[0m\"", "nothing was sent")
	if errors.Is(err, ErrMayHaveBeenSent) {
		t.Errorf("a refusal says it may have been sent")
	}

	missing := filepath.Join(t.TempDir(), "sendmail")
	_, err = sendmailMailer(t, missing).Send(ctx, rp)
	wantErr(t, err, missing+" does not exist", "check [mail] sendmail", "nothing was sent")

	notExec := filepath.Join(t.TempDir(), "sendmail")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = sendmailMailer(t, notExec).Send(ctx, rp)
	wantErr(t, err, "can't be run (permission denied)")

	// A program that took the message and then hangs: the send is cancelled once the
	// program says it has started (a FIFO the test reads), and may have gone out.
	dir := t.TempDir()
	fifo := filepath.Join(dir, "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	path, _ = fakeSendmail(t, "echo started > '"+fifo+"'\nexec sleep 600")
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := sendmailMailer(t, path).Send(cctx, rp)
		errc <- err
	}()
	if b, err := os.ReadFile(fifo); err != nil || string(b) != "started\n" {
		t.Fatalf("the program did not start: %q %v", b, err)
	}
	cancel()
	err = <-errc
	wantErr(t, err, "was stopped (cancelled)", "may have been sent")
	if !errors.Is(err, ErrMayHaveBeenSent) {
		t.Errorf("not ErrMayHaveBeenSent: %v", err)
	}
}
