package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/triage-dev/triage/model"
)

// This file is the CLI's one output writer (invariant 9). run wraps stdout and stderr in a
// safeWriter, so every byte a command prints (a table row, a summary line, an error message,
// a JSON document) passes model.SanitizeText on its way out, whichever code path printed it.
// A command still sanitises what it formats (model.SanitizeLine, so a newline in a cell can't
// break a table row); the writer is what makes a forgotten call harmless. JSON is escaped
// before it gets there (writeJSON, or appendJSONString for a document written row by row,
// as list --json is), so the writer finds nothing to replace in it, passes it on as it is
// (safeText), and a JSON parser reads the original text.

// safeWriter passes everything written to it through model.SanitizeText. A character split
// across two writes is held back until it is complete, so the sanitiser sees whole runes (an
// 8-bit CSI is two bytes in UTF-8).
type safeWriter struct {
	mu   sync.Mutex
	w    io.Writer
	tail []byte // the start of a character whose other bytes haven't been written yet
}

func newSafeWriter(w io.Writer) *safeWriter {
	if s, ok := w.(*safeWriter); ok {
		return s
	}
	return &safeWriter{w: w}
}

// Write sanitises p (with any held-back bytes before it) and writes the result; it reports
// len(p) written on success, as callers such as fmt expect.
func (s *safeWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := p
	if len(s.tail) > 0 {
		b = append(append([]byte(nil), s.tail...), p...)
		s.tail = nil
	}
	cut := incompleteTail(b)
	if cut < len(b) {
		s.tail = append([]byte(nil), b[cut:]...)
	}
	var err error
	if safeText(b[:cut]) {
		// nothing for the sanitiser to replace (escaped JSON, a plain table): as it is
		_, err = s.w.Write(b[:cut])
	} else {
		_, err = io.WriteString(s.w, model.SanitizeText(string(b[:cut])))
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// safeText reports whether model.SanitizeText would return b unchanged: valid UTF-8 with no
// model.Unsafe character (newline and tab are kept). It is the writer's fast path: one pass,
// no copy.
func safeText(b []byte) bool {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != 0x7f || c == '\n' || c == '\t' {
				i++
				continue
			}
			return false
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 || model.Unsafe(r) {
			return false
		}
		i += size
	}
	return true
}

// Flush writes out a held-back partial character (as the replacement character: it never
// got its other bytes).
func (s *safeWriter) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.tail) == 0 {
		return nil
	}
	t := s.tail
	s.tail = nil
	_, err := io.WriteString(s.w, model.SanitizeText(string(t)))
	return err
}

// redrawLine writes "\r" and then line, in one write: the progress line redrawn in place on a
// terminal. The carriage return is the one control character triage itself sends there (the
// sanitiser drops it from text); line is sanitised as any other text.
func redrawLine(w io.Writer, line string) {
	if s, ok := w.(*safeWriter); ok {
		s.mu.Lock()
		defer s.mu.Unlock()
		pending := string(s.tail)
		s.tail = nil
		_, _ = io.WriteString(s.w, model.SanitizeText(pending)+"\r"+model.SanitizeText(line))
		return
	}
	_, _ = io.WriteString(w, "\r"+line)
}

// unwrapWriter returns the writer under a safeWriter (to ask whether it is a terminal).
func unwrapWriter(w io.Writer) io.Writer {
	if s, ok := w.(*safeWriter); ok {
		return s.w
	}
	return w
}

// incompleteTail returns where a trailing, not yet complete UTF-8 sequence of b starts
// (len(b) if there is none).
func incompleteTail(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}

// writeJSON writes v as one indented JSON document. Beyond what encoding/json escapes (C0
// controls, U+2028/9), it escapes every other character the sanitiser would replace (C1
// controls, DEL, bidi overrides and isolates, invisible breaks: model.Unsafe), so `--json`
// shown on a terminal can't be used against the reader (invariant 9), and a JSON parser
// still reads exactly the sheet's text.
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	_, err := w.Write(escapeUnsafeJSON(buf.Bytes()))
	return err
}

// appendJSONString appends s to dst as a JSON string, escaped exactly as writeJSON escapes
// it: encoding/json's escaping (quote, backslash, C0 controls, <, > and &, invalid UTF-8 as
// the replacement character U+FFFD) and, in the same pass, every model.Unsafe character as a
// JSON \u escape of its code point (see appendUnicodeEscape). It is for output
// written row by row (list --json): the document needs no second scan, the sanitising writer
// finds nothing to replace, and a JSON parser reads exactly s (but invalid UTF-8).
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonPlain[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default: // other C0 controls, DEL, <, >, &
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case model.Unsafe(r): // C1 controls, bidi controls, invisible breaks
			dst = append(dst, s[start:i]...)
			dst = appendUnicodeEscape(dst, r)
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// jsonPlain holds the ASCII characters appendJSONString copies as they are: printable ASCII
// but the quote, the backslash and encoding/json's HTML characters (DEL is model.Unsafe).
var jsonPlain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = true
	}
	for _, c := range `"\<>&` {
		t[c] = false
	}
	return t
}()

// escapeUnsafeJSON rewrites the unsafe characters of an encoded JSON document as \u escapes.
// They can only occur inside strings (JSON's own syntax is ASCII), where an escape means the
// same character.
func escapeUnsafeJSON(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if model.Unsafe(r) {
			out = appendUnicodeEscape(out, r)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return out
}

// appendUnicodeEscape appends r as JSON writes a character by code point: six characters
// (backslash, u, four hex digits) for U+0000..U+FFFF, a UTF-16 surrogate pair of two such
// escapes above, so a parser reads back exactly r whatever model.Unsafe comes to include.
func appendUnicodeEscape(dst []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	one := func(dst []byte, u rune) []byte {
		return append(dst, '\\', 'u', hex[u>>12&0xf], hex[u>>8&0xf], hex[u>>4&0xf], hex[u&0xf])
	}
	if r > 0xffff {
		hi, lo := utf16.EncodeRune(r)
		return one(one(dst, hi), lo)
	}
	return one(dst, r)
}
