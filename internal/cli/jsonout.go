package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/triage-dev/triage/model"
)

// This file is the CLI's one output writer (invariant 9). run wraps stdout and stderr in a
// safeWriter, so every byte a command prints (a table row, a summary line, an error message,
// a JSON document) passes model.SanitizeText on its way out, whichever code path printed it.
// A command still sanitises what it formats (model.SanitizeLine, so a newline in a cell can't
// break a table row); the writer is what makes a forgotten call harmless. JSON is escaped
// before it gets there (writeJSON), so the writer finds nothing to replace in it and a JSON
// parser reads the original text.

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
	if _, err := io.WriteString(s.w, model.SanitizeText(string(b[:cut]))); err != nil {
		return 0, err
	}
	return len(p), nil
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

// escapeUnsafeJSON rewrites the unsafe characters of an encoded JSON document as \u escapes.
// They can only occur inside strings (JSON's own syntax is ASCII), where an escape means the
// same character, and all of them are in the Basic Multilingual Plane (one \uXXXX each).
func escapeUnsafeJSON(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if model.Unsafe(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return out
}
