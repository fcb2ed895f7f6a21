// Package mail answers an inbox message by mail: a draft the site owner edits in $EDITOR
// (Mailer.Draft), read back (ParseDraft), built into an RFC 5322 message (Mailer.Message)
// and sent over SMTP or through a sendmail program (Mailer.Send), as `[mail]` configures
// (config.MailSection). Without a transport, Mailer.Configured is false and the TUI's reply
// stays a mailto: link; To, Subject and Quote are the parts both ways share, so the link and
// the mail answer the same person under the same subject.
//
// Every cell is hostile: a name, an address or a subject from the sheet never adds a header
// or ends one (header values are sanitised, addresses parsed and checked with net/mail, the
// body is quoted-printable), and quoted text goes through the sanitiser (invariant 9).
//
// The design it follows, and the section (§N) and invariant numbers its comments cite, are in
// docs/DESIGN.md.
package mail

import (
	"errors"
	"fmt"
	netmail "net/mail"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/triage-dev/triage/model"
)

// Bounds of what a header built from a cell may hold. A name or a subject from the public
// can be any length; a header line past 998 characters breaks the message, and nobody reads
// a subject that long.
const (
	// NameMax is the most characters of a display name kept (a longer one is cut, with …).
	NameMax = 100
	// SubjectMax is the most characters of a subject taken from a cell.
	SubjectMax = 150
	// DraftSubjectMax is the longest subject a draft may be sent with.
	DraftSubjectMax = 250
	// MaxRecipients bounds To, Cc and Bcc together: a reply goes to a person, not a list.
	MaxRecipients = 50
)

// ErrNotSent is wrapped by ParseDraft's error when the person left the draft as it was or
// wrote nothing: the reply is abandoned, not faulty (the TUI says so and sends nothing).
// Any other error of ParseDraft is a draft to fix (the TUI can open it in the editor again).
var ErrNotSent = errors.New("nothing was sent")

// Reply is a reply as the person wrote it: the addresses, the subject and the body (plain
// text, "\n" line ends). ParseDraft makes one; Mailer.Message and Mailer.Send check it again,
// so a Reply built by code is held to the same rules.
type Reply struct {
	To, Cc, Bcc []*netmail.Address
	Subject     string
	Body        string
}

// To is the address an inbox message is answered at: the Email cell, parsed and checked by
// net/mail's rules, with the Name cell (sanitised, at most NameMax characters) as its display
// name, or the name the cell itself gave ("Ada <ada@example.com>"). A missing or invalid
// address is an error saying so.
func To(t *model.Table, r *model.Record) (*netmail.Address, error) {
	cell := strings.TrimSpace(t.Get(r, model.FEmail))
	if cell == "" {
		return nil, fmt.Errorf("this message has no email address to reply to")
	}
	a, err := netmail.ParseAddress(cell)
	if err == nil {
		err = checkAddress(a)
	}
	if err != nil {
		return nil, fmt.Errorf("the email address %s is not valid: there is no address to reply to", quoteCell(cell, 40))
	}
	name := HeaderText(t.Get(r, model.FName), NameMax)
	if name == "" {
		name = HeaderText(a.Name, NameMax)
	}
	return &netmail.Address{Name: name, Address: a.Address}, nil
}

// Subject is the subject a reply to an inbox message goes under: "Re: " and the first line
// of the tab's Subject column (an extra column, found by its header) when the sheet has one,
// else of the message; sanitised (HeaderText) and cut to max characters. A subject that
// already starts with "Re:" keeps it once.
func Subject(t *model.Table, r *model.Record, max int) string {
	s := ""
	if c := headerCol(t, "subject"); c >= 0 && c < len(r.Cells) {
		s = HeaderText(firstLine(r.Cells[c]), max)
	}
	if s == "" {
		s = HeaderText(firstLine(t.Get(r, model.FMessage)), max)
	}
	if s == "" {
		return "Re: your message"
	}
	if len(s) >= 3 && strings.EqualFold(s[:3], "re:") {
		return s
	}
	return "Re: " + s
}

