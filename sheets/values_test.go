package sheets

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

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
		got, err := decodeBatchGet(bytes.NewReader(data), nil)
		if err != nil {
			t.Fatalf("answer %d: %v\n%s", n, err, data)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("answer %d differs:\n got %#v\nwant %#v\n%s", n, got, want, data)
		}
		// Cut anywhere, it is an error, never a short answer.
		cut := data[:r.IntN(len(data))]
		if _, err := decodeBatchGet(bytes.NewReader(cut), nil); err == nil {
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
		got, err := decodeBatchGet(bytes.NewReader(data), nil)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%.40s: got %q %v, want %q", cell, got, err, want)
		}
	}
	for _, bad := range []string{`{"valueRanges":[{"values":[[01]]}]}`, `{"valueRanges":[{"values":[[1.]]}]}`, `{"valueRanges":[{"values":[["a` + "\n" + `"]]}]}`,
		`{"valueRanges":[{"values":[[tru]]}]}`, `{"valueRanges":[{"values":[[1]]}]}x`, `{"valueRanges":[{"values":[["\x"]]}]}`, `{"valueRanges":[{"values":[[1,]]}]}`} {
		if _, err := decodeBatchGet(strings.NewReader(bad), nil); err == nil {
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
	got, err := decodeBatchGet(bytes.NewReader(data), func(i, n int) { reports = append(reports, [2]int{i, n}) })
	if err != nil || len(got) != 2 || len(got[0]) != 10_000 {
		t.Fatalf("%v %d", err, len(got))
	}
	if len(reports) < 3 || reports[0] != [2]int{0, progressEvery} || reports[len(reports)-1] != [2]int{0, 10_000} {
		t.Errorf("reports %v", reports)
	}
}

// FuzzDecodeBatchGet: the streaming decoder never accepts invalid JSON, agrees with
// encoding/json wherever both decode, and fails only with a syntax or truncation error.
func FuzzDecodeBatchGet(f *testing.F) {
	f.Add([]byte(`{"valueRanges":[{"values":[["a",1,true,null,"\u00e9"]]}]}`))
	f.Add([]byte(`{"spreadsheetId":"x","valueRanges":[{"range":"A","values":[[],["\ud83d\ude00"]]},{}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeBatchGet(bytes.NewReader(data), nil)
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
		if err != nil && !errors.Is(err, errSyntax) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("error of another kind: %v", err)
		}
	})
}

// BenchmarkDecodeValues100k decodes one 100,000-row batchGet answer (~15 MB of JSON, as the
// emulator and Google send it) the way the sheets/v4 client's Do does (the body read whole,
// then encoding/json into its struct: gensupport.DecodeResponseBytes) and the way the store
// does (decodeBatchGet, as the body arrives). Both in one run: compare them by ratio.
//
//	go test -run '^$' -bench DecodeValues100k -benchmem -count 5 ./sheets/
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
			got, err := decodeBatchGet(bytes.NewReader(data), nil)
			if err != nil || len(got[0]) != len(rows) {
				b.Fatal(err)
			}
		}
	})
}

func itoaTest(i int) string { return strconv.Itoa(i) }
