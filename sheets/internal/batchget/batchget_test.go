package batchget

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	sheetsapi "google.golang.org/api/sheets/v4"
)

// reference decodes an answer as the sheets/v4 client does (encoding/json into its struct).
func reference(data []byte) ([][][]any, error) {
	var resp sheetsapi.BatchGetValuesResponse
	if err := json.Unmarshal(data, &resp); err != nil {
		return nil, err
	}
	out := make([][][]any, len(resp.ValueRanges))
	for i, vr := range resp.ValueRanges {
		if vr != nil {
			out[i] = vr.Values
		}
	}
	return out, nil
}

// randomCell is a cell of every kind a read can hold, text with escapes, unicode (astral,
// U+2028), quotes and backslashes included.
func randomCell(r *rand.Rand) any {
	switch r.IntN(8) {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return float64(r.IntN(1_000_000)) / 24
	case 3:
		return r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
	case 4:
		return ""
	}
	const alphabet = "ab \"\\/\n\t\r\b\f\x01é€😀\u2028<>&'xyz0123456789"
	runes := []rune(alphabet)
	var b strings.Builder
	for range r.IntN(30) {
		b.WriteRune(runes[r.IntN(len(runes))])
	}
	return b.String()
}

// The streaming decoder gives exactly what encoding/json gives the sheets/v4 client, on random
// answers of every shape (several ranges, empty ones, rows of any width, keys it skips,
// pretty-printed or not), and fails where encoding/json fails.
func TestDecodeBatchGetMatchesClient(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 300 {
		var vrs []map[string]any
		for range r.IntN(4) {
			vr := map[string]any{"range": "Inbox!A1:F9", "majorDimension": "ROWS"}
			if r.IntN(5) > 0 {
				var rows [][]any
				for range r.IntN(40) {
					row := make([]any, r.IntN(8))
					for c := range row {
						row[c] = randomCell(r)
					}
					rows = append(rows, row)
				}
				vr["values"] = rows
			}
			vrs = append(vrs, vr)
		}
		answer := map[string]any{"spreadsheetId": "s1", "valueRanges": vrs, "extra": map[string]any{"a": []any{1, "x", nil, true, map[string]any{}}}}
		data, err := json.Marshal(answer)
		if err != nil {
			t.Fatal(err)
		}
		if n%2 == 1 {
			var pretty bytes.Buffer
			_ = json.Indent(&pretty, data, "", "  ")
			data = pretty.Bytes()
		}
		want, err := reference(data)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(bytes.NewReader(data), nil)
		if err != nil {
			t.Fatalf("answer %d: %v\n%s", n, err, data)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("answer %d differs:\n got %#v\nwant %#v\n%s", n, got, want, data)
		}
		// Cut anywhere, it is an error, never a short answer.
		cut := data[:r.IntN(len(data))]
		if _, err := Decode(bytes.NewReader(cut), nil); err == nil {
			t.Fatalf("answer %d cut at %d decoded without an error", n, len(cut))
		}
	}
}

// Escapes encoding/json reads in its own way: surrogate pairs, lone surrogates, invalid UTF-8.
func TestDecodeBatchGetEscapes(t *testing.T) {
	for _, cell := range []string{`"\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`, `"\ude00\ud83d\ude00"`, `"a\u00e9\u20ac"`, "\"\xff\xfeok\"", `"\\\""`, `"\/"`, `"q\"q"`, `"` + strings.Repeat(`x\"`, 50000) + `"`} {
		data := []byte(`{"valueRanges":[{"values":[[` + cell + `]]}]}`)
		want, err := reference(data)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(bytes.NewReader(data), nil)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%.40s: got %q %v, want %q", cell, got, err, want)
		}
	}
	for _, bad := range []string{`{"valueRanges":[{"values":[[01]]}]}`, `{"valueRanges":[{"values":[[1.]]}]}`, `{"valueRanges":[{"values":[["a` + "\n" + `"]]}]}`,
		`{"valueRanges":[{"values":[[tru]]}]}`, `{"valueRanges":[{"values":[[1]]}]}x`, `{"valueRanges":[{"values":[["\x"]]}]}`, `{"valueRanges":[{"values":[[1,]]}]}`} {
		if _, err := Decode(strings.NewReader(bad), nil); err == nil {
			t.Errorf("%s decoded", bad)
		} else if _, rerr := reference([]byte(bad)); rerr == nil {
			t.Errorf("%s: encoding/json accepts it", bad)
		}
	}
}

