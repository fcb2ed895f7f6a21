package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// writeJSON writes v as one indented JSON document. Beyond what encoding/json escapes (C0
// controls), it also escapes the characters a terminal would act on or reorder (C1
// controls, bidi overrides and isolates, DEL), so `--json` piped to a terminal can't be
// used against the reader (invariant 9). The data is unchanged for a JSON parser.
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	_, err := w.Write(escapeTerminalRunes(buf.Bytes()))
	return err
}

func escapeTerminalRunes(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if dangerous(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return out
}

func dangerous(r rune) bool {
	return r == 0x7f || (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) ||
		(r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}
