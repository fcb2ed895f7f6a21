package mail

import (
	"bytes"
	"mime"
	netmail "net/mail"
	"strings"
	"testing"

	"github.com/triage-dev/triage/config"
)

// TestEncodeTextRoundTrips: what a reader decodes is the text written, including text that
// looks like an encoded word, and no word passes RFC 2047's 75 characters.
func TestEncodeTextRoundTrips(t *testing.T) {
	for _, s := range []string{
		"plain ascii",
		"Grüße aus München",
		"=?utf-8?q?x=0D=0ABcc:_v@x.example?=",
		"=? " + strings.Repeat("日本語", 40),
		strings.Repeat("=?", 100),
		"a_b=c?d",
	} {
		enc := encodeText(s)
		for _, w := range strings.Fields(enc) {
			if len(w) > 75 {
				t.Errorf("%q: a word of %d characters", s, len(w))
			}
		}
		got, err := new(mime.WordDecoder).DecodeHeader(enc)
		if err != nil || got != s {
			t.Errorf("%q encoded %q decodes to %q %v", s, enc, got, err)
		}
	}
}

// TestMessageShape: header lines fold at 78 where they can, the body's long lines, trailing
// spaces and signature line survive quoted-printable, and each message has its own ID.
func TestMessageShape(t *testing.T) {
	m, err := New(config.MailSection{From: "Ö Owner <owner@exämple.com>", Sendmail: "/usr/sbin/sendmail"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var to []*netmail.Address
	for i := 0; i < 8; i++ {
		to = append(to, &netmail.Address{Name: "Person Number " + strings.Repeat("é", i), Address: "p" + strings.Repeat("x", i) + "@example.org"})
	}
	body := strings.Repeat("long line ", 50) + "\ntrailing   \n.\n-- \nsig\n"
	rp := Reply{To: to, Subject: strings.Repeat("Grüße ", 20), Body: body}
	msg, id, err := m.Message(rp)
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := bytes.Cut(msg, []byte("\r\n\r\n"))
	for _, l := range strings.Split(string(head), "\r\n") {
		if len(l) > 78 {
			t.Errorf("header line of %d characters: %q", len(l), l)
		}
	}
	h, got := parsed(t, msg)
	if got != body {
		t.Errorf("body\n%q\nwant\n%q", got, body)
	}
	list, err := h.AddressList("To")
	if err != nil || len(list) != 8 || list[7].Name != to[7].Name {
		t.Errorf("To %v %v", list, err)
	}
	if s := decoded(t, h, "Subject"); s != strings.TrimSpace(rp.Subject) {
		t.Errorf("Subject %q", s)
	}
	if !strings.HasSuffix(id, "@triage.invalid>") {
		t.Errorf("Message-ID %q for a non-ASCII domain", id)
	}
	_, id2, _ := m.Message(rp)
	if id2 == id {
		t.Errorf("two messages with the Message-ID %s", id)
	}
	if _, _, err := m.Message(Reply{Subject: "x", Body: "y"}); err == nil || !strings.Contains(err.Error(), "no To address") {
		t.Errorf("no To: %v", err)
	}
	if _, _, err := m.Message(Reply{To: []*netmail.Address{{Address: "a b@example.org"}}}); err == nil || !strings.Contains(err.Error(), "holds a space") {
		t.Errorf("an address with a space: %v", err)
	}
}