// Progress is reported while a range is read, and its last report is its row count.
func TestDecodeBatchGetProgress(t *testing.T) {
	rows := make([][]any, 10_000)
	for i := range rows {
		rows[i] = []any{"m", float64(i)}
	}
	data, _ := json.Marshal(map[string]any{"valueRanges": []any{map[string]any{"values": rows}, map[string]any{}}})
	var reports [][2]int
	got, err := Decode(bytes.NewReader(data), func(i, n int) { reports = append(reports, [2]int{i, n}) })
	if err != nil || len(got) != 2 || len(got[0]) != 10_000 {
		t.Fatalf("%v %d", err, len(got))
	}
	if len(reports) < 3 || reports[0] != [2]int{0, ProgressEvery} || reports[len(reports)-1] != [2]int{0, 10_000} {
		t.Errorf("reports %v", reports)
	}
}

// hostileCase is an answer no Google server sends but a broken proxy, a cut connection or a
// hostile endpoint might, and what Decode must make of it: an error of kind want whose text
// says msg, or (want nil) exactly what encoding/json decodes.
type hostileCase struct {
	name string
	doc  string
	want error
	msg  string
}

func hostile() []hostileCase {
	cell := func(c string) string { return `{"valueRanges":[{"values":[[` + c + `]]}]}` }
	nested := func(depth int) string {
		return `{"valueRanges":[],"x":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`
	}
	return []hostileCase{
		{"an error page", `<html><body>502 Bad Gateway</body></html>`, ErrSyntax, `want '{', found '<'`},
		{"empty body", ``, io.ErrUnexpectedEOF, ""},
		{"valueRanges not an array", `{"valueRanges":{"values":[]}}`, ErrSyntax, `want '[', found '{'`},
		{"cells without a comma", cell(`"a" "b"`), ErrSyntax, "want , or ] in an array"},
		{"a key without a colon", `{"valueRanges" []}`, ErrSyntax, `want ':'`},
		{"a bare word", cell(`yes`), ErrSyntax, "want a value"},
		{"a NUL in a cell", cell("\"a\x00b\""), ErrSyntax, "control character in a string"},
		{"an escaped NUL in a cell", cell(`"a\u0000b"`), nil, ""},
		{"invalid UTF-8 in a cell", cell("\"ok\xff\xc3(\xed\xa0\x80\""), nil, ""},
		{"invalid UTF-8 in an escaped cell", cell("\"\\n\xff\""), nil, ""},
		{"cut in a string", `{"valueRanges":[{"values":[["hello`, io.ErrUnexpectedEOF, ""},
		{"cut in a number", `{"valueRanges":[{"values":[[12`, io.ErrUnexpectedEOF, ""},
		{"cut in a literal", `{"valueRanges":[{"values":[[tr`, io.ErrUnexpectedEOF, ""},
		{"cut after a comma", `{"valueRanges":[{"values":[["a"],`, io.ErrUnexpectedEOF, ""},
		{"cut in a skipped key", `{"spreadsheetId":"s1","valueRanges":[{"range":"Inbox!A1`, io.ErrUnexpectedEOF, ""},
		{"nested to the limit", nested(MaxDepth), nil, ""},
		{"nested past the limit", nested(MaxDepth + 1), ErrSyntax, "nested deeper than 10000"},
		{"nested a million deep", nested(1_000_000), ErrSyntax, "nested deeper than 10000"},
	}
}

// A malformed, cut or hostile answer is an error that says what was wrong, of a kind the
// store can tell (ErrSyntax, or io.ErrUnexpectedEOF for an answer that ended early), and
// never a short answer; nesting is bounded as encoding/json bounds it, so a skipped value
// nested a million deep is refused at once rather than followed down. What encoding/json
// reads (an escaped NUL, invalid UTF-8 as U+FFFD) Decode reads the same.
func TestDecodeHostile(t *testing.T) {
	for _, c := range hostile() {
		t.Run(c.name, func(t *testing.T) {
			got, err := Decode(strings.NewReader(c.doc), nil)
			want, rerr := reference([]byte(c.doc))
			if c.want == nil {
				if err != nil || rerr != nil || !reflect.DeepEqual(got, want) {
					t.Fatalf("got %q %v, want %q %v (encoding/json)", got, err, want, rerr)
				}
				return
			}
			if !errors.Is(err, c.want) || !strings.Contains(fmt.Sprint(err), c.msg) || got != nil {
				t.Errorf("got %q, err %v: want an error of %v saying %q", got, err, c.want, c.msg)
			}
			if rerr == nil {
				t.Errorf("encoding/json accepts it")
			}
		})
	}
}

