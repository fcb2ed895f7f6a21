package config

import (
	"fmt"
	"net"
	"net/mail"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/triage-dev/triage/model"
)

// MailSection is `[mail]`: how a reply to an inbox message is composed and sent (package
// mail). Without a transport (smtp or sendmail) the TUI's reply stays a mailto: link.
//
//	[mail]
//	from = "Ada at Example <ada@example.com>"
//	smtp = "smtp.example.com:587"       # STARTTLS; port 465 is implicit TLS
//	user = "ada@example.com"
//	password = "env:TRIAGE_SMTP_PASSWORD"  # from the environment only, never the file
//	# or: sendmail = "/usr/sbin/sendmail"
//	signature = "Ada\nexample.com"
//	default_template = "thanks"
//	templates.thanks = "Thank you for writing.\n"
//
// Every rule is in CheckMail, which `triage config check` reports through and the mail
// package applies again before it sends (invariant 12).
type MailSection struct {
	// From is the sender, an address with an optional name ("Name <addr>"); its domain also
	// names the Message-ID.
	From string `toml:"from"`
	// SMTP is the submission server, "host:port".
	SMTP string `toml:"smtp"`
	// TLS is how the SMTP connection is protected: "starttls" (the default, required),
	// "implicit" (TLS from the first byte, the default on port 465) or "none" (plain text,
	// for a relay on this machine).
	TLS string `toml:"tls"`
	// User and Password log in to the SMTP server (AUTH PLAIN, or LOGIN where that is all
	// the server offers). Password is "env:NAME": the secret is read from the environment.
	User     string `toml:"user"`
	Password string `toml:"password"`
	// Sendmail is the absolute path of a sendmail-compatible program (postfix's, msmtp...),
	// run as `PATH -i -- RECIPIENTS` with the message on its standard input.
	Sendmail string `toml:"sendmail"`
	// Timeout bounds one send, the connection and the whole SMTP session or the sendmail
	// run (DefaultMailTimeout when unset).
	Timeout string `toml:"timeout"`
	// Signature is appended to every draft after a "-- " line.
	Signature string `toml:"signature"`
	// Templates are reply texts a draft can start from, by name.
	Templates map[string]string `toml:"templates"`
	// DefaultTemplate names the template a draft starts from ("" for none).
	DefaultTemplate string `toml:"default_template"`
}

// The values of [mail] tls.
const (
	MailTLSStartTLS = "starttls"
	MailTLSImplicit = "implicit"
	MailTLSNone     = "none"
)

// The transports [mail] can name (MailSection.Transport).
const (
	MailViaSMTP     = "smtp"
	MailViaSendmail = "sendmail"
)

// DefaultMailTimeout bounds one send when [mail] timeout is unset.
const DefaultMailTimeout = 30 * time.Second

// MaxMailTimeout is the longest timeout accepted: the TUI waits for a send to end.
const MaxMailTimeout = 5 * time.Minute

// Transport is the configured way to send: MailViaSMTP, MailViaSendmail, or "" when none is
// (or both are, which CheckMail refuses).
func (m MailSection) Transport() string {
	smtp, sendmail := strings.TrimSpace(m.SMTP) != "", strings.TrimSpace(m.Sendmail) != ""
	switch {
	case smtp && !sendmail:
		return MailViaSMTP
	case sendmail && !smtp:
		return MailViaSendmail
	}
	return ""
}

// TLSMode is tls as the runtime reads it: trimmed, lower case; when unset, implicit for
// port 465 (where servers speak TLS from the first byte) and starttls otherwise.
func (m MailSection) TLSMode() string {
	if v := strings.ToLower(strings.TrimSpace(m.TLS)); v != "" {
		return v
	}
	if _, port, err := net.SplitHostPort(strings.TrimSpace(m.SMTP)); err == nil && port == "465" {
		return MailTLSImplicit
	}
	return MailTLSStartTLS
}

// TimeoutDuration is the send's bound as the runtime reads it.
func (m MailSection) TimeoutDuration() time.Duration {
	d, err := positiveDuration(m.Timeout)
	if err != nil || d == 0 || d > MaxMailTimeout {
		return DefaultMailTimeout
	}
	return d
}