// Quote is a message as "> " lines (">" for a blank one), sanitised (model.Sanitize: a
// control character or a bidi override becomes a visible placeholder): at most limit
// Attribution is the line above the quote: "On Mon, 2 Mar 2026 at 14:05, Ada wrote:" (the
// message's time in the tab's zone; without a time, "Ada wrote:"; without a name, "you").
func Attribution(t *model.Table, r *model.Record) string {
	name := HeaderText(t.Get(r, model.FName), NameMax)
	if name == "" {
		name = "you"
	}
	if r.Time.IsZero() {
		if name == "you" {
			return "You wrote:"
		}
		return name + " wrote:"
	}
	tm := r.Time
	if t.Location != nil {
		tm = tm.In(t.Location)
	}
	return fmt.Sprintf("On %s, %s wrote:", tm.Format("Mon, 2 Jan 2006 at 15:04"), name)
}

// Draft is the text the person edits to answer record r of inbox table t: a header block
// (To, empty Cc and Bcc lines to fill in or leave, Subject), a blank line, then the body:
// the template named (Templates; "" for none: DefaultTemplate is the configured choice), or
// an empty line to write on, the message quoted under its attribution line, and the
// signature after "-- ". ParseDraft reads the edited text back. A nil Mailer drafts with no
// template and no signature. The error says what is missing: an address to reply to, or a
// template by that name.
func (m *Mailer) Draft(t *model.Table, r *model.Record, template string) (string, error) {
	to, err := To(t, r)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("To: " + draftAddress(to) + "\n")
	b.WriteString("Cc: \n")
	b.WriteString("Bcc: \n")
	b.WriteString("Subject: " + Subject(t, r, SubjectMax) + "\n")
	b.WriteString("\n")
	if template != "" {
		text, ok := m.template(template)
		if !ok {
			return "", fmt.Errorf("there is no reply template %q: [mail] templates has %s", model.SanitizeLine(template), m.templateList())
		}
		b.WriteString(strings.Trim(normalize(text), "\n") + "\n\n")
	} else {
		b.WriteString("\n\n") // a line to write on, and a blank one before the quote
	}
	b.WriteString(Attribution(t, r) + "\n")
	quote, _ := model.QuoteLines(t.Get(r, model.FMessage), 0)
	for _, l := range quote {
		b.WriteString(l + "\n")
	}
	if sig := m.signature(); sig != "" {
		b.WriteString("\n-- \n" + sig + "\n")
	}
	return b.String(), nil
}

