package emulator

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// The conformance runner replays real traffic Google answered (gspread's recorded test
// cassettes, vendored under testdata/gspread with their licence) against the emulator over
// HTTP, a fresh emulator per cassette, and compares each answer with Google's: the status,
// and the fields a client reads (ranges, values, counts, sheet properties, reply kinds, an
// error's code and status). A spreadsheet Drive created in the recording is created with
// spreadsheets.create; spreadsheet and sheet IDs are mapped both ways.
//
// Each request ends in one class:
//   - matched: answered as Google answered;
//   - refused: 501, the emulator saying what it doesn't do;
//   - diverged: answered otherwise after an earlier write of the same cassette was refused,
//     so the workbook differs from Google's by what was refused (merged cells, a named range);
//   - silent: answered 2xx where Google's answer differs (a different content, or an error
//     Google gave), the one thing an emulator must never do;
//   - wrong: an error other than 501 where Google answered otherwise;
//   - outside: answered otherwise on a spreadsheet the recording didn't create (another
//     account's, one a refused Drive call made), which isn't there to compare.
//
// The test fails on any silent or wrong answer, and when the figure per method differs from
// testdata/gspread/figure.txt (-update writes it).

var updateFigure = flag.Bool("update", false, "rewrite testdata/gspread/figure.txt")

// cassette is a VCR recording: gspread's format, with its headers dropped.
type cassette struct {
	Interactions []struct {
		Request struct {
			Method string  `json:"method"`
			URI    string  `json:"uri"`
			Body   *string `json:"body"`
		} `json:"request"`
		Response struct {
			Status struct {
				Code int `json:"code"`
			} `json:"status"`
			Body struct {
				String string `json:"string"`
			} `json:"body"`
		} `json:"response"`
	} `json:"interactions"`
}

// Conformance classes, in the figure's column order.
const (
	classMatched  = "matched"
	classRefused  = "refused"
	classDiverged = "diverged"
	classSilent   = "silent"
	classWrong    = "wrong"
	classOutside  = "outside"
)

var classes = []string{classMatched, classRefused, classDiverged, classOutside, classSilent, classWrong}

// outcome is one replayed request's class, and what differed.
type outcome struct {
	cassette string
	index    int
	method   string // the emulator's method name, or the Drive method
	class    string
	diff     string
}

func TestConformanceWithRecordedGoogleTraffic(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "gspread", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cassettes under testdata/gspread: %v", err)
	}
	var all []outcome
	harness := 0
	for _, f := range files {
		outs, h := replayCassette(t, f)
		all = append(all, outs...)
		harness += h
	}
	for _, o := range all {
		switch o.class {
		case classSilent, classWrong:
			t.Errorf("%s #%d %s: %s\n%s", o.cassette, o.index, o.method, o.class, o.diff)
		case classDiverged, classRefused, classOutside:
			if testing.Verbose() {
				t.Logf("%s #%d %s: %s\n%s", o.cassette, o.index, o.method, o.class, o.diff)
			}
		}
	}
	got := figure(all, len(files), harness)
	path := filepath.Join("testdata", "gspread", "figure.txt")
	if *updateFigure {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if string(want) != got {
		t.Errorf("the conformance figure changed (run with -update and review the diff):\n--- %s\n%s--- now\n%s", path, want, got)
	}
}

