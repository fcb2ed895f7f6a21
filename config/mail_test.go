package config

import (
	"strings"
	"testing"
	"time"
)

// TestMailProblemsHaveTheirLines: every [mail] problem is reported on its line, and none
// quotes a password written in the file.
func TestMailProblemsHaveTheirLines(t *testing.T) {
	data := `spreadsheet = "x"

[mail]
from = "not an address"
smtp = "smtp.example.com"
sendmail = "sendmail -t"
tls = "ssl"
user = "ada"
password = "hunter2-SECRET"
timeout = "1h"
signature = "Ada\u001b[31m"
default_template = "thanks"
templates.welcome = "Hello."
templates.blank = "  "
`
	_, probs := Parse([]byte(data))
	want := []lineProblem{
		{4, `mail.from: "not an address" is not a mail address`},
		{5, `mail.smtp "smtp.example.com" is not host:port`},
		{6, "mail.smtp and mail.sendmail are both set"},
		{6, `mail.sendmail "sendmail -t" is not an absolute path`},
		{7, `mail.tls "ssl" is not one of starttls (the default), implicit (port 465) or none`},
		{9, `mail.password must be read from the environment, never written in the file: set password = "env:TRIAGE_SMTP_PASSWORD"`},
		{10, `mail.timeout "1h" is not a duration from 1s to 5m0s`},
		{11, "mail.signature holds a control character"},
		{12, `mail.default_template names "thanks", which mail.templates doesn't have (it has blank, welcome)`},
		{14, "mail.templates.blank is empty"},
	}
	wantProblems(t, probs, true, want...)
	for _, p := range probs {
		if strings.Contains(p.Msg, "hunter2") {
			t.Errorf("a problem quotes the password: %s", p.Msg)
		}
	}
}

func TestMailPairsAndTransports(t *testing.T) {
	for _, c := range []struct {
		data string
		want []lineProblem
	}{
		{"[mail]\nsmtp = \"smtp.example.com:587\"\n", []lineProblem{{1, "mail.from is missing"}}},
		{"[mail]\nfrom = \"a@example.com\"\nsendmail = \"/usr/sbin/sendmail\"\nuser = \"a\"\npassword = \"env:PW\"\n",
			[]lineProblem{{4, "mail.user and mail.password are for smtp only"}}},
		{"[mail]\nfrom = \"a@example.com\"\nsmtp = \"smtp.example.com:587\"\nuser = \"a\"\n",
			[]lineProblem{{4, "mail.user is set without mail.password"}}},
		{"[mail]\nfrom = \"a@example.com\"\nsmtp = \"smtp.example.com:587\"\npassword = \"env:PW\"\n",
			[]lineProblem{{4, "mail.password is set without mail.user"}}},
		{"[mail]\nfrom = \"a@example.com\"\nsmtp = \"smtp.example.com:587\"\nuser = \"a\"\npassword = \"env:1PW\"\n",
			[]lineProblem{{5, `mail.password reads "env:1PW", which is not an environment variable name`}}},
		{"[mail]\nfrom = \"a@example.com\"\nsmtp = \"smtp.example.com:25\"\ntls = \"none\"\nuser = \"a\"\npassword = \"env:PW\"\n",
			[]lineProblem{{4, `mail.tls = "none" would send the SMTP password in plain text to smtp.example.com`}}},
		{"[mail]\nfrom = \"a@example.com\"\nsendmail = \"/usr/sbin/sendmail\"\ntls = \"implicit\"\n",
			[]lineProblem{{4, "mail.tls applies to smtp only"}}},
		{"[mail]\nfrom = \"a@example.com\"\nsmtp = \"smtp.example.com:0\"\n",
			[]lineProblem{{3, "has no port number"}}},
		{"[mail]\nfrom = \"Ada <ada@>\"\nsmtp = \"smtp.example.com:587\"\n",
			[]lineProblem{{2, "mail.from"}}},
		{"[mail]\nfrom = \"a@example.com\"\nsendmail = \"/usr/bin/msmtp -a work\"\n",
			[]lineProblem{{3, "has arguments: give the program's path only"}}},
		{"[mail]\ndefault_template = \"x\"\n",
			[]lineProblem{{2, "but [mail] has no templates"}}},
		{"[mail]\nfrom = \"a@example.com\"\n[mail.templates]\nok = \"fine\"\nbad = \"a\\u202eb\"\n",
			[]lineProblem{{5, "mail.templates.bad holds a control character"}}},
		{"[mail]\nfrom = \"a@example.com\"\nsmtp = \"smtp.example.com:587\"\nbcc = \"me@example.com\"\n",
			[]lineProblem{{4, `unknown key "mail.bcc"`}}},
	} {
		_, probs := Parse([]byte(c.data))
		wantProblems(t, probs, true, c.want...)
	}
}

