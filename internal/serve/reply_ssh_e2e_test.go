package serve

import (
	"strings"
	"testing"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/internal/replymail"
	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
)

// A reply over triage serve, through the real OpenSSH client in a pty: alice (a triager)
// presses m, writes her reply in the TUI's composer (no editor runs on the shared host),
// ends it with ctrl+s and says yes; a real SMTP server gets it, to the sender, with her words
// and the quote, and the row is replied in the sheet with her name in triaged_by.
func TestReplyOverSSH(t *testing.T) {
	p := newPanes(t)
	f := newFixture(t, 3600e9, 3)
	f.run(t)
	rl := testbed.StartSMTPRelay(t)
	mailer, err := replymail.New(config.MailSection{From: "Acme <hello@acme.example>", SMTP: rl.Addr, TLS: "none"}, func(string) string { return "" })
	if err != nil || mailer == nil {
		t.Fatalf("no mailer: %v", err)
	}
	dir := t.TempDir()
	key, fp := sshKey(t, dir, "alice")
	auth := &config.ServeAuth{
		Keys:  map[string]config.ServeIdentity{fp: {Name: "alice", Access: model.AccessTriager}},
		Users: map[string]model.Access{"alice": model.AccessTriager},
	}
	addr := serveHubMailing(t, f, auth, nil, mailer)
	p.open("alice", "alice", addr, key)
	p.waitFor("alice", "alice · triager", "Person 2")
	p.keys("alice", "m")
	p.waitFor("alice", "Reply · ctrl+s ends it", "To: ", "p2@example.com")
	p.keys("alice", "-l", "Hello Person 2, it is on its way.")
	p.keys("alice", "C-s")
	p.waitFor("alice", "Send the reply to", "p2@example.com")
	p.keys("alice", "y")
	if !testbed.Until(t, func() bool { return len(rl.Messages()) == 1 }) {
		t.Fatalf("the relay got %d messages; the screen:\n%s", len(rl.Messages()), p.screen("alice"))
	}
	got := rl.Messages()[0]
	if strings.Join(got.To, ",") != "p2@example.com" {
		t.Errorf("sent to %q", got.To)
	}
	if body := string(got.Data); !strings.Contains(body, "Hello Person 2, it is on its way.") || !strings.Contains(body, "> Message number 2") {
		t.Errorf("the mail:\n%s", body)
	}
	if !testbed.Until(t, func() bool {
		return f.cell("Inbox", 5, "id-2", 4) == "replied" && f.cell("Inbox", 5, "id-2", 6) == "alice"
	}) {
		t.Fatalf("id-2 is %q, triaged_by %q; the screen:\n%s", f.cell("Inbox", 5, "id-2", 4), f.cell("Inbox", 5, "id-2", 6), p.screen("alice"))
	}
}