// figure tabulates outcomes per method and in total.
func figure(all []outcome, cassettes, harness int) string {
	per := map[string]map[string]int{}
	total := map[string]int{}
	for _, o := range all {
		if per[o.method] == nil {
			per[o.method] = map[string]int{}
		}
		per[o.method][o.class]++
		total[o.class]++
	}
	methods := make([]string, 0, len(per))
	for m := range per {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	var b strings.Builder
	fmt.Fprintf(&b, "# gspread's recorded Google traffic replayed against the emulator (TestConformanceWithRecordedGoogleTraffic)\n")
	fmt.Fprintf(&b, "# %d cassettes, %d requests compared; %d Drive creates and deletes of a spreadsheet done by the runner\n", cassettes, len(all), harness)
	fmt.Fprintf(&b, "%-28s", "method")
	for _, c := range classes {
		fmt.Fprintf(&b, " %8s", c)
	}
	b.WriteString("\n")
	row := func(name string, n map[string]int) {
		fmt.Fprintf(&b, "%-28s", name)
		for _, c := range classes {
			fmt.Fprintf(&b, " %8d", n[c])
		}
		b.WriteString("\n")
	}
	for _, m := range methods {
		row(m, per[m])
	}
	row("total", total)
	return b.String()
}

// replay is one cassette's run: the emulator, and the IDs mapped between recording and
// emulator.
type replay struct {
	t       *testing.T
	srv     *httptest.Server
	books   map[string]string          // recorded spreadsheet ID → the emulator's
	ids     map[string]map[int64]int64 // per ID field (sheetId, protectedRangeId): recorded → the emulator's
	refused bool                       // a request of this cassette was refused: the workbooks differ
}

func replayCassette(t *testing.T, path string) ([]outcome, int) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c cassette
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	srv := httptest.NewServer(New())
	defer srv.Close()
	rp := &replay{t: t, srv: srv, books: map[string]string{}, ids: map[string]map[int64]int64{"sheetId": {}, "protectedRangeId": {}}}
	name := strings.TrimSuffix(filepath.Base(path), ".json")
	var outs []outcome
	harness := 0
	for i, it := range c.Interactions {
		body := ""
		if it.Request.Body != nil {
			body = *it.Request.Body
		}
		u, err := url.Parse(it.Request.URI)
		if err != nil {
			t.Fatalf("%s #%d: %v", name, i, err)
		}
		if rp.harness(it.Request.Method, u, body, it.Response.Body.String) {
			harness++
			continue
		}
		o := rp.compare(it.Request.Method, u, body, it.Response.Status.Code, it.Response.Body.String)
		o.cassette, o.index = name, i
		if o.class == classRefused && it.Request.Method != http.MethodGet {
			rp.refused = true // a refused read changes nothing; a refused write leaves the workbook unlike Google's
		}
		outs = append(outs, o)
	}
	return outs, harness
}

// harness performs a recorded Drive create or delete of a spreadsheet, which the emulator
// doesn't serve as Drive calls: a create is a spreadsheets.create of the same title, mapped to
// the recorded ID; a delete forgets the mapping. It reports whether the request was one.
func (rp *replay) harness(method string, u *url.URL, body, answer string) bool {
	if u.Host != "www.googleapis.com" {
		return false
	}
	switch {
	case method == http.MethodPost && u.Path == "/drive/v3/files":
		var in struct{ Name, MimeType string }
		var out struct{ ID string }
		if json.Unmarshal([]byte(body), &in) != nil || in.MimeType != "application/vnd.google-apps.spreadsheet" ||
			json.Unmarshal([]byte(answer), &out) != nil || out.ID == "" {
			return false
		}
		req, _ := json.Marshal(map[string]any{"properties": map[string]any{"title": in.Name}})
		code, got := rp.send(http.MethodPost, "/v4/spreadsheets", "", string(req))
		var created struct {
			SpreadsheetID string `json:"spreadsheetId"`
		}
		if code != http.StatusOK || json.Unmarshal(got, &created) != nil {
			rp.t.Fatalf("creating a spreadsheet for %q: %d %s", in.Name, code, got)
		}
		rp.books[out.ID] = created.SpreadsheetID
		return true
	case method == http.MethodDelete && strings.HasPrefix(u.Path, "/drive/v3/files/"):
		delete(rp.books, strings.TrimPrefix(u.Path, "/drive/v3/files/"))
		return true
	}
	return false
}