// ParseDraft reads a draft back as the person edited it (draft is the text Draft gave them,
// edited what the editor saved): header lines (To, Cc, Bcc, Subject; names in any case; a
// line starting with a space or a tab goes on from the line above), a blank line, then the
// body. A header triage doesn't send (From is [mail] from) is refused with a message naming
// it; so are an address net/mail can't read and a To with no address. A draft left as it
// was, or whose body holds nothing but the quote, the attribution and the signature, is an
// error wrapping ErrNotSent.
func ParseDraft(draft, edited string) (Reply, error) {
	draft, edited = normalize(draft), normalize(edited)
	if strings.TrimSpace(edited) == "" {
		return Reply{}, fmt.Errorf("the draft is empty: %w", ErrNotSent)
	}
	if strings.TrimRight(edited, "\n ") == strings.TrimRight(draft, "\n ") {
		return Reply{}, fmt.Errorf("the draft was not changed: %w", ErrNotSent)
	}
	lines := strings.Split(edited, "\n")
	type header struct {
		name, value string
		line        int
	}
	var headers []header
	n := 0
	for ; n < len(lines); n++ {
		l := lines[n]
		if strings.TrimSpace(l) == "" {
			break
		}
		if l[0] == ' ' || l[0] == '\t' {
			if len(headers) == 0 {
				return Reply{}, fmt.Errorf("line 1 of the draft starts with a space: the draft starts with its headers (To: ...)")
			}
			headers[len(headers)-1].value += " " + strings.TrimSpace(l)
			continue
		}
		name, value, ok := strings.Cut(l, ":")
		if !ok || name == "" || strings.ContainsFunc(name, func(r rune) bool { return r <= ' ' || r >= 0x7f }) {
			return Reply{}, fmt.Errorf("line %d of the draft, %s, is not a header (Name: value): keep the headers at the top and one blank line before the message", n+1, quoteCell(l, 40))
		}
		headers = append(headers, header{name: name, value: strings.TrimSpace(value), line: n + 1})
	}
	var unknown []string
	for _, h := range headers {
		switch strings.ToLower(h.name) {
		case "to", "cc", "bcc", "subject":
		default:
			unknown = append(unknown, quoteCell(h.name, 30))
		}
	}
	if len(unknown) > 0 {
		return Reply{}, fmt.Errorf("the draft has %s, which triage doesn't send: keep To, Cc, Bcc and Subject only (the sender is [mail] from)", plural(unknown, "the header", "the headers"))
	}
	var rp Reply
	seen := map[string]bool{}
	for _, h := range headers {
		key := strings.ToLower(h.name)
		if seen[key] {
			how := "keep one, with the addresses separated by commas"
			if key == "subject" {
				how = "keep one"
			}
			return Reply{}, fmt.Errorf("the draft has two %s lines (line %d is the second): %s", canonical(key), h.line, how)
		}
		seen[key] = true
		if key == "subject" {
			rp.Subject = HeaderText(h.value, 0)
			continue
		}
		list, err := parseList(h.value)
		if err != nil {
			return Reply{}, fmt.Errorf("the draft's %s line (line %d): %v", canonical(key), h.line, err)
		}
		switch key {
		case "to":
			rp.To = list
		case "cc":
			rp.Cc = list
		case "bcc":
			rp.Bcc = list
		}
	}
	if len(rp.To) == 0 {
		return Reply{}, fmt.Errorf("the draft has no To address: write the address to reply to on its To line")
	}
	if n < len(lines) {
		rp.Body = body(lines[n+1:], draft)
	}
	if rp.Body == "" {
		return Reply{}, fmt.Errorf("the draft has no message, only headers: %w", ErrNotSent)
	}
	if !wroteSomething(rp.Body, draft) {
		return Reply{}, fmt.Errorf("the reply has no text of its own (only the quote and the signature): %w", ErrNotSent)
	}
	if err := rp.check(); err != nil {
		return Reply{}, err
	}
	return rp, nil
}

// body is the draft's body as sent: leading and trailing blank lines dropped, and the
// signature's "-- " line restored where an editor trimmed its space (the line readers' mail
// programs look for to hide the signature).
func body(lines []string, draft string) string {
	hasSig := strings.Contains(draft, "\n-- \n")
	for i := len(lines) - 1; i >= 0 && hasSig; i-- {
		if lines[i] == "--" || lines[i] == "-- " {
			lines[i] = "-- "
			break
		}
	}
	s := strings.Trim(strings.Join(lines, "\n"), "\n")
	if s == "" {
		return ""
	}
	return s + "\n"
}

// wroteSomething reports whether a body holds text besides the quote (lines starting with
// ">"), the draft's attribution line (the line above its quote) and the signature (from its
// "-- " line on).
func wroteSomething(body, draft string) bool {
	attribution := ""
	dl := strings.Split(draft, "\n")
	for i := 1; i < len(dl); i++ {
		if strings.HasPrefix(dl[i], ">") {
			attribution = strings.TrimSpace(dl[i-1])
			break
		}
	}
	lines := strings.Split(body, "\n")
	end := len(lines)
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i] == "-- " {
			end = i
			break
		}
	}
	for _, l := range lines[:end] {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, ">") || t == attribution {
			continue
		}
		return true
	}
	return false
}

