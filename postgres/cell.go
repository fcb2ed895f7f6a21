package postgres

import "strings"

// A cell on the database is its text as the sheet holds it, with one change: PostgreSQL's
// text can't hold U+0000 (22021 "invalid byte sequence for encoding UTF8: 0x00"), and a
// message or payload may carry one. So a cell's NULs, and the escape character itself (DLE,
// U+0010), are escaped on the way in (toDB) and back on the way out (fromDB): "\x10" + "0" is
// a NUL, "\x10\x10" a DLE. Every other cell is stored exactly as it is, so an equality in SQL
// (a conditional write's expected cell) decides as the sheet's comparison does, and a cell
// without either character is the same text in both. A DLE not followed by "0" or a DLE was
// never written by triage and reads as it is.
const cellEscape = '\x10'

// toDB is a cell as the database stores it.
func toDB(s string) string {
	if !strings.ContainsAny(s, "\x00\x10") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 0:
			b.WriteByte(cellEscape)
			b.WriteByte('0')
		case cellEscape:
			b.WriteByte(cellEscape)
			b.WriteByte(cellEscape)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// fromDB is a stored cell as the sheet would hold it.
func fromDB(s string) string {
	if strings.IndexByte(s, cellEscape) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == cellEscape && i+1 < len(s) {
			switch s[i+1] {
			case '0':
				b.WriteByte(0)
				i++
				continue
			case cellEscape:
				b.WriteByte(cellEscape)
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
