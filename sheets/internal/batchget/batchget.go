// Package batchget decodes the Sheets API's values:batchGet answers as they arrive, in one
// pass, without the sheets/v4 client's generic decode. A 100,000-row tab is ~15 MB of JSON;
// the client reads it whole into memory, validates it in one pass and decodes it by
// reflection in another (gensupport.DecodeResponseBytes was 46% of a load's CPU). Decode
// gives the same values encoding/json gives the client ([]any of string, float64, bool, nil),
// which a differential test and a fuzz target hold, and fails where encoding/json fails: the
// answer comes from the network, so a malformed, truncated or hostile one is an error that
// says what was wrong (ErrSyntax, io.ErrUnexpectedEOF), never a short read or a crash.
package batchget

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// ProgressEvery is how many rows of a range pass between two progress reports.
const ProgressEvery = 4096

// MaxDepth is how deeply arrays and objects may nest in an answer, as encoding/json allows:
// Google's answers nest five deep, and a skipped value nested deeper is refused rather than
// followed down (each level costs the reader a stack frame).
const MaxDepth = 10000

// ErrSyntax is a malformed answer: every error Decode returns wraps it, or is
// io.ErrUnexpectedEOF (the answer ended early), or is the body's own read error.
var ErrSyntax = errors.New("malformed JSON")

// jsonReader is a one-pass JSON reader for the shapes of a values:batchGet answer.
type jsonReader struct {
	r       *bufio.Reader
	scratch []byte
	depth   int // the arrays and objects open around the reader
}

// readers keeps Decode's 64 KiB read buffers between answers: a tab's read makes several
// batchGets, and a buffer each was a large share of what a write round allocated.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

// Decode decodes {"valueRanges":[{"values":[[...],...]},...],...}, the rows of each range in
// the order the answer gives them; every other key, at any level, is skipped. progress, when
// set, is called with a range's index and the rows read of it every ProgressEvery rows and at
// the range's end, on the reading goroutine.
func Decode(body io.Reader, progress func(rangeIndex, rows int)) ([][][]any, error) {
	br := readers.Get().(*bufio.Reader)
	br.Reset(body)
	defer func() {
		br.Reset(nil) // the pool holds no answer's body
		readers.Put(br)
	}()
	j := &jsonReader{r: br}
	out := [][][]any{}
	err := j.object(func(key string) error {
		if key != "valueRanges" {
			return j.skip()
		}
		return j.array(func() error {
			i := len(out)
			out = append(out, nil)
			return j.object(func(key string) error {
				if key != "values" {
					return j.skip()
				}
				rows, err := j.rows(func(n int) {
					if progress != nil {
						progress(i, n)
					}
				})
				out[i] = rows
				return err
			})
		})
	})
	if err != nil {
		return nil, err
	}
	if c, err := j.next(); err != io.EOF {
		return nil, fmt.Errorf("%w: %q after the answer", ErrSyntax, c)
	}
	return out, nil
}