// send sends one request to the emulator and returns its status and body.
func (rp *replay) send(method, path, rawQuery, body string) (int, []byte) {
	u := rp.srv.URL + path
	if rawQuery != "" {
		u += "?" + rawQuery
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		rp.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := rp.srv.Client().Do(req)
	if err != nil {
		rp.t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		rp.t.Fatal(err)
	}
	return resp.StatusCode, got
}

// compare replays one recorded request and classifies the emulator's answer.
func (rp *replay) compare(method string, u *url.URL, body string, wantCode int, wantBody string) outcome {
	path := u.EscapedPath()
	if u.Host == "www.googleapis.com" && !strings.HasPrefix(path, "/drive/") && !strings.HasPrefix(path, "/upload/") {
		rp.t.Fatalf("a recorded request to %s the runner doesn't know", u)
	}
	path = rp.mapIDs(path)
	query := rp.mapIDs(u.RawQuery)
	body = rp.mapBody(rp.mapIDs(body))
	code, got := rp.send(method, path, query, body)
	m := methodOf(method, u)
	o := outcome{method: m}

	var want, have any
	if err := decodeNumbers([]byte(rp.mapIDs(wantBody)), &want); err != nil {
		want = wantBody // an export's CSV: compared as text
	}
	if err := decodeNumbers(got, &have); err != nil {
		rp.t.Fatalf("%s: the emulator's answer is not JSON: %v\n%s", m, err, got)
	}
	want = rp.mapSheets(want)
	if code/100 == 2 && wantCode/100 == 2 {
		rp.learnSheets(want, have)
		rp.learnReplies(want, have)
		want = rp.mapSheets(want)
	}
	spec := specFor(m)
	if code >= 300 || wantCode >= 300 {
		spec = errorSpec
	}
	pw, ph := project(want, spec), project(have, spec)
	if code == wantCode && reflect.DeepEqual(pw, ph) {
		o.class = classMatched
		return o
	}
	// Each answer shown as compared: an error's code and status, else the method's fields.
	shown := func(code int, v any) string {
		if code >= 300 {
			return clip(project(v, errorSpec))
		}
		return clip(project(v, specFor(m)))
	}
	o.diff = fmt.Sprintf("%s %s\nGoogle %d: %s\nemulator %d: %s", method, u.RequestURI(), wantCode, shown(wantCode, want), code, shown(code, have))
	switch {
	case code == http.StatusNotImplemented:
		o.class = classRefused
		o.diff = errorMessage(have) + "\n" + o.diff
		if msg := errorMessage(have); !strings.Contains(msg, "not emulated") && !strings.Contains(msg, "emulator") {
			o.class, o.diff = classWrong, "a 501 that doesn't say what isn't emulated: "+msg+"\n"+o.diff
		}
	case !rp.known(u.EscapedPath()):
		o.class = classOutside
	case rp.refused:
		o.class = classDiverged
	case code/100 == 2:
		o.class = classSilent
	default:
		o.class = classWrong
	}
	return o
}

// known reports whether a recorded request's path names a spreadsheet the recording created
// (and hasn't deleted), or none.
func (rp *replay) known(path string) bool {
	for _, prefix := range []string{"/v4/spreadsheets/", "/drive/v3/files/"} {
		if rest, ok := strings.CutPrefix(path, prefix); ok {
			id := rest[:strings.IndexFunc(rest+"/", func(r rune) bool { return r == '/' || r == ':' })]
			_, ok := rp.books[id]
			return ok
		}
	}
	return true
}

// mapIDs replaces each recorded spreadsheet ID in s with the emulator's.
func (rp *replay) mapIDs(s string) string {
	for rec, emu := range rp.books {
		s = strings.ReplaceAll(s, rec, emu)
	}
	return s
}

// mapBody maps the recorded sheet IDs in a JSON request body to the emulator's.
func (rp *replay) mapBody(body string) string {
	if body == "" {
		return body
	}
	var v any
	if decodeNumbers([]byte(body), &v) != nil {
		return body // sent as recorded: the emulator answers it as it would
	}
	out, err := json.Marshal(rp.mapSheets(v))
	if err != nil {
		rp.t.Fatal(err)
	}
	return string(out)
}

// mapSheets replaces every recorded sheetId and protectedRangeId in v with the emulator's.
func (rp *replay) mapSheets(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if ids, ok := rp.ids[k]; ok {
				if n, ok := asInt(e); ok {
					if m, ok := ids[n]; ok {
						x[k] = json.Number(fmt.Sprint(m))
					}
					continue
				}
			}
			x[k] = rp.mapSheets(e)
		}
	case []any:
		for i := range x {
			x[i] = rp.mapSheets(x[i])
		}
	}
	return v
}

