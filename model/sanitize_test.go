package model

import (
	"strings"
	"testing"
)

// SanitizeText keeps a payload's layout (newlines, tabs) and nothing a terminal acts on: what
// `y` copies and what the CLI prints can't end a bracketed paste, start an escape sequence
// (7-bit ESC or 8-bit CSI) or reorder the line.
func TestSanitizeTextKeepsLayoutOnly(t *testing.T) {
	in := "{\n\t\"id\": \"k1\x1b[201~rm -rf ~\\n\",\x9b31m \u202eevil\u2066 \u200e\u200f\u061c\a\r\n}\x7f\u0085"
	got := SanitizeText(in)
	for _, r := range []rune{0x1b, 0x9b, 0x85, 0x202e, 0x2066, 0x200e, 0x200f, 0x061c, 0x07, '\r', 0x7f} {
		if strings.ContainsRune(got, r) {
			t.Errorf("SanitizeText kept U+%04X: %q", r, got)
		}
	}
	if strings.Contains(got, "[201~") && !strings.Contains(got, "␛[201~") {
		t.Errorf("the bracketed-paste end must be defused with a visible placeholder: %q", got)
	}
	if !strings.HasPrefix(got, "{\n\t\"id\"") || !strings.HasSuffix(got, "\n}␡⍰") {
		t.Errorf("newlines and tabs must be kept, placeholders visible: %q", got)
	}
	if SanitizeText("plain\ttext\n") != "plain\ttext\n" {
		t.Error("plain text with tabs and newlines must come back unchanged")
	}
}

// Unsafe is the sanitiser's own list: a rune is unsafe exactly when SanitizeText changes it.
// JSON output escapes by Unsafe, so this keeps the two paths of invariant 9 in step.
func TestUnsafeMatchesTheSanitiser(t *testing.T) {
	for r := rune(0); r < 0x3000; r++ {
		s := string(r)
		changed := SanitizeText(s) != s
		if Unsafe(r) != changed {
			t.Errorf("U+%04X: Unsafe %v, but SanitizeText changes it: %v", r, Unsafe(r), changed)
		}
	}
	for _, r := range []rune{0xfeff, 0x2028, 0x2029, 0x200b} {
		if !Unsafe(r) {
			t.Errorf("U+%04X should be unsafe", r)
		}
	}
}
