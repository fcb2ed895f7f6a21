package cli

import (
	"context"
	"io"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/triage-dev/triage/internal/replymail"
	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/sheets/emulator"
	"github.com/triage-dev/triage/tui"
)

// m on an inbox message, with [mail] in the config: the editor opens on a draft (To, Re:,
// the message quoted), the person writes a line, says yes, and a real SMTP server receives
// the reply, to the sender, with their words and the quote; the row is then replied in the
// sheet. A hostile name (CR LF and a Bcc in it) adds no header and no recipient.
func TestReplyIsSentAndTheRowReplied(t *testing.T) {
	rl := testbed.StartSMTPRelay(t)
	wb := &emulator.Workbook{SpreadsheetID: "s1", Title: "Test", TimeZone: "Etc/UTC", Sheets: []*emulator.Sheet{
		{Title: "Inbox", Validations: map[string][]string{"E": {"new", "read", "replied", "done"}}, Rows: [][]any{
			{"Timestamp", "Name", "Email", "Message", "Status", "ID"},
			{46000.5, "Ann\r\nBcc: victim@evil.example", "ann@example.com", "Is the shop open on Sunday?", "new", "m1"},
		}},
	}}
	emu, url := startEmu(t, wb)
	c := newCLI(t, url)
	cfgPath := filepath.Join(t.TempDir(), "config.toml")
	cfg := "[mail]\nfrom = \"Acme <hello@acme.example>\"\nsmtp = \"" + rl.Addr + "\"\ntls = \"none\"\nsignature = \"Acme Studio\"\n"
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	c.env["TRIAGE_SPREADSHEET"] = "s1"
	c.env["TRIAGE_CONFIG"] = cfgPath
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string { return c.env[k] }}
	s, err := resolveFor(&globals{}, e, forTUI)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, _, err := openStore(ctx, s, e)
	if err != nil {
		t.Fatal(err)
	}
	mailer, err := replymail.New(s.cfg.Mail, e.getenv)
	if err != nil || mailer == nil {
		t.Fatalf("no mailer: %v", err)
	}
	// The editor writes the reply above the quote, as a person would.
	editor := filepath.Join(t.TempDir(), "editor.sh")
	script := "#!/bin/sh\nset -e\nawk 'NR==1,/^$/ {print; next} !done {print \"Yes, 10 to 4.\"; print \"\"; done=1} {print}' \"$1\" > \"$1.new\"\nmv \"$1.new\" \"$1\"\n"
	if err := os.WriteFile(editor, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	p := testbed.StartProgram(t, tui.New(tui.Options{Store: st, SpreadsheetID: "s1", Mailer: mailer}), 100, 30, "EDITOR="+editor)
	p.WaitScreen(t, "Ann")
	p.Keys("m")
	p.WaitScreen(t, "Send the reply to", "ann@example.com", "Subject: Re: Is the shop open on Sunday?")
	if len(rl.Messages()) != 0 {
		t.Fatal("sent before the yes")
	}
	p.Keys("y")
	if !testbed.Until(t, func() bool { return len(rl.Messages()) == 1 }) {
		t.Fatalf("the relay got %d messages; the screen:\n%s", len(rl.Messages()), p.Screen(t))
	}
	got := rl.Messages()[0]
	if strings.Join(got.To, ",") != "ann@example.com" || got.From != "hello@acme.example" {
		t.Errorf("envelope from %q to %q: the hostile name added a recipient?", got.From, got.To)
	}
	msg, err := mail.ReadMessage(strings.NewReader(string(got.Data)))
	if err != nil {
		t.Fatal(err)
	}
	if msg.Header.Get("Bcc") != "" || strings.Contains(string(got.Data), "\r\nBcc:") {
		t.Errorf("a header from the name: %q", got.Data)
	}
	if subj, _ := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject")); subj != "Re: Is the shop open on Sunday?" {
		t.Errorf("subject %q", subj)
	}
	body, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
	if err != nil {
		t.Fatal(err)
	}
	text := string(body)
	for _, want := range []string{"Yes, 10 to 4.", "> Is the shop open on Sunday?", "Acme Studio"} {
		if !strings.Contains(text, want) {
			t.Errorf("the mail lacks %q:\n%s", want, text)
		}
	}
	if !testbed.Until(t, func() bool { return cell(t, emu, "Inbox", 2, 4) == "replied" }) {
		t.Fatalf("the row isn't replied: %q; the screen:\n%s", cell(t, emu, "Inbox", 2, 4), p.Screen(t))
	}
	p.WaitScreen(t, "replied")
	p.Keys("q")
	p.Finished(t)
}