// PasswordEnv is the environment variable password names ("" when there is none).
func (m MailSection) PasswordEnv() string {
	env, _ := strings.CutPrefix(strings.TrimSpace(m.Password), model.EnvPrefix)
	return env
}

// checkMail returns every problem of `[mail]`, each with its line.
func (c *Config) checkMail() []Problem {
	probs := CheckMail(c.Mail)
	for i := range probs {
		probs[i].Line = c.lines.lineOf(probs[i].Key)
	}
	return probs
}

// CheckMail returns every problem of a `[mail]` section, each with the dotted key it is about
// and no line (Parse adds it): the one rule for `config check` and the mail package, which
// refuses to send from a section with any of them. Messages never quote a password.
func CheckMail(m MailSection) []Problem {
	var probs []Problem
	add := func(key, format string, a ...any) {
		k := "mail"
		if key != "" {
			k += "." + key
		}
		probs = append(probs, Problem{Key: k, Msg: fmt.Sprintf(format, a...)})
	}
	smtp, sendmail := strings.TrimSpace(m.SMTP), strings.TrimSpace(m.Sendmail)
	transport := smtp != "" || sendmail != ""
	if smtp != "" && sendmail != "" {
		add("sendmail", "mail.smtp and mail.sendmail are both set: a reply is sent one way; keep one of them")
	}

	from := strings.TrimSpace(m.From)
	switch {
	case from == "" && transport:
		add("", "mail.from is missing: replies need a sender; add from = \"Your Name <you@example.com>\"")
	case from != "":
		if err := checkMailAddress(from); err != nil {
			add("from", "mail.from: %v", err)
		}
	}

	var host string
	if smtp != "" {
		h, port, err := net.SplitHostPort(smtp)
		n, perr := strconv.Atoi(port)
		switch {
		case err != nil || h == "" || strings.ContainsFunc(h, unsafeInSetting):
			add("smtp", "mail.smtp %s is not host:port: write it as \"smtp.example.com:587\"", quoteSetting(smtp))
		case perr != nil || n < 1 || n > 65535:
			add("smtp", "mail.smtp %s has no port number: write it as \"smtp.example.com:587\" (465 for implicit TLS)", quoteSetting(smtp))
		default:
			host = h
		}
	}
	if v := strings.TrimSpace(m.TLS); v != "" {
		mode := m.TLSMode()
		switch {
		case mode != MailTLSStartTLS && mode != MailTLSImplicit && mode != MailTLSNone:
			add("tls", "mail.tls %s is not one of starttls (the default), implicit (port 465) or none (plain text, a relay on this machine)", quoteSetting(v))
		case smtp == "":
			add("tls", "mail.tls applies to smtp only: set mail.smtp, or remove tls")
		}
	}

	user, pass := strings.TrimSpace(m.User), strings.TrimSpace(m.Password)
	if (user != "" || pass != "") && smtp == "" {
		key := "user"
		if user == "" {
			key = "password"
		}
		add(key, "mail.user and mail.password are for smtp only: set mail.smtp, or remove them")
	}
	if user != "" && strings.ContainsFunc(user, unsafeInSetting) {
		add("user", "mail.user holds a control character: fix it")
	}
	switch {
	case user != "" && pass == "":
		add("user", "mail.user is set without mail.password: add password = \"env:TRIAGE_SMTP_PASSWORD\" and export that variable, or remove user")
	case pass != "" && user == "":
		add("password", "mail.password is set without mail.user: add the login name as user")
	}
	if pass != "" {
		env, ok := strings.CutPrefix(pass, model.EnvPrefix)
		switch {
		case !ok:
			// The value is a secret: never repeat it.
			add("password", "mail.password must be read from the environment, never written in the file: set password = \"env:TRIAGE_SMTP_PASSWORD\", export TRIAGE_SMTP_PASSWORD, and take the password out of this file")
		case !model.ValidEnvName(env):
			add("password", "mail.password reads %s, which is not an environment variable name (letters, digits and _, not starting with a digit)", quoteSetting(pass))
		}
	}
	if host != "" && pass != "" && m.TLSMode() == MailTLSNone && !isLoopbackHost(host) {
		add("tls", "mail.tls = \"none\" would send the SMTP password in plain text to %s: use starttls or implicit, or a relay on this machine (localhost)", model.SanitizeLine(host))
	}

	if sendmail != "" {
		switch {
		case strings.ContainsFunc(sendmail, unsafeInSetting):
			add("sendmail", "mail.sendmail holds a control character: give the program's absolute path")
		case !filepath.IsAbs(sendmail):
			add("sendmail", "mail.sendmail %s is not an absolute path: give the program's full path (e.g. \"/usr/sbin/sendmail\")", quoteSetting(sendmail))
		case strings.Contains(sendmail, " -"):
			add("sendmail", "mail.sendmail %s has arguments: give the program's path only (triage runs it as PATH -i -- RECIPIENTS); for msmtp's account, make it the default in its config", quoteSetting(sendmail))
		}
	}

	if m.Timeout != "" {
		if d, err := positiveDuration(m.Timeout); err != nil || d == 0 || d > MaxMailTimeout {
			add("timeout", "mail.timeout %s is not a duration from 1s to %s (e.g. \"30s\")", quoteSetting(m.Timeout), MaxMailTimeout)
		}
	}
	if strings.ContainsFunc(m.Signature, unsafeInText) {
		add("signature", "mail.signature holds a control character (an escape, a bidi override...): remove it")
	}
	for _, name := range sortedKeys(m.Templates) {
		switch {
		case strings.TrimSpace(name) == "" || strings.ContainsFunc(name, unsafeInSetting):
			add("templates."+name, "mail.templates has a name that is blank or holds a control character: name it with letters and digits")
		case strings.ContainsFunc(m.Templates[name], unsafeInText):
			add("templates."+name, "mail.templates.%s holds a control character (an escape, a bidi override...): remove it", name)
		case strings.TrimSpace(m.Templates[name]) == "":
			add("templates."+name, "mail.templates.%s is empty: write its text, or remove it", name)
		}
	}
	if d := strings.TrimSpace(m.DefaultTemplate); d != "" {
		if _, ok := m.Templates[d]; !ok {
			names := sortedKeys(m.Templates)
			if len(names) == 0 {
				add("default_template", "mail.default_template names %s, but [mail] has no templates: add templates.%s = \"...\", or remove default_template", quoteSetting(d), model.SanitizeLine(d))
			} else {
				add("default_template", "mail.default_template names %s, which mail.templates doesn't have (it has %s)", quoteSetting(d), strings.Join(names, ", "))
			}
		}
	}
	return probs
}