// learnReplies maps the protected range IDs Google chose to the emulator's, pairing the
// replies of a batchUpdate by index.
func (rp *replay) learnReplies(want, have any) {
	wr, _ := want.(map[string]any)["replies"].([]any)
	hr, _ := have.(map[string]any)["replies"].([]any)
	for i := range min(len(wr), len(hr)) {
		w, _ := wr[i].(map[string]any)["addProtectedRange"].(map[string]any)
		h, _ := hr[i].(map[string]any)["addProtectedRange"].(map[string]any)
		wp, _ := w["protectedRange"].(map[string]any)
		hp, _ := h["protectedRange"].(map[string]any)
		wid, ok1 := asInt(wp["protectedRangeId"])
		hid, ok2 := asInt(hp["protectedRangeId"])
		if ok1 && ok2 {
			rp.ids["protectedRangeId"][wid] = hid
		}
	}
}

// learnSheets maps the sheet IDs Google chose to those the emulator chose, pairing the
// sheets of two answers by title (a spreadsheet, an updated spreadsheet, an addSheet reply).
func (rp *replay) learnSheets(want, have any) {
	wt, ht := map[string]int64{}, map[string]int64{}
	collectSheets(want, wt)
	collectSheets(have, ht)
	for title, w := range wt {
		if h, ok := ht[title]; ok {
			if _, known := rp.ids["sheetId"][w]; !known {
				rp.ids["sheetId"][w] = h
			}
		}
	}
}

// collectSheets finds every sheet properties object (one with a sheetId and a title) in v.
func collectSheets(v any, into map[string]int64) {
	switch x := v.(type) {
	case map[string]any:
		if title, ok := x["title"].(string); ok {
			if id, ok := asInt(x["sheetId"]); ok {
				into[title] = id
			}
		}
		for _, e := range x {
			collectSheets(e, into)
		}
	case []any:
		for _, e := range x {
			collectSheets(e, into)
		}
	}
}

func asInt(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return i, err == nil
}

func decodeNumbers(b []byte, v any) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

