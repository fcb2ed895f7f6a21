package mail

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/model"
)

func draftMailer(t *testing.T) *Mailer {
	t.Helper()
	m, err := New(config.MailSection{
		From:            "owner@example.com",
		Sendmail:        "/usr/sbin/sendmail",
		Signature:       "Site Owner\r\nexample.com",
		Templates:       map[string]string{"thanks": "Thank you for writing, we'll look into it.\n", "spam": "No thanks."},
		DefaultTemplate: "thanks",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDraftLayout: the header block, the template, the quote under its attribution, the
// signature, exactly.
func TestDraftLayout(t *testing.T) {
	m := draftMailer(t)
	tb, r := oneMessage(t, "Ada Lovelace", "ada@example.org", "Pricing?", "Hello,\r\n\r\nhow much is it?  \n\x1b]52;c;evil\x07 \u202e")
	got, err := m.Draft(tb, r, m.DefaultTemplate())
	if err != nil {
		t.Fatal(err)
	}
	want := `To: Ada Lovelace <ada@example.org>
Cc: 
Bcc: 
Subject: Re: Pricing?

Thank you for writing, we'll look into it.

On Mon, 2 Mar 2026 at 14:05, Ada Lovelace wrote:
> Hello,
>
> how much is it?
> ␛]52;c;evil␇ ⇄

-- 
Site Owner
example.com
`
	if got != want {
		t.Errorf("draft\n%s\nwant\n%s", got, want)
	}
	none, err := m.Draft(tb, r, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(none, "To: Ada Lovelace <ada@example.org>\nCc: \nBcc: \nSubject: Re: Pricing?\n\n\n\nOn Mon,") {
		t.Errorf("draft without a template:\n%s", none)
	}
	if _, err := m.Draft(tb, r, "nope"); err == nil || !strings.Contains(err.Error(), `no reply template "nope": [mail] templates has spam, thanks`) {
		t.Errorf("unknown template: %v", err)
	}
	var bare *Mailer
	if d, err := bare.Draft(tb, r, ""); err != nil || strings.Contains(d, "-- \n") {
		t.Errorf("a nil Mailer's draft: %v\n%s", err, d)
	}
}

// TestToSubjectQuote: the parts the mailto: link and the mail share.
func TestToSubjectQuote(t *testing.T) {
	for _, c := range []struct {
		name, email, subject, message string
		to, subj                      string
	}{
		{"Ada", "ada@example.org", "Pricing", "hi", `"Ada" <ada@example.org>`, "Re: Pricing"},
		{"", "Grace <grace@example.org>", "", "first line\nsecond", `"Grace" <grace@example.org>`, "Re: first line"},
		{"", "bob@example.org", "RE: again", "x", "<bob@example.org>", "RE: again"},
		{"", "bob@example.org", "  \n", "\n\n  late line", "<bob@example.org>", "Re: late line"},
		{"", "bob@example.org", "", "", "<bob@example.org>", "Re: your message"},
		{"Ann", "ann@example.org", strings.Repeat("x", 200), "", `"Ann" <ann@example.org>`, "Re: " + strings.Repeat("x", SubjectMax-1) + "…"},
	} {
		tb, r := oneMessage(t, c.name, c.email, c.subject, c.message)
		a, err := To(tb, r)
		if err != nil {
			t.Errorf("%q: %v", c.email, err)
			continue
		}
		if a.String() != c.to {
			t.Errorf("To %q, want %q", a.String(), c.to)
		}
		if s := Subject(tb, r, SubjectMax); s != c.subj {
			t.Errorf("Subject %q, want %q", s, c.subj)
		}
	}
	// Without a Subject column the message's first line is the subject.
	tb := inbox(t, []any{"Timestamp", "Name", "Email", "Message", "Status", "ID"}, []any{"", "A", "a@example.org", "Question\nbody", "new", "1"})
	if s := Subject(tb, &tb.Records[0], 60); s != "Re: Question" {
		t.Errorf("subject %q", s)
	}
	if a := Attribution(tb, &tb.Records[0]); a != "A wrote:" {
		t.Errorf("attribution without a time %q", a)
	}
	for _, email := range []string{"", "not an address", "a@example.org\r\nBcc: v@x.example", "a@example.org, b@example.org", "a@", "a\u202e@example.org"} {
		tb, r := oneMessage(t, "X", email, "", "")
		if _, err := To(tb, r); err == nil {
			t.Errorf("To accepted %q", email)
		} else if strings.ContainsAny(err.Error(), "\r\n\u202e") {
			t.Errorf("error carries a control: %q", err)
		}
	}
	lines, short := model.QuoteLines("one\n\n"+strings.Repeat("é", 20), 10)
	if !short || strings.Join(lines, "|") != "> one|>|> ééééé|> […]" {
		t.Errorf("Quote %q %v", lines, short)
	}
}

// TestDraftRoundTrip: a draft edited as a person would (text written, a Cc added, the
// subject changed, header names in another case, an editor that trims trailing spaces and
// saves CRLF) reads back as they wrote it.
func TestDraftRoundTrip(t *testing.T) {
	m := draftMailer(t)
	tb, r := oneMessage(t, "Ada Lovelace", "ada@example.org", "Pricing?", "how much?")
	draft, err := m.Draft(tb, r, "")
	if err != nil {
		t.Fatal(err)
	}
	edited := writeReply(t, draft, "It is free.\nCheers")
	edited = strings.Replace(edited, "Cc: \n", "cc: Bob <bob@example.net>, =?utf-8?q?Eve_=E2=80=AEx?= <eve@example.net>\n", 1)
	edited = strings.Replace(edited, "Subject: Re: Pricing?\n", "SUBJECT: Re: Pricing\n  (and more)\n", 1)
	edited = strings.ReplaceAll(edited, " \n", "\n") // trailing spaces trimmed: "-- " too
	edited = strings.ReplaceAll(edited, "\n", "\r\n")
	rp, err := ParseDraft(draft, edited)
	if err != nil {
		t.Fatal(err)
	}
	if len(rp.To) != 1 || rp.To[0].Name != "Ada Lovelace" || rp.To[0].Address != "ada@example.org" {
		t.Errorf("To %v", rp.To)
	}
	if len(rp.Cc) != 2 || rp.Cc[0].Address != "bob@example.net" || rp.Cc[1].Name != "Eve x" || len(rp.Bcc) != 0 {
		t.Errorf("Cc %v Bcc %v", rp.Cc, rp.Bcc)
	}
	if rp.Subject != "Re: Pricing (and more)" {
		t.Errorf("Subject %q", rp.Subject)
	}
	want := "It is free.\nCheers\n\nOn Mon, 2 Mar 2026 at 14:05, Ada Lovelace wrote:\n> how much?\n\n-- \nSite Owner\nexample.com\n"
	if rp.Body != want {
		t.Errorf("body\n%q\nwant\n%q", rp.Body, want)
	}
}

// TestDraftNotSent: a draft left as it was, emptied, or holding only the quote and the
// signature sends nothing, and says so.
func TestDraftNotSent(t *testing.T) {
	m := draftMailer(t)
	tb, r := oneMessage(t, "Ada", "ada@example.org", "Q", "question")
	withTemplate, _ := m.Draft(tb, r, "thanks")
	plain, _ := m.Draft(tb, r, "")
	for _, c := range []struct{ draft, edited, says string }{
		{withTemplate, withTemplate, "not changed"},
		{withTemplate, withTemplate + "\n\n", "not changed"},
		{plain, plain, "not changed"},
		{plain, "", "empty"},
		{plain, strings.Replace(plain, "Cc: \n", "Cc: bob@example.net\n", 1), "no text of its own"},
		{withTemplate, strings.Replace(withTemplate, "Thank you for writing, we'll look into it.\n", "", 1), "no text of its own"},
		{plain, "To: ada@example.org\nSubject: x\n", "only headers"},
	} {
		_, err := ParseDraft(c.draft, c.edited)
		if !errors.Is(err, ErrNotSent) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%q: %v, want ErrNotSent saying %q", c.edited, err, c.says)
		}
	}
	// The template sent as it is, once a header changed, is a reply.
	if rp, err := ParseDraft(withTemplate, strings.Replace(withTemplate, "Bcc: \n", "Bcc: me@example.com\n", 1)); err != nil || len(rp.Bcc) != 1 {
		t.Errorf("template with a Bcc: %v", err)
	}
}

// TestDraftRefused: headers triage doesn't send, a broken header block, addresses net/mail
// can't read; each error names what is wrong and is not ErrNotSent.
func TestDraftRefused(t *testing.T) {
	m := draftMailer(t)
	tb, r := oneMessage(t, "Ada", "ada@example.org", "Q", "question")
	draft, _ := m.Draft(tb, r, "")
	written := writeReply(t, draft, "an answer")
	for _, c := range []struct{ edited, says string }{
		{strings.Replace(written, "Cc: \n", "From: boss@example.com\nX-Priority: 1\n", 1), `the headers "From", "X-Priority", which triage doesn't send: keep To, Cc, Bcc and Subject only (the sender is [mail] from)`},
		{strings.Replace(written, "Cc: \n", "Reply-To: x@example.com\n", 1), `the header "Reply-To", which`},
		{strings.Replace(written, "Bcc: \n", "To: other@example.org\n", 1), "two To lines (line 3 is the second)"},
		{strings.Replace(written, "Cc: \n", "Cc: not an address\n", 1), `the draft's Cc line (line 2): "not an address" is not a list of mail addresses`},
		{strings.Replace(written, "Cc: \n", "Cc: bob@\n", 1), `the draft's Cc line (line 2)`},
		{strings.Replace(written, "Cc: \n", "Cc: =?utf-8?q?Eve=0D=0ABcc:_x?= <eve@example.net>\n", 1), `the draft's Cc line (line 2)`},
		{strings.Replace(written, "To: Ada <ada@example.org>\n", "To: \n", 1), "no To address"},
		{strings.Replace(written, "Subject: Re: Q\n\n", "Subject: Re: Q\nHello there\n", 1), `line 5 of the draft, "Hello there", is not a header`},
		{" To: x@example.org\n\nbody\n", "line 1 of the draft starts with a space"},
		{strings.Replace(written, "Subject: Re: Q\n", "Subject: "+strings.Repeat("s", 300)+"\n", 1), "the subject is 300 characters long"},
	} {
		_, err := ParseDraft(draft, c.edited)
		if err == nil || errors.Is(err, ErrNotSent) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%q:\n%v\nwant an error saying %q", c.edited, err, c.says)
		}
	}
	var many []string
	for i := 0; i <= MaxRecipients; i++ {
		many = append(many, "a"+strings.Repeat("x", i)+"@example.org")
	}
	_, err := ParseDraft(draft, strings.Replace(written, "Bcc: \n", "Bcc: "+strings.Join(many, ", ")+"\n", 1))
	wantErr(t, err, "goes to 52 addresses: a reply goes to at most 50")
}

// TestEditorRoundTrip: the draft written to a file, opened with $EDITOR (a real program
// that writes a line into it, as a person would), read back and parsed.
func TestEditorRoundTrip(t *testing.T) {
	m := draftMailer(t)
	tb, r := oneMessage(t, "Ada", "ada@example.org", "Q", "question")
	draft, _ := m.Draft(tb, r, "")
	dir := t.TempDir()
	path, err := WriteDraft(dir, draft)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 || !strings.HasSuffix(path, ".eml") {
		t.Fatalf("draft file %s: %v %v", path, fi.Mode(), err)
	}
	editor := filepath.Join(dir, "editor")
	// Writes its first argument, then the answer on the first body line of the file.
	script := "#!/bin/sh\nprintf '%s\\n' \"$1\" > '" + dir + "/editor-args'\n" +
		"awk 'done == 0 && $0 == \"\" { print; print \"Answered by the editor.\"; done = 1; getline; next } { print }' \"$2\" > \"$2.new\" && mv \"$2.new\" \"$2\"\n"
	if err := os.WriteFile(editor, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"EDITOR": editor + " --wait"}
	cmd, err := EditorCommand(func(k string) string { return env[k] }, path)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("editor: %v %s", err, out)
	}
	if a, _ := os.ReadFile(filepath.Join(dir, "editor-args")); string(a) != "--wait\n" {
		t.Errorf("editor's first argument %q", a)
	}
	edited, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rp, err := ParseDraft(draft, string(edited))
	if err != nil {
		t.Fatalf("%v\n%s", err, edited)
	}
	if !strings.HasPrefix(rp.Body, "Answered by the editor.\n\nOn Mon, 2 Mar 2026") {
		t.Errorf("body %q", rp.Body)
	}
	env = map[string]string{"VISUAL": "no-such-editor-anywhere", "EDITOR": editor}
	if _, err := EditorCommand(func(k string) string { return env[k] }, path); err == nil || !strings.Contains(err.Error(), `can't find the editor "no-such-editor-anywhere" (VISUAL)`) {
		t.Errorf("missing editor: %v", err)
	}
}