// A body whose read fails mid-answer hands that failure on, not a short answer.
func TestDecodeReadError(t *testing.T) {
	broken := errors.New("connection reset by the test")
	body := io.MultiReader(strings.NewReader(`{"valueRanges":[{"values":[["a"],["b"`), iotest.ErrReader(broken))
	if got, err := Decode(body, nil); !errors.Is(err, broken) || got != nil {
		t.Errorf("got %q, err %v: want the read's error", got, err)
	}
}

// FuzzDecodeBatchGet: the streaming decoder never accepts invalid JSON, agrees with
// encoding/json wherever both decode, and fails only with a syntax or truncation error. Its
// seeds (run by every `go test`, no -fuzz needed) are answers of each shape and each hostile
// kind the tests above name: malformed, a NUL or invalid UTF-8 in a cell, cut short, nested
// past MaxDepth.
func FuzzDecodeBatchGet(f *testing.F) {
	f.Add([]byte(`{"valueRanges":[{"values":[["a",1,true,null,"\u00e9"]]}]}`))
	f.Add([]byte(`{"spreadsheetId":"x","valueRanges":[{"range":"A","values":[[],["\ud83d\ude00"]]},{}]}`))
	for _, h := range hostile() {
		f.Add([]byte(h.doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Decode(bytes.NewReader(data), nil)
		if err == nil && !json.Valid(data) {
			t.Fatalf("decoded invalid JSON: %q", data)
		}
		want, rerr := reference(data)
		// encoding/json also matches keys regardless of case and refuses a known key of
		// another type; Google's answers have neither, and the reader skips what it doesn't
		// read: compare where the keys are spelled exactly.
		exact := bytes.Count(bytes.ToLower(data), []byte(`"values`)) == bytes.Count(data, []byte(`"values`)) &&
			bytes.Count(bytes.ToLower(data), []byte(`"valueranges`)) == bytes.Count(data, []byte(`"valueRanges`))
		if err == nil && rerr == nil && exact && !reflect.DeepEqual(got, want) {
			t.Fatalf("differs: got %#v want %#v", got, want)
		}
		if err != nil && !errors.Is(err, ErrSyntax) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("error of another kind: %v", err)
		}
	})
}

// BenchmarkDecodeValues100k decodes one 100,000-row batchGet answer (~15 MB of JSON, as the
// emulator and Google send it) the way the sheets/v4 client's Do does (the body read whole,
// then encoding/json into its struct: gensupport.DecodeResponseBytes) and the way the store
// does (Decode, as the body arrives). Both in one run: compare them by ratio.
//
//	go test -run '^$' -bench DecodeValues100k -benchmem -count 5 ./sheets/internal/batchget/
func BenchmarkDecodeValues100k(b *testing.B) {
	rows := [][]any{{"Timestamp", "Name", "Email", "Message", "Status", "ID"}}
	for i := 1; i <= 100_000; i++ {
		rows = append(rows, []any{45000.0 + float64(i)/24, "Person " + itoaTest(i), "p" + itoaTest(i) + "@example.com", "hello " + itoaTest(i) + " \u00e9 \"quoted\"", "new", "m" + itoaTest(i)})
	}
	data, err := json.Marshal(map[string]any{"spreadsheetId": "s", "valueRanges": []any{map[string]any{"range": "Inbox!A1:F100001", "majorDimension": "ROWS", "values": rows}}})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("client", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			body, _ := io.ReadAll(bytes.NewReader(data))
			var resp sheetsapi.BatchGetValuesResponse
			if err := json.Unmarshal(body, &resp); err != nil || len(resp.ValueRanges[0].Values) != len(rows) {
				b.Fatal(err)
			}
		}
	})
	b.Run("streaming", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			got, err := Decode(bytes.NewReader(data), nil)
			if err != nil || len(got[0]) != len(rows) {
				b.Fatal(err)
			}
		}
	})
}

func itoaTest(i int) string { return strconv.Itoa(i) }