// next returns the next byte that is not white space.
func (j *jsonReader) next() (byte, error) {
	for {
		c, err := j.r.ReadByte()
		if err != nil {
			return 0, err
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c, nil
	}
}

// expect reads the next non-space byte and fails unless it is want.
func (j *jsonReader) expect(want byte) error {
	c, err := j.next()
	if err != nil {
		return unexpectedEOF(err)
	}
	if c != want {
		return fmt.Errorf("%w: want %q, found %q", ErrSyntax, want, c)
	}
	return nil
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// null reads a null if one is next, and reports whether it did.
func (j *jsonReader) null() (bool, error) {
	c, err := j.next()
	if err != nil {
		return false, unexpectedEOF(err)
	}
	if c == 'n' {
		return true, j.literal("ull")
	}
	return false, j.r.UnreadByte()
}

// enter counts one more array or object open, refusing one past MaxDepth. Its close counts
// it off (j.depth--) where it ends well; an error ends the whole decode, so no path that
// fails needs to.
func (j *jsonReader) enter() error {
	j.depth++
	if j.depth > MaxDepth {
		return fmt.Errorf("%w: nested deeper than %d arrays and objects", ErrSyntax, MaxDepth)
	}
	return nil
}

// object reads an object (or null), calling member for each key with the reader at its value.
func (j *jsonReader) object(member func(key string) error) error {
	if null, err := j.null(); null || err != nil {
		return err
	}
	if err := j.expect('{'); err != nil {
		return err
	}
	if err := j.enter(); err != nil {
		return err
	}
	c, err := j.next()
	if err != nil {
		return unexpectedEOF(err)
	}
	if c == '}' {
		j.depth--
		return nil
	}
	for {
		if c != '"' {
			return fmt.Errorf("%w: want a key, found %q", ErrSyntax, c)
		}
		key, err := j.str()
		if err != nil {
			return err
		}
		if err := j.expect(':'); err != nil {
			return err
		}
		if err := member(key); err != nil {
			return err
		}
		if c, err = j.next(); err != nil {
			return unexpectedEOF(err)
		}
		switch c {
		case '}':
			j.depth--
			return nil
		case ',':
			if c, err = j.next(); err != nil {
				return unexpectedEOF(err)
			}
		default:
			return fmt.Errorf("%w: want , or } in an object, found %q", ErrSyntax, c)
		}
	}
}

// array reads an array (or null), calling elem for each element with the reader at it.
func (j *jsonReader) array(elem func() error) error {
	if null, err := j.null(); null || err != nil {
		return err
	}
	if err := j.expect('['); err != nil {
		return err
	}
	if err := j.enter(); err != nil {
		return err
	}
	c, err := j.next()
	if err != nil {
		return unexpectedEOF(err)
	}
	if c == ']' {
		j.depth--
		return nil
	}
	if err := j.r.UnreadByte(); err != nil {
		return err
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		if c, err = j.next(); err != nil {
			return unexpectedEOF(err)
		}
		switch c {
		case ']':
			j.depth--
			return nil
		case ',':
		default:
			return fmt.Errorf("%w: want , or ] in an array, found %q", ErrSyntax, c)
		}
	}
}

// rows reads an array of rows, each an array of cells.
func (j *jsonReader) rows(progress func(int)) ([][]any, error) {
	if null, err := j.null(); null || err != nil {
		return nil, err
	}
	rows := [][]any{}
	width := 0
	err := j.array(func() error {
		if null, err := j.null(); null || err != nil {
			rows = append(rows, nil)
			return err
		}
		row := make([]any, 0, width)
		err := j.array(func() error {
			v, err := j.value()
			row = append(row, v)
			return err
		})
		width = max(width, len(row))
		rows = append(rows, row)
		if len(rows)%ProgressEvery == 0 {
			progress(len(rows))
		}
		return err
	})
	progress(len(rows))
	return rows, err
}

// value reads a cell: a string, a number (float64), true, false or null (nil), as
// encoding/json decodes them into an any.
func (j *jsonReader) value() (any, error) {
	c, err := j.next()
	if err != nil {
		return nil, unexpectedEOF(err)
	}
	switch {
	case c == '"':
		return j.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return j.number(c)
	case c == 't':
		return true, j.literal("rue")
	case c == 'f':
		return false, j.literal("alse")
	case c == 'n':
		return nil, j.literal("ull")
	}
	return nil, fmt.Errorf("%w: want a value, found %q", ErrSyntax, c)
}

// literal reads the rest of true, false or null.
func (j *jsonReader) literal(rest string) error {
	for i := 0; i < len(rest); i++ {
		c, err := j.r.ReadByte()
		if err != nil {
			return unexpectedEOF(err)
		}
		if c != rest[i] {
			return fmt.Errorf("%w: bad literal", ErrSyntax)
		}
	}
	return nil
}

// number reads a number whose first byte is first.
func (j *jsonReader) number(first byte) (float64, error) {
	b := append(j.scratch[:0], first)
	for {
		c, err := j.r.ReadByte()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
		if (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-' {
			b = append(b, c)
			continue
		}
		if err := j.r.UnreadByte(); err != nil {
			return 0, err
		}
		break
	}
	j.scratch = b
	if !validNumber(b) {
		return 0, fmt.Errorf("%w: bad number %q", ErrSyntax, b)
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return 0, fmt.Errorf("%w: bad number %q", ErrSyntax, b)
	}
	return f, nil
}

// validNumber reports whether b is a JSON number (strconv accepts more: "1.", ".5", "0x1p3",
// leading zeros): -?int frac? exp?.
func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		if i = digits(b, i+1); b[i-1] == '.' {
			return false // no digit after the point
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		if i = digits(b, i); i == start {
			return false
		}
	}
	return i == len(b)
}

// digits returns the index after the run of digits of b starting at i.
func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// str reads the rest of a string whose opening quote was read.
func (j *jsonReader) str() (string, error) {
	b := j.scratch[:0]
	escaped := false
	for {
		chunk, err := j.r.ReadSlice('"')
		if err != nil && err != bufio.ErrBufferFull {
			return "", unexpectedEOF(err)
		}
		b = append(b, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		// The quote ends the string unless an odd number of backslashes precede it.
		n := 0
		for k := len(b) - 2; k >= 0 && b[k] == '\\'; k-- {
			n++
		}
		if bytes.IndexByte(chunk, '\\') >= 0 {
			escaped = true
		}
		if n%2 == 0 {
			b = b[:len(b)-1]
			break
		}
	}
	j.scratch = b
	if !escaped {
		for _, c := range b {
			if c < 0x20 {
				return "", fmt.Errorf("%w: control character in a string", ErrSyntax)
			}
		}
		if !utf8.Valid(b) {
			return string(validUTF8(b)), nil
		}
		return string(b), nil
	}
	return unescape(b)
}

// unescape decodes a string's escapes as encoding/json does (an invalid surrogate becomes
// U+FFFD).
func unescape(b []byte) (string, error) {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x20 {
			return "", fmt.Errorf("%w: control character in a string", ErrSyntax)
		}
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(b) {
			return "", fmt.Errorf("%w: bad escape", ErrSyntax)
		}
		switch e := b[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(b[i+2:])
			if !ok {
				return "", fmt.Errorf("%w: bad \\u escape", ErrSyntax)
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if len(b) >= i+6 && b[i] == '\\' && b[i+1] == 'u' {
					if r2, ok := hex4(b[i+2:]); ok {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							out = utf8.AppendRune(out, d)
							i += 6
							continue
						}
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return "", fmt.Errorf("%w: bad escape \\%c", ErrSyntax, e)
		}
		i += 2
	}
	if !utf8.Valid(out) {
		out = validUTF8(out)
	}
	return string(out), nil
}

// validUTF8 replaces each byte of b that is not part of valid UTF-8 with U+FFFD, as
// encoding/json does.
func validUTF8(b []byte) []byte {
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return out
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

// skip reads and drops one value of any kind.
func (j *jsonReader) skip() error {
	c, err := j.next()
	if err != nil {
		return unexpectedEOF(err)
	}
	switch c {
	case '{', '[':
		if err := j.r.UnreadByte(); err != nil {
			return err
		}
		if c == '{' {
			return j.object(func(string) error { return j.skip() })
		}
		return j.array(j.skip)
	}
	if err := j.r.UnreadByte(); err != nil {
		return err
	}
	_, err = j.value()
	return err
}