// checkMailAddress is the rule for [mail] from: one address
// (net/mail's syntax, "Name <addr>" or "addr"), with a domain, and nothing in it that could
// end a header line or hide what it says.
func checkMailAddress(s string) error {
	a, err := mail.ParseAddress(s)
	if err != nil {
		return fmt.Errorf("%s is not a mail address (write it as \"Name <you@example.com>\" or \"you@example.com\")", quoteSetting(s))
	}
	if strings.ContainsFunc(a.Address, func(r rune) bool { return unsafeInSetting(r) || unicode.IsSpace(r) }) {
		return fmt.Errorf("%s is not a mail address: it holds a space or a control character", quoteSetting(s))
	}
	if strings.ContainsFunc(a.Name, unsafeInSetting) {
		return fmt.Errorf("the name in %s holds a control character: remove it", quoteSetting(s))
	}
	at := strings.LastIndexByte(a.Address, '@')
	if at <= 0 || at == len(a.Address)-1 {
		return fmt.Errorf("%s has no domain after the @", quoteSetting(s))
	}
	return nil
}

// unsafeInSetting is a rune a one-line setting must not hold: a line break, a tab, or what
// the sanitiser replaces.
func unsafeInSetting(r rune) bool {
	return r == '\n' || r == '\r' || r == '\t' || model.Unsafe(r)
}

// unsafeInText is a rune a text setting (a signature, a template) must not hold: line breaks
// (a file saved with CRLF keeps them in a multi-line string) and tabs are text, the rest of
// what the sanitiser replaces is not.
func unsafeInText(r rune) bool {
	return r != '\n' && r != '\r' && r != '\t' && model.Unsafe(r)
}

// quoteSetting quotes a setting for a message, safe for a terminal and cut to 80 characters.
func quoteSetting(s string) string {
	if utf8.RuneCountInString(s) > 80 {
		s = string([]rune(s)[:80]) + "…"
	}
	return strconv.Quote(model.SanitizeLine(s))
}
