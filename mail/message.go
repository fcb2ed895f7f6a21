package mail

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"mime"
	"mime/quotedprintable"
	netmail "net/mail"
	"strings"
	"time"
	"unicode/utf8"
)

// maxLine is where a header is folded (RFC 5322 §2.1.1 asks for lines of 78 characters).
const maxLine = 78

// check holds a Reply to what a message can carry: at least one To, at most MaxRecipients
// addresses, each one sendable, a subject of at most DraftSubjectMax characters. Names and
// the subject are sanitised where the message is built, so a Reply built by code is safe.
func (rp Reply) check() error {
	if len(rp.To) == 0 {
		return fmt.Errorf("the reply has no To address")
	}
	n := 0
	for _, list := range [][]*netmail.Address{rp.To, rp.Cc, rp.Bcc} {
		for _, a := range list {
			if a == nil {
				return fmt.Errorf("the reply has an empty address")
			}
			if err := checkAddress(a); err != nil {
				return err
			}
			n++
		}
	}
	if n > MaxRecipients {
		return fmt.Errorf("the reply goes to %d addresses: a reply goes to at most %d", n, MaxRecipients)
	}
	if c := utf8.RuneCountInString(rp.Subject); c > DraftSubjectMax {
		return fmt.Errorf("the subject is %d characters long: keep it under %d", c, DraftSubjectMax)
	}
	return nil
}

// recipients are the envelope's addresses: To, Cc and Bcc, each once, in that order.
func (rp Reply) recipients() []string {
	var out []string
	seen := map[string]bool{}
	for _, list := range [][]*netmail.Address{rp.To, rp.Cc, rp.Bcc} {
		for _, a := range list {
			k := strings.ToLower(a.Address)
			if !seen[k] {
				seen[k] = true
				out = append(out, a.Address)
			}
		}
	}
	return out
}

// Message is the reply as an RFC 5322 message (CRLF line ends), and its Message-ID: From
// ([mail] from), To, Cc (Bcc only in the envelope, never in the message), Subject, Date
// (Mailer.Now), a random Message-ID at the sender's domain, and a text/plain UTF-8 body in
// quoted-printable. Non-ASCII names and subjects are encoded words (mime.QEncoding),
// addresses are formatted by net/mail, and every header value is sanitised (HeaderText)
// and folded, so no cell can add a header, end one or make a line too long.
func (m *Mailer) Message(rp Reply) ([]byte, string, error) {
	if m == nil || m.from == nil {
		return nil, "", ErrNotConfigured
	}
	if err := rp.check(); err != nil {
		return nil, "", err
	}
	id, err := messageID(m.from.Address)
	if err != nil {
		return nil, "", err
	}
	var b bytes.Buffer
	writeHeader(&b, "From", addressList([]*netmail.Address{m.from}))
	writeHeader(&b, "To", addressList(rp.To))
	if len(rp.Cc) > 0 {
		writeHeader(&b, "Cc", addressList(rp.Cc))
	}
	writeHeader(&b, "Subject", encodeText(HeaderText(rp.Subject, DraftSubjectMax)))
	writeHeader(&b, "Date", m.now().Format(time.RFC1123Z))
	writeHeader(&b, "Message-ID", id)
	writeHeader(&b, "MIME-Version", "1.0")
	writeHeader(&b, "Content-Type", "text/plain; charset=utf-8")
	writeHeader(&b, "Content-Transfer-Encoding", "quoted-printable")
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	if _, err := qp.Write([]byte(strings.ToValidUTF8(normalize(rp.Body), "\uFFFD"))); err != nil {
		return nil, "", err
	}
	if err := qp.Close(); err != nil {
		return nil, "", err
	}
	if !bytes.HasSuffix(b.Bytes(), []byte("\r\n")) {
		b.WriteString("\r\n")
	}
	return b.Bytes(), id, nil
}

// addressList formats addresses with net/mail (a non-ASCII name as an encoded word, one
// with specials quoted), each name sanitised first; a name that reads as an encoded word is
// encoded (encodeText).
func addressList(list []*netmail.Address) string {
	parts := make([]string, len(list))
	for i, a := range list {
		name := HeaderText(a.Name, NameMax)
		if strings.Contains(name, "=?") {
			parts[i] = encodeText(name) + " <" + a.Address + ">"
			continue
		}
		parts[i] = (&netmail.Address{Name: name, Address: a.Address}).String()
	}
	return strings.Join(parts, ", ")
}

// encodeText is a header's text as RFC 2047 words where it needs them (mime.QEncoding:
// non-ASCII text). Text holding "=?" is encoded whatever it holds: a reader would decode
// "=?utf-8?q?a=0D=0ABcc:_x?=" written as it is into a line break and a forged header line
// on its screen; encoded, it shows as the text it was.
func encodeText(s string) string {
	if !strings.Contains(s, "=?") {
		return mime.QEncoding.Encode("utf-8", s)
	}
	const room = 75 - len("=?utf-8?q?") - len("?=")
	var words []string
	var w strings.Builder
	for _, r := range s {
		var enc strings.Builder
		switch {
		case r == ' ':
			enc.WriteByte('_')
		case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!*+-/", r)):
			enc.WriteRune(r)
		default:
			var buf [utf8.UTFMax]byte
			for _, c := range buf[:utf8.EncodeRune(buf[:], r)] {
				fmt.Fprintf(&enc, "=%02X", c)
			}
		}
		if w.Len()+enc.Len() > room {
			words = append(words, "=?utf-8?q?"+w.String()+"?=")
			w.Reset()
		}
		w.WriteString(enc.String())
	}
	if w.Len() > 0 {
		words = append(words, "=?utf-8?q?"+w.String()+"?=")
	}
	return strings.Join(words, " ")
}

// writeHeader writes "Name: value" and CRLF, folded at spaces (and after the colon) into
// lines of at most maxLine characters where the value has spaces to fold at (an unfolding reader puts back one
// space, and values here have no runs of them). value holds no line break: every value is
// built from sanitised parts.
func writeHeader(b *bytes.Buffer, name, value string) {
	b.WriteString(name + ":")
	col := len(name) + 1
	for _, w := range strings.Split(value, " ") {
		// The first word may go on the next line too ("Subject:" then a 75-character
		// encoded word): folding white space may follow the colon.
		if col+1+len(w) > maxLine && col > 0 {
			b.WriteString("\r\n")
			col = 0
		}
		b.WriteString(" " + w)
		col += 1 + len(w)
	}
	b.WriteString("\r\n")
}

// messageID is a random Message-ID at the sender's domain (RFC 5322 §3.6.4): 128 random
// bits, so two replies never share one. A domain that isn't plain ASCII (the ID's syntax
// wants dot-atoms) gives "triage.invalid".
func messageID(from string) (string, error) {
	var r [16]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", fmt.Errorf("can't make a Message-ID: %v", err)
	}
	domain := from[strings.LastIndexByte(from, '@')+1:]
	if !dotAtom(domain) {
		domain = "triage.invalid"
	}
	return "<" + hex.EncodeToString(r[:]) + "@" + domain + ">", nil
}

// dotAtom reports whether s is letters, digits, hyphens and dots, not starting or ending
// with a dot.
func dotAtom(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '.' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