func errorMessage(v any) string {
	m, _ := v.(map[string]any)
	e, _ := m["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

func clip(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 1500 {
		return string(b[:1500]) + "…"
	}
	return string(b)
}

// methodOf names the method a recorded request calls, as the emulator counts it (the Drive
// calls by Drive's names).
func methodOf(method string, u *url.URL) string {
	p := u.Path
	switch {
	case strings.HasPrefix(p, "/upload/drive/"):
		return "drive.files.update (upload)"
	case p == "/drive/v3/files" && method == http.MethodGet:
		return "drive.files.list"
	case strings.HasSuffix(p, "/copy"):
		return "drive.files.copy"
	case strings.HasSuffix(p, "/export"):
		return "drive.files.export"
	case strings.HasSuffix(p, "/comments"):
		return "drive.comments.list"
	case strings.HasPrefix(p, "/drive/v3/files/") && method == http.MethodGet:
		return MethodDriveGet
	}
	seg := p[strings.LastIndex(p, "/")+1:]
	switch {
	case strings.HasSuffix(p, "/values:batchGet"):
		return MethodValuesBatchGet
	case strings.HasSuffix(p, "/values:batchUpdate"):
		return MethodValuesBatchUpdate
	case strings.HasSuffix(p, "/values:batchClear"):
		return MethodValuesBatchClear
	case strings.Contains(p, "/values/") && strings.HasSuffix(seg, ":append"):
		return MethodValuesAppend
	case strings.Contains(p, "/values/") && strings.HasSuffix(seg, ":clear"):
		return MethodValuesClear
	case strings.Contains(p, "/values/") && method == http.MethodPut:
		return MethodValuesUpdate
	case strings.Contains(p, "/values/"):
		return MethodValuesGet
	case strings.HasSuffix(p, ":batchUpdate"):
		return MethodBatchUpdate
	case method == http.MethodGet:
		return MethodGet
	}
	return method + " " + p
}

// keep is a projection: the fields kept, each with its own projection (nil keeps all of it;
// "*" stands for every field not named); arrays are projected element by element.
type keep map[string]keep

func project(v any, k keep) any {
	if k == nil {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for f, e := range x {
			sub, ok := k[f]
			if !ok {
				sub, ok = k["*"]
			}
			if ok {
				out[f] = project(e, sub)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = project(e, k)
		}
		return out
	}
	return v
}

// The fields compared, per method: what triage or another client reads.
var (
	errorSpec = keep{"error": {"code": nil, "status": nil}}
	rangeSpec = keep{"range": nil, "majorDimension": nil, "values": nil}
	cellSpec  = keep{"userEnteredValue": nil, "effectiveValue": nil, "formattedValue": nil, "note": nil}
	// A protected range without its editors: Google lists the Google accounts that may edit
	// it (the recording's own service account), which a replay has no way to be.
	protectedSpec = keep{"protectedRangeId": nil, "range": nil, "description": nil, "warningOnly": nil,
		"requestingUserCanEdit": nil, "unprotectedRanges": nil, "namedRangeId": nil}
	bookSpec = keep{
		"spreadsheetId": nil,
		"properties":    {"title": nil},
		"namedRanges":   nil,
		"sheets": {
			"properties":      nil,
			"merges":          nil,
			"protectedRanges": protectedSpec,
			"basicFilter":     nil,
			"data": {
				"startRow": nil, "startColumn": nil,
				"rowData": {"values": cellSpec},
			},
		},
	}
	updateSpec = keep{"spreadsheetId": nil, "updatedRange": nil, "updatedRows": nil, "updatedColumns": nil, "updatedCells": nil, "updatedData": rangeSpec}
	specs      = map[string]keep{
		MethodGet: bookSpec,
		MethodBatchUpdate: {"spreadsheetId": nil, "updatedSpreadsheet": bookSpec,
			"replies": {"addSheet": nil, "addProtectedRange": {"protectedRange": protectedSpec}, "*": nil}},
		MethodValuesGet:      rangeSpec,
		MethodValuesBatchGet: {"spreadsheetId": nil, "valueRanges": rangeSpec},
		MethodValuesUpdate:   updateSpec,
		MethodValuesAppend:   {"spreadsheetId": nil, "tableRange": nil, "updates": updateSpec},
		MethodValuesBatchUpdate: {"spreadsheetId": nil, "totalUpdatedRows": nil, "totalUpdatedColumns": nil,
			"totalUpdatedCells": nil, "totalUpdatedSheets": nil, "responses": updateSpec},
		MethodValuesClear:      {"spreadsheetId": nil, "clearedRange": nil},
		MethodValuesBatchClear: {"spreadsheetId": nil, "clearedRanges": nil},
		MethodDriveGet:         {"id": nil, "name": nil},
	}
)

// specFor is the projection compared for a method; a method the runner has none for is
// compared whole.
func specFor(m string) keep {
	if k, ok := specs[m]; ok {
		return k
	}
	return nil
}