// parseList reads a header's address list ("" is none), each address checked and its name
// sanitised: net/mail decodes encoded words in names, so "=?utf-8?q?a=0D=0Ab?=" arrives
// holding a line break.
func parseList(v string) ([]*netmail.Address, error) {
	if strings.Trim(v, " ,") == "" {
		return nil, nil
	}
	list, err := netmail.ParseAddressList(v)
	if err != nil {
		return nil, fmt.Errorf("%s is not a list of mail addresses (write Name <name@example.com>, separated by commas)", quoteCell(v, 60))
	}
	for _, a := range list {
		if err := checkAddress(a); err != nil {
			return nil, err
		}
		a.Name = HeaderText(a.Name, NameMax)
	}
	return list, nil
}

// checkAddress refuses an address that net/mail parsed but that can't be sent to: a space or
// a control character in it, no domain, longer than SMTP allows.
func checkAddress(a *netmail.Address) error {
	addr := a.Address
	if strings.ContainsFunc(addr, func(r rune) bool { return unicode.IsSpace(r) || model.Unsafe(r) || r == utf8.RuneError }) {
		return fmt.Errorf("the address %s holds a space or a control character", quoteCell(addr, 40))
	}
	at := strings.LastIndexByte(addr, '@')
	if at <= 0 || at == len(addr)-1 {
		return fmt.Errorf("the address %s has no domain after the @", quoteCell(addr, 40))
	}
	if len(addr) > 254 {
		return fmt.Errorf("the address %s is longer than mail allows (254 characters)", quoteCell(addr, 40))
	}
	return nil
}

// draftAddress writes an address for the person to read and edit: the name as it is (not
// encoded), quoted only where net/mail would need it, so it parses back to the same address.
func draftAddress(a *netmail.Address) string {
	if a.Name == "" {
		return a.Address
	}
	name := a.Name
	if strings.ContainsFunc(name, func(r rune) bool {
		return r < utf8.RuneSelf && !(r == ' ' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || strings.ContainsRune("!#$%&'*+-/=?^_`{|}~", r))
	}) {
		name = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(name) + `"`
	}
	return name + " <" + a.Address + ">"
}

// HeaderText makes a cell fit to be a header value: every line break, tab, control
// character, bidi control and invisible break becomes a space, runs of spaces one, invalid
// UTF-8 U+FFFD; trimmed and cut to max characters (0: no cut), ending in … when cut. Nothing
// it returns can end a header line or start another.
func HeaderText(s string, max int) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || model.Unsafe(r) || r == 0 {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return cut(b.String(), max)
}

// cut shortens s to max characters, the last being … when something was cut.
func cut(s string, max int) string {
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	return strings.TrimRight(string([]rune(s)[:max-1]), " ") + "…"
}

// firstLine is a cell's first non-blank line.
func firstLine(s string) string {
	s = strings.TrimLeft(s, " \t\r\n")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// headerCol finds an extra column by its header (case-insensitive), or -1.
func headerCol(t *model.Table, name string) int {
	for i, h := range t.Header.Headers {
		if strings.EqualFold(strings.TrimSpace(h), name) {
			return i
		}
	}
	return -1
}

// normalize makes line ends "\n" (an editor on Windows, a CRLF template).
func normalize(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// quoteCell quotes text for a message: sanitised, on one line, cut to max characters.
func quoteCell(s string, max int) string {
	return fmt.Sprintf("%q", cut(model.SanitizeLine(s), max))
}

func canonical(key string) string {
	if key == "bcc" {
		return "Bcc"
	}
	if key == "cc" {
		return "Cc"
	}
	return strings.ToUpper(key[:1]) + key[1:]
}

func plural(items []string, one, many string) string {
	if len(items) == 1 {
		return one + " " + items[0]
	}
	return many + " " + strings.Join(items, ", ")
}