func TestMailAccepted(t *testing.T) {
	for _, data := range []string{
		"[mail]\nfrom = \"Ada <ada@example.com>\"\nsmtp = \"smtp.example.com:587\"\nuser = \"ada@example.com\"\npassword = \"env:TRIAGE_SMTP_PASSWORD\"\n",
		"[mail]\nfrom = \"ada@example.com\"\nsmtp = \"smtp.example.com:465\"\ntls = \"IMPLICIT\"\nuser = \"ada\"\npassword = \"env:PW\"\ntimeout = \"1m\"\n",
		"[mail]\nfrom = \"ada@example.com\"\nsmtp = \"localhost:25\"\ntls = \"none\"\nuser = \"ada\"\npassword = \"env:PW\"\n",
		"[mail]\nfrom = \"ada@example.com\"\nsmtp = \"[::1]:25\"\ntls = \"none\"\nuser = \"ada\"\npassword = \"env:PW\"\n",
		"[mail]\nfrom = \"ada@example.com\"\nsmtp = \"relay.internal:25\"\ntls = \"none\"\n",
		"[mail]\nfrom = \"Zoë <zoe@example.com>\"\nsendmail = \"/usr/sbin/sendmail\"\nsignature = \"\"\"\nZoë\nexample.com\n\"\"\"\ndefault_template = \"thanks\"\ntemplates.thanks = \"Thank you.\"\n",
		"[mail]\nsignature = \"Ada\"\n", // drafting settings only: replies stay mailto: links
		"[mail]\nfrom = \"ada@example.com\"\nsendmail = \"/usr/sbin/sendmail\"\n[mail.templates]\nthanks = \"Thanks.\\r\\nAda\"\n",
	} {
		if _, probs := Parse([]byte(data)); len(probs) != 0 {
			t.Errorf("%q: %v", data, probs)
		}
	}
}

func TestMailRuntimeReadings(t *testing.T) {
	for _, c := range []struct {
		sec  MailSection
		mode string
		via  string
	}{
		{MailSection{SMTP: "h:587"}, MailTLSStartTLS, MailViaSMTP},
		{MailSection{SMTP: "h:465"}, MailTLSImplicit, MailViaSMTP},
		{MailSection{SMTP: "h:465", TLS: " StartTLS "}, MailTLSStartTLS, MailViaSMTP},
		{MailSection{Sendmail: "/usr/sbin/sendmail"}, MailTLSStartTLS, MailViaSendmail},
		{MailSection{SMTP: "h:25", Sendmail: "/x"}, MailTLSStartTLS, ""},
		{MailSection{}, MailTLSStartTLS, ""},
	} {
		if got := c.sec.TLSMode(); got != c.mode {
			t.Errorf("%+v: tls %q, want %q", c.sec, got, c.mode)
		}
		if got := c.sec.Transport(); got != c.via {
			t.Errorf("%+v: transport %q, want %q", c.sec, got, c.via)
		}
	}
	if d := (MailSection{}).TimeoutDuration(); d != DefaultMailTimeout {
		t.Errorf("default timeout %v", d)
	}
	if d := (MailSection{Timeout: "45s"}).TimeoutDuration(); d != 45*time.Second {
		t.Errorf("timeout %v", d)
	}
	if e := (MailSection{Password: " env:PW "}).PasswordEnv(); e != "PW" {
		t.Errorf("password env %q", e)
	}
}
