package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	sheets "google.golang.org/api/sheets/v4"

	a1notation "github.com/triage-dev/triage/internal/a1"
)

const bookID = "book1"

func testWorkbook() *Workbook {
	return &Workbook{
		SpreadsheetID: bookID,
		Title:         "Triage test",
		TimeZone:      "Europe/Paris",
		Sheets: []*Sheet{
			{Title: "failed calls", SheetID: 0, Rows: [][]any{
				{"timestamp", "source", "url", "payload", "error", "status"},
				{45000.5, "crm", "https://crm.example/hook", `{"id":"a1"}`, "", "dead"},
				{45001.25, "billing", "https://bill.example/x", `{"id":"b2"}`, "503", ""},
			}},
			{Title: "it's", SheetID: 7, Rows: [][]any{
				{"k", "v"},
				{"one", 1.0},
			}},
			{Title: "Inbox", SheetID: 3, Hidden: []int{5}, Validations: map[string][]string{"E": {"new", "read", "done"}}, Rows: [][]any{
				{"Timestamp", "Name", "Email", "Message", "Status", "ID"},
				{45002.0, "Ann", "ann@example.com", "hello", "new", "m1"},
				{45003.0, "Bob", "bob@example.com", "=HYPERLINK(\"x\")", "", "m2"},
			}},
			{Title: "Sparse", SheetID: 9, Rows: [][]any{
				{"a", "", nil},
				{},
				{nil, "b", "", nil},
				{nil, nil},
			}},
		},
	}
}

func newServer(t *testing.T) (*Emulator, *sheets.Service, *httptest.Server) {
	t.Helper()
	e := New()
	e.AddWorkbook(testWorkbook())
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	svc, err := sheets.NewService(context.Background(), option.WithEndpoint(srv.URL+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	return e, svc, srv
}

func apiErr(t *testing.T, err error) *googleapi.Error {
	t.Helper()
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		t.Fatalf("error %v (%T) is not a *googleapi.Error", err, err)
	}
	return ge
}

func TestLoadAndWriteQuotedTabs(t *testing.T) {
	e, svc, _ := newServer(t)
	res, err := svc.Spreadsheets.Values.BatchGet(bookID).Ranges("'failed calls'!A:F", "'it''s'!A1:B").Do()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ValueRanges) != 2 {
		t.Fatalf("got %d value ranges", len(res.ValueRanges))
	}
	if got := res.ValueRanges[0].Range; got != "'failed calls'!A1:F1000" {
		t.Errorf("range echoed %q", got)
	}
	if got := res.ValueRanges[1].Range; got != "'it''s'!A1:B1000" {
		t.Errorf("range echoed %q", got)
	}
	want := [][]any{{"timestamp", "source", "url", "payload", "error", "status"},
		{"45000.5", "crm", "https://crm.example/hook", `{"id":"a1"}`, "", "dead"},
		{"45001.25", "billing", "https://bill.example/x", `{"id":"b2"}`, "503"}}
	if got := res.ValueRanges[0].Values; !reflect.DeepEqual(got, want) {
		t.Errorf("values\n got %#v\nwant %#v", got, want)
	}

	up, err := svc.Spreadsheets.Values.Update(bookID, "'failed calls'!F2", &sheets.ValueRange{Values: [][]any{{"delivered"}}}).ValueInputOption("RAW").Do()
	if err != nil {
		t.Fatal(err)
	}
	if up.UpdatedRange != "'failed calls'!F2" || up.UpdatedCells != 1 {
		t.Errorf("update response %+v", up)
	}
	if got := e.Cells(bookID, "failed calls")[1][5]; got != "delivered" {
		t.Errorf("F2 = %v", got)
	}
	_, err = svc.Spreadsheets.Values.Update(bookID, "'it''s'!B3", &sheets.ValueRange{Values: [][]any{{"two"}}}).ValueInputOption("RAW").Do()
	if err != nil {
		t.Fatal(err)
	}
	vr, err := svc.Spreadsheets.Values.Get(bookID, "'it''s'!B3").Do()
	if err != nil {
		t.Fatal(err)
	}
	if vr.Range != "'it''s'!B3" || !reflect.DeepEqual(vr.Values, [][]any{{"two"}}) {
		t.Errorf("got %+v", vr)
	}
	// No sheet name: the first sheet.
	vr, err = svc.Spreadsheets.Values.Get(bookID, "B2").Do()
	if err != nil {
		t.Fatal(err)
	}
	if vr.Range != "'failed calls'!B2" || vr.Values[0][0] != "crm" {
		t.Errorf("got %+v", vr)
	}
	// Whole sheet, bounded to the grid.
	vr, err = svc.Spreadsheets.Values.Get(bookID, "Inbox").Do()
	if err != nil {
		t.Fatal(err)
	}
	if vr.Range != "Inbox!A1:Z1000" || len(vr.Values) != 3 {
		t.Errorf("got range %q, %d rows", vr.Range, len(vr.Values))
	}
}

func TestTrimming(t *testing.T) {
	_, svc, srv := newServer(t)
	vr, err := svc.Spreadsheets.Values.Get(bookID, "Sparse!A1:Z").Do()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{{"a"}, {}, {"", "b"}}
	if !reflect.DeepEqual(vr.Values, want) {
		t.Errorf("got %#v, want %#v", vr.Values, want)
	}
	// Column-major.
	vr, err = svc.Spreadsheets.Values.Get(bookID, "Sparse!A1:C5").MajorDimension("COLUMNS").Do()
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]any{{"a"}, {"", "", "b"}}; !reflect.DeepEqual(vr.Values, want) {
		t.Errorf("COLUMNS got %#v, want %#v", vr.Values, want)
	}
	// No data: no "values" key at all.
	vr, err = svc.Spreadsheets.Values.Get(bookID, "Sparse!D1:F9").Do()
	if err != nil {
		t.Fatal(err)
	}
	if vr.Values != nil {
		t.Errorf("empty range values %#v", vr.Values)
	}
	body := rawGet(t, srv.URL+"/v4/spreadsheets/"+bookID+"/values/Sparse%21D1%3AF9?prettyPrint=false", 200)
	if strings.Contains(body, "values") || !strings.Contains(body, `"range":"Sparse!D1:F9"`) {
		t.Errorf("raw body %s", body)
	}
	body = rawGet(t, srv.URL+"/v4/spreadsheets/"+bookID+"/values/Sparse?prettyPrint=false", 200)
	if want := `{"range":"Sparse!A1:Z1000","majorDimension":"ROWS","values":[["a"],[],["","b"]]}`; strings.TrimSpace(body) != want {
		t.Errorf("raw body\n got %s\nwant %s", body, want)
	}
}

func TestRenderOptions(t *testing.T) {
	e, svc, _ := newServer(t)
	if err := e.SetCell(bookID, "it's", 3, 0, true); err != nil {
		t.Fatal(err)
	}
	get := func(opt string) [][]any {
		vr, err := svc.Spreadsheets.Values.Get(bookID, "'it''s'!A2:B3").ValueRenderOption(opt).Do()
		if err != nil {
			t.Fatal(err)
		}
		return vr.Values
	}
	if got, want := get("FORMATTED_VALUE"), [][]any{{"one", "1"}, {"TRUE"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("FORMATTED got %#v", got)
	}
	if got, want := get("UNFORMATTED_VALUE"), [][]any{{"one", 1.0}, {true}}; !reflect.DeepEqual(got, want) {
		t.Errorf("UNFORMATTED got %#v", got)
	}
	_, err := svc.Spreadsheets.Values.Get(bookID, "A1").ValueRenderOption("PRETTY").Do()
	if ge := apiErr(t, err); ge.Code != 400 || !strings.Contains(ge.Message, "value_render_option") {
		t.Errorf("got %v", ge)
	}
}

func TestRawVersusUserEntered(t *testing.T) {
	e, svc, _ := newServer(t)
	write := func(rng, opt string, vals ...any) {
		t.Helper()
		_, err := svc.Spreadsheets.Values.Update(bookID, rng, &sheets.ValueRange{Values: [][]any{vals}}).ValueInputOption(opt).Do()
		if err != nil {
			t.Fatal(err)
		}
	}
	write("'it''s'!A5", "RAW", "=1+1", "42", "TRUE", "- item")
	write("'it''s'!A6", "USER_ENTERED", "=1+1", "42", "TRUE", "- item", "'=2+2", "hello")
	if e.Formula(bookID, "it's", 5, 0) {
		t.Error("RAW =1+1 became a formula")
	}
	if !e.Formula(bookID, "it's", 6, 0) {
		t.Error("USER_ENTERED =1+1 is not a formula")
	}
	if !e.Formula(bookID, "it's", 6, 3) {
		t.Error(`USER_ENTERED "- item" is not a formula`)
	}
	if e.Formula(bookID, "it's", 6, 4) {
		t.Error(`USER_ENTERED "'=2+2" became a formula`)
	}
	get := func(rng string) [][]any {
		t.Helper()
		vr, err := svc.Spreadsheets.Values.Get(bookID, rng).ValueRenderOption("UNFORMATTED_VALUE").Do()
		if err != nil {
			t.Fatal(err)
		}
		return vr.Values
	}
	if got, want := get("'it''s'!A5:F5"), [][]any{{"=1+1", "42", "TRUE", "- item"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("RAW row: got %#v, want %#v", got, want)
	}
	if got, want := get("'it''s'!B6:C6"), [][]any{{42.0, true}}; !reflect.DeepEqual(got, want) {
		t.Errorf("USER_ENTERED values: got %#v, want %#v", got, want)
	}
	if got, want := get("'it''s'!E6:F6"), [][]any{{"=2+2", "hello"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("USER_ENTERED text: got %#v, want %#v", got, want)
	}
	// A formula's value is what Google computes: the emulator computes arithmetic on numbers
	// (=1+1 is 2) and refuses the value of any other formula ("- item", typed, is the
	// formula =- item, an error in Sheets) rather than answer its text as its value.
	if got, want := get("'it''s'!A6"), [][]any{{2.0}}; !reflect.DeepEqual(got, want) {
		t.Errorf("=1+1: got %#v, want %#v", got, want)
	}
	_, err := svc.Spreadsheets.Values.Get(bookID, "'it''s'!A5:F6").ValueRenderOption("UNFORMATTED_VALUE").Do()
	if ge := apiErr(t, err); ge.Code != 501 || !strings.Contains(ge.Message, "'it''s'!D6") || !strings.Contains(ge.Message, "valueRenderOption=FORMULA") {
		t.Errorf("a formula's value: %v", err)
	}
	vr, err := svc.Spreadsheets.Values.Get(bookID, "'it''s'!A5:A6").ValueRenderOption("FORMULA").Do()
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]any{{"=1+1"}, {"=1+1"}}; !reflect.DeepEqual(vr.Values, want) {
		t.Errorf("FORMULA got %#v", vr.Values)
	}
	wb := e.Workbook(bookID)
	if f := wb.Sheets[1].Formulas; !reflect.DeepEqual(f, []string{"A6", "D6"}) {
		t.Errorf("Formulas = %v", f)
	}
}

func TestNullLeavesCellEmptyStringClears(t *testing.T) {
	e, svc, _ := newServer(t)
	_, err := svc.Spreadsheets.Values.Update(bookID, "'failed calls'!A2:C2", &sheets.ValueRange{Values: [][]any{{nil, "", "u"}}}).ValueInputOption("RAW").Do()
	if err != nil {
		t.Fatal(err)
	}
	row := e.Cells(bookID, "failed calls")[1]
	if row[0] != 45000.5 || row[1] != nil || row[2] != "u" {
		t.Errorf("row 2 = %#v", row)
	}
}

func TestValueInputOption(t *testing.T) {
	e, svc, _ := newServer(t)
	vr := &sheets.ValueRange{Values: [][]any{{"x"}}}
	_, err := svc.Spreadsheets.Values.Update(bookID, "Inbox!A9", vr).Do()
	ge := apiErr(t, err)
	if ge.Code != 400 || ge.Message != "'valueInputOption' is required but not specified" {
		t.Errorf("got %d %q", ge.Code, ge.Message)
	}
	if c := e.Cells(bookID, "Inbox"); len(c) != 3 {
		t.Errorf("a rejected write changed the sheet: %d rows", len(c))
	}
	if _, err := svc.Spreadsheets.Values.Update(bookID, "Inbox!A9", vr).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Spreadsheets.Values.Append(bookID, "Inbox!A:F", vr).ValueInputOption("USER_ENTERED").Do(); err != nil {
		t.Fatal(err)
	}
	_, err = svc.Spreadsheets.Values.BatchUpdate(bookID, &sheets.BatchUpdateValuesRequest{
		ValueInputOption: "RAW", Data: []*sheets.ValueRange{{Range: "Inbox!B9", Values: [][]any{{"y"}}}},
	}).Do()
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.Spreadsheets.Values.BatchUpdate(bookID, &sheets.BatchUpdateValuesRequest{
		ValueInputOption: "BOGUS", Data: []*sheets.ValueRange{{Range: "Inbox!B9", Values: [][]any{{"y"}}}},
	}).Do()
	if ge := apiErr(t, err); ge.Code != 400 || !strings.Contains(ge.Message, `"BOGUS"`) {
		t.Errorf("got %v", ge)
	}
	want := []string{"", "RAW", "USER_ENTERED", "RAW", "BOGUS"}
	if got := e.ValueInputOptions(); !reflect.DeepEqual(got, want) {
		t.Errorf("ValueInputOptions = %q, want %q", got, want)
	}
}

func TestCellLimit(t *testing.T) {
	e, svc, _ := newServer(t)
	ok := strings.Repeat("é", MaxCellChars)
	if _, err := svc.Spreadsheets.Values.Update(bookID, "Inbox!D2", &sheets.ValueRange{Values: [][]any{{ok}}}).ValueInputOption("RAW").Do(); err != nil {
		t.Fatalf("50,000 characters: %v", err)
	}
	_, err := svc.Spreadsheets.Values.BatchUpdate(bookID, &sheets.BatchUpdateValuesRequest{
		ValueInputOption: "RAW",
		Data: []*sheets.ValueRange{
			{Range: "Inbox!E2", Values: [][]any{{"read"}}},
			{Range: "Inbox!D3", Values: [][]any{{ok + "x"}}},
		},
	}).Do()
	ge := apiErr(t, err)
	if ge.Code != 400 || ge.Message != "Your input contains more than the maximum of 50000 characters in a single cell." {
		t.Errorf("got %d %q", ge.Code, ge.Message)
	}
	if !strings.Contains(ge.Body, `"status":"INVALID_ARGUMENT"`) {
		t.Errorf("body %s", ge.Body)
	}
	// The batch is atomic: its valid part was not applied either.
	if got := e.Cells(bookID, "Inbox")[1][4]; got != "new" {
		t.Errorf("E2 = %v after a failed batch", got)
	}
}

func TestMissingTabFailsBatchGet(t *testing.T) {
	e, svc, _ := newServer(t)
	_, err := svc.Spreadsheets.Values.BatchGet(bookID).Ranges("Inbox!A:F", "Jobs!A:I").Do()
	ge := apiErr(t, err)
	if ge.Code != 400 || ge.Message != "Unable to parse range: Jobs!A:I" {
		t.Errorf("got %d %q", ge.Code, ge.Message)
	}
	for _, bad := range []string{"Inbox!A0", "'Inbox", "Inbox!A1:B2:C"} {
		_, err := svc.Spreadsheets.Values.Get(bookID, bad).Do()
		if ge := apiErr(t, err); ge.Code != 400 || ge.Message != "Unable to parse range: "+bad {
			t.Errorf("%q: got %d %q", bad, ge.Code, ge.Message)
		}
	}
	_, err = svc.Spreadsheets.Values.Get(bookID, "Inbox!A1001").Do()
	if ge := apiErr(t, err); ge.Code != 400 || ge.Message != "Range ('Inbox'!A1001) exceeds grid limits. Max rows: 1000, max columns: 26" {
		t.Errorf("got %d %q", ge.Code, ge.Message)
	}
	if n := e.Count(MethodValuesBatchGet); n != 1 {
		t.Errorf("batchGet count %d", n)
	}
}

func TestGoogleErrorBody(t *testing.T) {
	_, svc, srv := newServer(t)
	_, err := svc.Spreadsheets.Values.Get("nope", "A1").Do()
	ge := apiErr(t, err)
	if ge.Code != 404 || ge.Message != "Requested entity was not found." {
		t.Errorf("got %d %q", ge.Code, ge.Message)
	}
	if ct := ge.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q", ct)
	}
	var body struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Status  string `json:"status"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(ge.Body), &body); err != nil {
		t.Fatal(err)
	}
	if body.Error.Code != 404 || body.Error.Status != "NOT_FOUND" {
		t.Errorf("body %s", ge.Body)
	}
	// Unknown paths and methods answer a JSON 404 too.
	rawGet(t, srv.URL+"/v4/spreadsheets/"+bookID+"/bogus", 404)
	rawGet(t, srv.URL+"/v3/x", 404)
}

func TestInjectedFaults(t *testing.T) {
	e, svc, _ := newServer(t)
	e.InjectFault(Fault{Method: MethodValuesGet, Status: 429, Times: 2})
	e.InjectFault(Fault{Status: 503})
	for i := 0; i < 2; i++ {
		_, err := svc.Spreadsheets.Values.Get(bookID, "Inbox!A1").Do()
		ge := apiErr(t, err)
		if ge.Code != 429 || !strings.HasPrefix(ge.Message, "Quota exceeded for quota metric 'Read requests'") {
			t.Fatalf("attempt %d: got %d %q", i, ge.Code, ge.Message)
		}
		if !strings.Contains(ge.Body, "RESOURCE_EXHAUSTED") || len(ge.Details) == 0 {
			t.Errorf("body %s", ge.Body)
		}
	}
	// The 429 fault is used up; the any-method 503 is next.
	_, err := svc.Spreadsheets.Values.Get(bookID, "Inbox!A1").Do()
	if ge := apiErr(t, err); ge.Code != 503 || ge.Message != "The service is currently unavailable." || !strings.Contains(ge.Body, `"UNAVAILABLE"`) {
		t.Errorf("got %d %q", ge.Code, ge.Message)
	}
	vr, err := svc.Spreadsheets.Values.Get(bookID, "Inbox!A1").Do()
	if err != nil || vr.Values[0][0] != "Timestamp" {
		t.Fatalf("after the faults: %v %v", vr, err)
	}
	if n := e.Count(MethodValuesGet); n != 4 {
		t.Errorf("count %d, want 4 (faulted requests count)", n)
	}

	// A faulted write is not applied...
	e.InjectFault(Fault{Method: MethodValuesUpdate, Status: 500, Message: "boom"})
	_, err = svc.Spreadsheets.Values.Update(bookID, "Inbox!E2", &sheets.ValueRange{Values: [][]any{{"read"}}}).ValueInputOption("RAW").Do()
	if ge := apiErr(t, err); ge.Code != 500 || ge.Message != "boom" {
		t.Errorf("got %d %q", ge.Code, ge.Message)
	}
	if got := e.Cells(bookID, "Inbox")[1][4]; got != "new" {
		t.Errorf("faulted write applied: %v", got)
	}
	// ...unless After is set: the write happens, the client sees an error.
	e.InjectFault(Fault{Method: MethodValuesUpdate, Status: 503, After: true})
	_, err = svc.Spreadsheets.Values.Update(bookID, "Inbox!E2", &sheets.ValueRange{Values: [][]any{{"read"}}}).ValueInputOption("RAW").Do()
	if ge := apiErr(t, err); ge.Code != 503 {
		t.Errorf("got %d", ge.Code)
	}
	if got := e.Cells(bookID, "Inbox")[1][4]; got != "read" {
		t.Errorf("After fault: write not applied: %v", got)
	}
	for _, st := range []struct {
		code   int
		status string
	}{{403, "PERMISSION_DENIED"}, {404, "NOT_FOUND"}, {500, "INTERNAL"}, {401, "UNAUTHENTICATED"}} {
		e.InjectFault(Fault{Status: st.code})
		_, err := svc.Spreadsheets.Get(bookID).Do()
		if ge := apiErr(t, err); ge.Code != st.code || !strings.Contains(ge.Body, `"status":"`+st.status+`"`) {
			t.Errorf("%d: got %d %s", st.code, ge.Code, ge.Body)
		}
	}
}

func TestLatency(t *testing.T) {
	e, svc, _ := newServer(t)
	e.SetLatency(150 * time.Millisecond)
	start := time.Now()
	if _, err := svc.Spreadsheets.Values.Get(bookID, "Inbox!A1").Do(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("answered in %v", d)
	}
	// A request cancelled while waiting is not performed.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err := svc.Spreadsheets.Values.Update(bookID, "Inbox!E2", &sheets.ValueRange{Values: [][]any{{"spam"}}}).ValueInputOption("RAW").Context(ctx).Do()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
	time.Sleep(250 * time.Millisecond)
	if got := e.Cells(bookID, "Inbox")[1][4]; got != "new" {
		t.Errorf("cancelled write applied: %v", got)
	}
	// Concurrent requests wait concurrently: with a latency no test outlives, four requests
	// are all received (the wait holds no lock that would keep the next one out), however
	// slow the machine; then they are cancelled.
	e.SetLatency(time.Hour)
	e.ResetCounts()
	wctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := svc.Spreadsheets.Values.Get(bookID, "Inbox!A1").Context(wctx).Do(); !errors.Is(err, context.Canceled) {
				t.Errorf("a waiting request ended with %v, want it cancelled", err)
			}
		}()
	}
	if !until(t, func() bool { return e.Count(MethodValuesGet) == 4 }) {
		t.Errorf("%d of 4 concurrent requests were received while the first waited", e.Count(MethodValuesGet))
	}
	stop()
	wg.Wait()
}

// bearer sends every request with a bearer token, as a client with credentials does.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestQuota(t *testing.T) {
	e, svc, srv := newServer(t)
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	e.mu.Lock()
	e.now = func() time.Time { return now }
	e.mu.Unlock()
	e.SetQuotaPerMinute(2)
	read := func() error {
		_, err := svc.Spreadsheets.Values.BatchGet(bookID).Ranges("Inbox!A1").Do()
		return err
	}
	if err := read(); err != nil {
		t.Fatal(err)
	}
	if err := read(); err != nil {
		t.Fatal(err)
	}
	ge := apiErr(t, read())
	if ge.Code != 429 || !strings.HasPrefix(ge.Message, "Quota exceeded for quota metric 'Read requests' and limit 'Read requests per minute per user'") {
		t.Errorf("got %d %q", ge.Code, ge.Message)
	}
	// Writes have their own quota.
	for i := 0; i < 2; i++ {
		if _, err := svc.Spreadsheets.Values.Clear(bookID, "Sparse!A1", &sheets.ClearValuesRequest{}).Do(); err != nil {
			t.Fatal(err)
		}
	}
	_, err := svc.Spreadsheets.Values.Clear(bookID, "Sparse!A1", &sheets.ClearValuesRequest{}).Do()
	if ge := apiErr(t, err); ge.Code != 429 || !strings.Contains(ge.Message, "'Write requests'") {
		t.Errorf("got %d %q", ge.Code, ge.Message)
	}
	// Another credential has its own quota, as another user has on Google.
	other, err := sheets.NewService(context.Background(), option.WithEndpoint(srv.URL+"/"), option.WithHTTPClient(&http.Client{Transport: bearer{"ya29.other"}}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Spreadsheets.Values.BatchGet(bookID).Ranges("Inbox!A1").Do(); err != nil {
		t.Errorf("another credential's first read: %v", err)
	}
	e.mu.Lock()
	now = now.Add(61 * time.Second)
	e.mu.Unlock()
	if err := read(); err != nil {
		t.Errorf("after a minute: %v", err)
	}
	e.SetQuotaPerMinute(0)
	for i := 0; i < 5; i++ {
		if err := read(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCountsAndRequestLog(t *testing.T) {
	e, svc, srv := newServer(t)
	vr := func(v string) *sheets.ValueRange { return &sheets.ValueRange{Values: [][]any{{v}}} }
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(svc.Spreadsheets.Get(bookID).Do())
	must(svc.Spreadsheets.Values.Get(bookID, "Inbox!A1").Do())
	must(svc.Spreadsheets.Values.BatchGet(bookID).Ranges("Inbox!A1").Do())
	must(svc.Spreadsheets.Values.BatchGet(bookID).Ranges("Inbox!A2").Do())
	must(svc.Spreadsheets.Values.Update(bookID, "Sparse!A1", vr("x")).ValueInputOption("RAW").Do())
	must(svc.Spreadsheets.Values.Append(bookID, "Sparse!A:A", vr("y")).ValueInputOption("RAW").Do())
	must(svc.Spreadsheets.Values.BatchUpdate(bookID, &sheets.BatchUpdateValuesRequest{ValueInputOption: "RAW"}).Do())
	must(svc.Spreadsheets.Values.Clear(bookID, "Sparse!A1", &sheets.ClearValuesRequest{}).Do())
	must(svc.Spreadsheets.BatchUpdate(bookID, &sheets.BatchUpdateSpreadsheetRequest{}).Do())
	must(svc.Spreadsheets.Create(&sheets.Spreadsheet{}).Do())
	want := map[string]int{
		MethodGet: 1, MethodValuesGet: 1, MethodValuesBatchGet: 2, MethodValuesUpdate: 1, MethodValuesAppend: 1,
		MethodValuesBatchUpdate: 1, MethodValuesClear: 1, MethodBatchUpdate: 1, MethodCreate: 1,
	}
	if got := e.Counts(); !reflect.DeepEqual(got, want) {
		t.Errorf("Counts = %v\nwant %v", got, want)
	}
	if e.Count("values.batchGet") != 2 {
		t.Error("Count by string name")
	}
	reqs := e.Requests()
	if len(reqs) != 10 {
		t.Fatalf("%d requests logged", len(reqs))
	}
	if r := reqs[2]; r.Method != MethodValuesBatchGet || r.HTTPMethod != "GET" || r.Path != "/v4/spreadsheets/book1/values:batchGet" || !strings.Contains(r.RawQuery, "ranges=Inbox%21A1") {
		t.Errorf("request %+v", r)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/v4/spreadsheets/book1/values/A1", nil)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if r := e.Requests()[10]; r.Authorization != "Bearer tok" || r.Method != MethodValuesGet {
		t.Errorf("request %+v", r)
	}
	e.ResetCounts()
	if len(e.Counts()) != 0 || len(e.Requests()) != 0 || len(e.ValueInputOptions()) != 0 || e.Count(MethodGet) != 0 {
		t.Error("ResetCounts left something")
	}
}

func TestCreateAndStructuralBatchUpdate(t *testing.T) {
	e, svc, _ := newServer(t)
	ss, err := svc.Spreadsheets.Create(&sheets.Spreadsheet{
		Properties: &sheets.SpreadsheetProperties{Title: "New book", TimeZone: "America/New_York"},
		Sheets:     []*sheets.Sheet{{Properties: &sheets.SheetProperties{Title: "Jobs"}}},
	}).Do()
	if err != nil {
		t.Fatal(err)
	}
	id := ss.SpreadsheetId
	if id == "" || ss.Properties.Title != "New book" || ss.Properties.TimeZone != "America/New_York" || len(ss.Sheets) != 1 || ss.Sheets[0].Properties.Title != "Jobs" || ss.Sheets[0].Properties.SheetId != 0 {
		t.Fatalf("created %+v", ss)
	}
	if g := ss.Sheets[0].Properties.GridProperties; g.RowCount != 1000 || g.ColumnCount != 26 {
		t.Errorf("grid %+v", g)
	}
	rows := [][]any{{"id", "status"}, {"j3", "done"}, {"j1", "pending"}, {"j2", "error"}}
	if _, err := svc.Spreadsheets.Values.Update(id, "Jobs!A1", &sheets.ValueRange{Values: rows}).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	res, err := svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{
		{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: "failed calls"}}},
		{SortRange: &sheets.SortRangeRequest{
			Range:     &sheets.GridRange{SheetId: 0, StartRowIndex: 1},
			SortSpecs: []*sheets.SortSpec{{DimensionIndex: 0, SortOrder: "ASCENDING"}},
		}},
		{InsertDimension: &sheets.InsertDimensionRequest{Range: &sheets.DimensionRange{SheetId: 0, Dimension: "ROWS", StartIndex: 1, EndIndex: 2}}},
		{InsertDimension: &sheets.InsertDimensionRequest{Range: &sheets.DimensionRange{SheetId: 0, Dimension: "COLUMNS", StartIndex: 1, EndIndex: 2}}},
		{DeleteDimension: &sheets.DeleteDimensionRequest{Range: &sheets.DimensionRange{SheetId: 0, Dimension: "ROWS", StartIndex: 3, EndIndex: 4}}},
	}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Replies) != 5 || res.Replies[0].AddSheet == nil || res.Replies[0].AddSheet.Properties.Title != "failed calls" {
		t.Fatalf("replies %+v", res.Replies)
	}
	newID := res.Replies[0].AddSheet.Properties.SheetId
	if newID == 0 || res.Replies[0].AddSheet.Properties.Index != 1 {
		t.Errorf("added sheet %+v", res.Replies[0].AddSheet.Properties)
	}
	want := [][]any{{"id", nil, "status"}, {}, {"j1", nil, "pending"}, {"j3", nil, "done"}}
	if got := e.Cells(id, "Jobs"); !reflect.DeepEqual(got, want) {
		t.Errorf("Jobs = %#v\nwant %#v", got, want)
	}
	got, err := svc.Spreadsheets.Get(id).Do()
	if err != nil {
		t.Fatal(err)
	}
	if g := got.Sheets[0].Properties.GridProperties; g.RowCount != 1000 || g.ColumnCount != 27 {
		t.Errorf("grid after insert/delete %+v", g)
	}
	if len(got.Sheets) != 2 || got.Sheets[1].Properties.SheetId != newID || got.Sheets[0].Data != nil {
		t.Errorf("sheets %+v", got.Sheets)
	}

	// Atomic: a failing request undoes the ones before it.
	_, err = svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{
		{DeleteDimension: &sheets.DeleteDimensionRequest{Range: &sheets.DimensionRange{SheetId: 0, Dimension: "ROWS", StartIndex: 1, EndIndex: 2}}},
		{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: "jobs"}}},
	}}).Do()
	ge := apiErr(t, err)
	if ge.Code != 400 || ge.Message != `Invalid requests[1].addSheet: A sheet with the name "jobs" already exists. Please enter another name.` {
		t.Errorf("got %d %q", ge.Code, ge.Message)
	}
	if got := e.Cells(id, "Jobs"); !reflect.DeepEqual(got, want) {
		t.Errorf("failed batch changed Jobs: %#v", got)
	}
	_, err = svc.Spreadsheets.BatchUpdate(id, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{
		{InsertDimension: &sheets.InsertDimensionRequest{Range: &sheets.DimensionRange{SheetId: 99, Dimension: "ROWS", StartIndex: 1, EndIndex: 2}}},
	}}).Do()
	if ge := apiErr(t, err); ge.Code != 400 || !strings.Contains(ge.Message, "No grid with id: 99") {
		t.Errorf("got %d %q", ge.Code, ge.Message)
	}

	// Sort descending with empties last, moving only the range's columns.
	wb := &Workbook{SpreadsheetID: "sort", Sheets: []*Sheet{{Title: "S", Rows: [][]any{
		{"n", "tag"}, {2.0, "b"}, {nil, "empty"}, {10.0, "a"}, {"x", "text"}, {1.0, "c"},
	}}}}
	e.AddWorkbook(wb)
	_, err = svc.Spreadsheets.BatchUpdate("sort", &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{
		{SortRange: &sheets.SortRangeRequest{
			Range:     &sheets.GridRange{StartRowIndex: 1, EndRowIndex: 6, StartColumnIndex: 0, EndColumnIndex: 1},
			SortSpecs: []*sheets.SortSpec{{DimensionIndex: 0, SortOrder: "DESCENDING"}},
		}},
	}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	wantS := [][]any{{"n", "tag"}, {"x", "b"}, {10.0, "empty"}, {2.0, "a"}, {1.0, "text"}, {nil, "c"}}
	if got := e.Cells("sort", "S"); !reflect.DeepEqual(got, wantS) {
		t.Errorf("sorted %#v\nwant %#v", got, wantS)
	}
}

func TestValidationAndHiddenColumns(t *testing.T) {
	_, svc, srv := newServer(t)
	ss, err := svc.Spreadsheets.Get(bookID).Fields("properties(title,timeZone),sheets(properties(sheetId,title,gridProperties),data.columnMetadata.hiddenByUser)").Do()
	if err != nil {
		t.Fatal(err)
	}
	if ss.Properties.Title != "Triage test" || ss.Properties.TimeZone != "Europe/Paris" || ss.SpreadsheetId != "" || ss.Properties.Locale != "" {
		t.Errorf("properties %+v, id %q", ss.Properties, ss.SpreadsheetId)
	}
	if len(ss.Sheets) != 4 {
		t.Fatalf("%d sheets", len(ss.Sheets))
	}
	inbox := ss.Sheets[2]
	if inbox.Properties.Title != "Inbox" || inbox.Properties.SheetId != 3 || inbox.Properties.GridProperties.RowCount != 1000 || inbox.Properties.Index != 0 {
		t.Errorf("inbox properties %+v", inbox.Properties)
	}
	if len(inbox.Data) != 1 || len(inbox.Data[0].ColumnMetadata) != 26 || len(inbox.Data[0].RowData) != 0 {
		t.Fatalf("inbox data %+v", inbox.Data)
	}
	for i, cm := range inbox.Data[0].ColumnMetadata {
		if cm.HiddenByUser != (i == 5) || cm.PixelSize != 0 {
			t.Errorf("column %d metadata %+v", i, cm)
		}
	}
	// The raw answer carries no cell data and keeps {} placeholders.
	q := url.Values{"fields": {"sheets(properties(title),data.columnMetadata.hiddenByUser)"}, "prettyPrint": {"false"}}
	body := rawGet(t, srv.URL+"/v4/spreadsheets/"+bookID+"?"+q.Encode(), 200)
	if strings.Contains(body, "rowData") || strings.Contains(body, "Ann") || !strings.Contains(body, `{},{"hiddenByUser":true},{}`) {
		t.Errorf("raw body %s", body)
	}
	// Without a mask or includeGridData: no data.
	body = rawGet(t, srv.URL+"/v4/spreadsheets/"+bookID, 200)
	if strings.Contains(body, `"data"`) || !strings.Contains(body, `"spreadsheetId": "book1"`) {
		t.Errorf("raw body %s", body)
	}

	ss, err = svc.Spreadsheets.Get(bookID).Ranges("Inbox!E2:E3").Fields("sheets.data.rowData.values.dataValidation").Do()
	if err != nil {
		t.Fatal(err)
	}
	if len(ss.Sheets) != 1 || len(ss.Sheets[0].Data) != 1 || len(ss.Sheets[0].Data[0].RowData) != 2 {
		t.Fatalf("got %+v", ss.Sheets)
	}
	for _, rd := range ss.Sheets[0].Data[0].RowData {
		dv := rd.Values[0].DataValidation
		if dv == nil || dv.Condition.Type != "ONE_OF_LIST" || len(dv.Condition.Values) != 3 || dv.Condition.Values[2].UserEnteredValue != "done" {
			t.Errorf("validation %+v", dv)
		}
		if rd.Values[0].FormattedValue != "" {
			t.Error("mask ignored: formattedValue returned")
		}
	}
	// Row 1 (the header) has no validation.
	ss, err = svc.Spreadsheets.Get(bookID).Ranges("Inbox!E1").Fields("sheets.data.rowData.values.dataValidation").Do()
	if err != nil {
		t.Fatal(err)
	}
	if d := ss.Sheets[0].Data[0]; len(d.RowData) != 0 && len(d.RowData[0].Values) != 0 && d.RowData[0].Values[0].DataValidation != nil {
		t.Errorf("header has a validation: %+v", d.RowData)
	}
	// includeGridData without a mask returns cell data.
	ss, err = svc.Spreadsheets.Get(bookID).Ranges("Inbox!A2:B2").IncludeGridData(true).Do()
	if err != nil {
		t.Fatal(err)
	}
	if v := ss.Sheets[0].Data[0].RowData[0].Values; len(v) != 2 || v[1].FormattedValue != "Ann" || *v[0].EffectiveValue.NumberValue != 45002 {
		t.Errorf("grid data %+v", v)
	}
	// Unknown fields in a mask are rejected, as Google does.
	_, err = svc.Spreadsheets.Get(bookID).Fields("sheets(propertys)").Do()
	if ge := apiErr(t, err); ge.Code != 400 {
		t.Errorf("got %v", ge)
	}
	_, err = svc.Spreadsheets.Get(bookID).Ranges("Nope!A1").Do()
	if ge := apiErr(t, err); ge.Code != 400 || ge.Message != "Unable to parse range: Nope!A1" {
		t.Errorf("got %v", ge)
	}
	// Hiding through the API shows up in the mask.
	_, err = svc.Spreadsheets.BatchUpdate(bookID, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{
		{UpdateDimensionProperties: &sheets.UpdateDimensionPropertiesRequest{
			Range:      &sheets.DimensionRange{SheetId: 3, Dimension: "COLUMNS", StartIndex: 0, EndIndex: 1},
			Properties: &sheets.DimensionProperties{HiddenByUser: true}, Fields: "hiddenByUser",
		}},
		{InsertDimension: &sheets.InsertDimensionRequest{Range: &sheets.DimensionRange{SheetId: 3, Dimension: "COLUMNS", StartIndex: 0, EndIndex: 1}}},
	}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	ss, err = svc.Spreadsheets.Get(bookID).Fields("sheets(properties(title),data.columnMetadata.hiddenByUser)").Do()
	if err != nil {
		t.Fatal(err)
	}
	var hidden []int
	for i, cm := range ss.Sheets[2].Data[0].ColumnMetadata {
		if cm.HiddenByUser {
			hidden = append(hidden, i)
		}
	}
	if !reflect.DeepEqual(hidden, []int{1, 6}) {
		t.Errorf("hidden columns %v", hidden)
	}
	// The validation moved with its column (E → F).
	ss, err = svc.Spreadsheets.Get(bookID).Ranges("Inbox!F2").Fields("sheets.data.rowData.values.dataValidation").Do()
	if err != nil {
		t.Fatal(err)
	}
	if rd := ss.Sheets[0].Data[0].RowData; len(rd) != 1 || rd[0].Values[0].DataValidation == nil {
		t.Errorf("validation did not move: %+v", rd)
	}
}

func TestEscapedRangeInPath(t *testing.T) {
	_, _, srv := newServer(t)
	body := rawGet(t, srv.URL+"/v4/spreadsheets/book1/values/%27failed%20calls%27%21A1%3AF?valueRenderOption=UNFORMATTED_VALUE", 200)
	var vr struct {
		Range  string  `json:"range"`
		Values [][]any `json:"values"`
	}
	if err := json.Unmarshal([]byte(body), &vr); err != nil {
		t.Fatal(err)
	}
	if vr.Range != "'failed calls'!A1:F1000" || len(vr.Values) != 3 || vr.Values[1][0] != 45000.5 {
		t.Errorf("got %s", body)
	}
	// A sheet name holding "/" and ":" is escaped in the path.
	e := New()
	e.AddWorkbook(&Workbook{SpreadsheetID: "x", Sheets: []*Sheet{{Title: "a/b:c", Rows: [][]any{{"v"}}}}})
	srv2 := httptest.NewServer(e)
	defer srv2.Close()
	svc, err := sheets.NewService(context.Background(), option.WithEndpoint(srv2.URL+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	got, err := svc.Spreadsheets.Values.Get("x", "'a/b:c'!A1:B2").Do()
	if err != nil {
		t.Fatal(err)
	}
	if got.Range != "'a/b:c'!A1:B2" || got.Values[0][0] != "v" {
		t.Errorf("got %+v", got)
	}
	if _, err := svc.Spreadsheets.Values.Append("x", "'a/b:c'!A:A", &sheets.ValueRange{Values: [][]any{{"w"}}}).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Spreadsheets.Values.Clear("x", "'a/b:c'!A1", &sheets.ClearValuesRequest{}).Do(); err != nil {
		t.Fatal(err)
	}
	if c := e.Cells("x", "a/b:c"); !reflect.DeepEqual(c, [][]any{{}, {"w"}}) {
		t.Errorf("cells %#v", c)
	}
}

func TestCurlLikeRawHTTP(t *testing.T) {
	e, _, srv := newServer(t)
	// Spaces as "+" in batchGet, a literal ":" in a path range.
	body := rawGet(t, srv.URL+"/v4/spreadsheets/book1/values:batchGet?ranges=%27failed+calls%27!A1:B1&ranges=Inbox!A1:A2&prettyPrint=false", 200)
	want := `{"spreadsheetId":"book1","valueRanges":[{"range":"'failed calls'!A1:B1","majorDimension":"ROWS","values":[["timestamp","source"]]},{"range":"Inbox!A1:A2","majorDimension":"ROWS","values":[["Timestamp"],["45002"]]}]}`
	if strings.TrimSpace(body) != want {
		t.Errorf("got  %s\nwant %s", body, want)
	}
	// Like Google, the answer is indented unless prettyPrint=false.
	body = rawGet(t, srv.URL+"/v4/spreadsheets/book1/values/Inbox!B2:B3", 200)
	if !strings.Contains(body, "\n  \"values\": [\n    [\n      \"Ann\"\n    ],") {
		t.Errorf("got %s", body)
	}
	// A raw PUT and a POST :append with JSON bodies.
	req, _ := http.NewRequest("PUT", srv.URL+"/v4/spreadsheets/book1/values/Inbox!E3?valueInputOption=RAW&prettyPrint=false", strings.NewReader(`{"values":[["spam"]]}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"updatedRange":"Inbox!E3"`) {
		t.Errorf("PUT: %d %s", resp.StatusCode, b)
	}
	resp, err = http.Post(srv.URL+"/v4/spreadsheets/book1/values/Inbox!A1:append?valueInputOption=RAW&prettyPrint=false", "application/json", strings.NewReader(`{"values":[[1,"Cy"]]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"tableRange":"Inbox!A1:F3"`) || !strings.Contains(string(b), `"updatedRange":"Inbox!A4:B4"`) {
		t.Errorf("append: %d %s", resp.StatusCode, b)
	}
	if got := e.Cells(bookID, "Inbox")[3]; !reflect.DeepEqual(got, []any{1.0, "Cy"}) {
		t.Errorf("row 4 %#v", got)
	}
	// Unknown JSON fields are rejected like Google does.
	resp, err = http.Post(srv.URL+"/v4/spreadsheets/book1/values:batchUpdate", "application/json", strings.NewReader(`{"valueInputOption":"RAW","date":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), `Unknown name \"date\"`) {
		t.Errorf("unknown field: %d %s", resp.StatusCode, b)
	}
}

func TestAppend(t *testing.T) {
	e, svc, _ := newServer(t)
	res, err := svc.Spreadsheets.Values.Append(bookID, "'failed calls'!A:F", &sheets.ValueRange{Values: [][]any{{45010.0, "crm"}, {45011.0, "erp"}}}).ValueInputOption("RAW").InsertDataOption("INSERT_ROWS").IncludeValuesInResponse(true).Do()
	if err != nil {
		t.Fatal(err)
	}
	if res.TableRange != "'failed calls'!A1:F3" || res.Updates.UpdatedRange != "'failed calls'!A4:B5" || res.Updates.UpdatedRows != 2 || res.Updates.UpdatedCells != 4 {
		t.Errorf("append response %+v %+v", res, res.Updates)
	}
	if d := res.Updates.UpdatedData; d == nil || !reflect.DeepEqual(d.Values, [][]any{{"45010", "crm"}, {"45011", "erp"}}) {
		t.Errorf("updatedData %+v", d)
	}
	// Appending to an empty tab writes at the top; no tableRange.
	e.AddWorkbook(&Workbook{SpreadsheetID: "empty", Sheets: []*Sheet{{Title: "T"}}})
	res, err = svc.Spreadsheets.Values.Append("empty", "T!A1", &sheets.ValueRange{Values: [][]any{{"h1", "h2"}}}).ValueInputOption("RAW").Do()
	if err != nil {
		t.Fatal(err)
	}
	if res.TableRange != "" || res.Updates.UpdatedRange != "T!A1:B1" {
		t.Errorf("append to empty %+v %+v", res, res.Updates)
	}
	// INSERT_ROWS shifts what is below the table within the search range.
	e.AddWorkbook(&Workbook{SpreadsheetID: "ins", Sheets: []*Sheet{{Title: "T", Rows: [][]any{{"a"}, {"b"}, {}, {"x", "below"}}}}})
	if _, err := svc.Spreadsheets.Values.Append("ins", "T!A1:A2", &sheets.ValueRange{Values: [][]any{{"c"}}}).ValueInputOption("RAW").InsertDataOption("INSERT_ROWS").Do(); err != nil {
		t.Fatal(err)
	}
	if got, want := e.Cells("ins", "T"), [][]any{{"a"}, {"b"}, {"c"}, {}, {"x", "below"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v", got)
	}
	if g := e.Workbook("ins").Sheets[0].RowCount; g != 1001 {
		t.Errorf("row count %d", g)
	}
}

// values.append finds its table as Google's recorded answers show: the last value in the
// range grown to its region, which a gap ends; no value in the range, no table.
func TestAppendFindsTheTableAsGoogleDoes(t *testing.T) {
	cases := []struct {
		name, rng     string
		rows          [][]any
		table, update string
	}{
		{"a whole sheet, two tables in a row: the last", "T", [][]any{{"a", nil, "c"}}, "T!C1", "T!C2:D2"},
		{"one cell: its own region, the gap ends it", "T!A1", [][]any{{"a", nil, "c"}}, "T!A1", "T!A2:B2"},
		{"an empty cell beside data: no table", "T!B1", [][]any{{"a", nil, nil, "d"}, {"a"}}, "", "T!B1:C1"},
		{"an empty row above data: no table", "T!A2", [][]any{{"a", "b"}, {}, {"c", "d"}}, "", "T!A2:B2"},
		{"a full table", "T", [][]any{{"h1", "h2", "h3"}, {"1", "2", "3"}, {"4", "5", "6"}}, "T!A1:C3", "T!A4:B4"},
		{"a region reaching past a one-cell range", "T!A1", [][]any{{"h1", "h2", "h3"}, {"1", nil, nil}, {nil, "5", nil}}, "T!A1:C3", "T!A4:B4"},
		{"a table away from A1", "T", [][]any{{}, {}, {nil, "h1", "h2"}, {nil, "1", "2"}}, "T!B3:C4", "T!B5:C5"},
		{"diagonal neighbours are one region", "T", [][]any{{"a"}, {nil, "b"}}, "T!A1:B2", "T!A3:B3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, svc, _ := newServer(t)
			e.AddWorkbook(&Workbook{SpreadsheetID: "tables", Sheets: []*Sheet{{Title: "T", Rows: tc.rows}}})
			res, err := svc.Spreadsheets.Values.Append("tables", tc.rng, &sheets.ValueRange{Values: [][]any{{"x", "y"}}}).ValueInputOption("RAW").Do()
			if err != nil {
				t.Fatal(err)
			}
			if res.TableRange != tc.table || res.Updates.UpdatedRange != tc.update {
				t.Errorf("tableRange %q, updatedRange %q; want %q, %q", res.TableRange, res.Updates.UpdatedRange, tc.table, tc.update)
			}
		})
	}
}

func TestWritesGrowAndBoundedRanges(t *testing.T) {
	e, svc, _ := newServer(t)
	_, err := svc.Spreadsheets.Values.Update(bookID, "Inbox!A1:B1", &sheets.ValueRange{Values: [][]any{{"a", "b", "c"}}}).ValueInputOption("RAW").Do()
	if ge := apiErr(t, err); ge.Code != 400 || ge.Message != "Requested writing within range ['Inbox'!A1:B1], but tried writing to column [C]" {
		t.Errorf("got %d %q", ge.Code, ge.Message)
	}
	_, err = svc.Spreadsheets.Values.Update(bookID, "Inbox!AA1001", &sheets.ValueRange{Values: [][]any{{"far"}}}).ValueInputOption("RAW").Do()
	if err != nil {
		t.Fatal(err)
	}
	wb := e.Workbook(bookID)
	if s := wb.Sheets[2]; s.RowCount != 1001 || s.ColumnCount != 27 {
		t.Errorf("grid %dx%d", s.RowCount, s.ColumnCount)
	}
	// COLUMNS writes are transposed.
	_, err = svc.Spreadsheets.Values.Update(bookID, "Sparse!E1", &sheets.ValueRange{MajorDimension: "COLUMNS", Values: [][]any{{"e1", "e2"}, {"f1"}}}).ValueInputOption("RAW").Do()
	if err != nil {
		t.Fatal(err)
	}
	c := e.Cells(bookID, "Sparse")
	if c[0][4] != "e1" || c[1][4] != "e2" || c[0][5] != "f1" {
		t.Errorf("cells %#v", c)
	}
	res, err := svc.Spreadsheets.Values.BatchUpdate(bookID, &sheets.BatchUpdateValuesRequest{ValueInputOption: "RAW", Data: []*sheets.ValueRange{
		{Range: "Sparse!A9", Values: [][]any{{"x", "y"}}},
		{Range: "Inbox!F2:F3", Values: [][]any{{"m9"}, {"m8"}}},
	}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	if res.TotalUpdatedCells != 4 || res.TotalUpdatedSheets != 2 || res.TotalUpdatedRows != 3 || len(res.Responses) != 2 || res.Responses[1].UpdatedRange != "Inbox!F2:F3" {
		t.Errorf("batch response %+v", res)
	}
	cl, err := svc.Spreadsheets.Values.Clear(bookID, "Inbox!F:F", &sheets.ClearValuesRequest{}).Do()
	if err != nil {
		t.Fatal(err)
	}
	if cl.ClearedRange != "Inbox!F1:F1001" {
		t.Errorf("cleared %q", cl.ClearedRange)
	}
	for _, row := range e.Cells(bookID, "Inbox") {
		if len(row) > 5 && row[5] != nil {
			t.Errorf("F not cleared: %#v", row)
		}
	}
}

func TestDirectMutation(t *testing.T) {
	e, _, _ := newServer(t)
	if err := e.InsertRows(bookID, "Inbox", 2, [][]any{{45100, "Zed", "z@example.com", "hi", "new", "m0"}}); err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteRow(bookID, "Inbox", 3); err != nil { // Ann
		t.Fatal(err)
	}
	if err := e.SortRows(bookID, "Inbox", 1, false); err != nil { // by Name
		t.Fatal(err)
	}
	var ids []any
	for _, row := range e.Cells(bookID, "Inbox")[1:] {
		ids = append(ids, row[5])
	}
	if !reflect.DeepEqual(ids, []any{"m2", "m0"}) {
		t.Errorf("ids %v", ids)
	}
	if err := e.SetCell(bookID, "Inbox", 2, 4, "=1+1"); err != nil {
		t.Fatal(err)
	}
	if e.Formula(bookID, "Inbox", 2, 4) {
		t.Error("SetCell stored a formula")
	}
	if err := e.SetFormula(bookID, "Inbox", 2, 6, "=A2"); err != nil || !e.Formula(bookID, "Inbox", 2, 6) {
		t.Errorf("SetFormula: %v", err)
	}
	if err := e.SetCell(bookID, "Nope", 1, 0, "x"); err == nil {
		t.Error("SetCell on a missing tab")
	}
	if err := e.SetCell(bookID, "Inbox", 0, 0, "x"); err == nil {
		t.Error("SetCell on row 0")
	}
	if e.Cells("nope", "Inbox") != nil || e.Workbook("nope") != nil {
		t.Error("absent workbook")
	}
	if n := e.Count(MethodValuesUpdate); n != 0 || len(e.Requests()) != 0 {
		t.Error("direct mutation was counted")
	}
	// Workbook snapshots are deep copies.
	wb := e.Workbook(bookID)
	wb.Sheets[2].Rows[1][1] = "changed"
	if e.Cells(bookID, "Inbox")[1][1] == "changed" {
		t.Error("snapshot aliases the emulator")
	}
}

func TestPersistRoundTrip(t *testing.T) {
	e, svc, _ := newServer(t)
	path := filepath.Join(t.TempDir(), "book.json")
	e.SetPersist(bookID, path)
	if _, err := svc.Spreadsheets.Values.Get(bookID, "A1").Do(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a read persisted: %v", err)
	}
	_, err := svc.Spreadsheets.Values.Update(bookID, "Inbox!E2:G2", &sheets.ValueRange{Values: [][]any{{"done", nil, "=E2"}}}).ValueInputOption("USER_ENTERED").Do()
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadWorkbook(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(loaded, e.Workbook(bookID)) {
		t.Errorf("persisted workbook differs\n got %+v\nwant %+v", loaded, e.Workbook(bookID))
	}
	if loaded.Sheets[2].Rows[1][4] != "done" || !reflect.DeepEqual(loaded.Sheets[2].Formulas, []string{"G2"}) {
		t.Errorf("Inbox %+v", loaded.Sheets[2])
	}
	// Served again, it behaves the same (formula, hidden column, validation).
	e2 := New()
	e2.AddWorkbook(loaded)
	if !e2.Formula(bookID, "Inbox", 2, 6) || e2.Formula(bookID, "Inbox", 3, 3) {
		t.Error("formula flags lost")
	}
	if !reflect.DeepEqual(e2.Workbook(bookID), loaded) {
		t.Error("round trip through AddWorkbook changed the workbook")
	}
	// Structural changes persist too, and no temp files are left behind.
	if _, err := svc.Spreadsheets.BatchUpdate(bookID, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{
		{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: "Jobs"}}},
	}}).Do(); err != nil {
		t.Fatal(err)
	}
	loaded, err = LoadWorkbook(path)
	if err != nil || len(loaded.Sheets) != 5 {
		t.Fatalf("after addSheet: %v, %d sheets", err, len(loaded.Sheets))
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("files left: %v", entries)
	}
	// A failing save is reported as a 500.
	e.SetPersist(bookID, filepath.Join(t.TempDir(), "missing-dir", "x.json"))
	_, err = svc.Spreadsheets.Values.Update(bookID, "Inbox!E2", &sheets.ValueRange{Values: [][]any{{"read"}}}).ValueInputOption("RAW").Do()
	if ge := apiErr(t, err); ge.Code != 500 || !strings.Contains(ge.Message, "saving workbook") {
		t.Errorf("got %v", ge)
	}
}

func TestServe(t *testing.T) {
	e := New()
	e.AddWorkbook(testWorkbook())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	u, stop, err := Serve(ctx, "", e)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Errorf("url %q", u)
	}
	svc, err := sheets.NewService(ctx, option.WithEndpoint(u+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Spreadsheets.Values.Get(bookID, "Inbox!A1").Do(); err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Spreadsheets.Values.Get(bookID, "Inbox!A1").Do(); err == nil {
		t.Error("still serving after stop")
	}
	// Cancelling the context stops it as well.
	ctx2, cancel2 := context.WithCancel(context.Background())
	u2, stop2, err := Serve(ctx2, "127.0.0.1:0", e)
	if err != nil {
		t.Fatal(err)
	}
	cancel2()
	stopped := until(t, func() bool {
		resp, err := http.Get(u2 + "/v4/spreadsheets/book1/values/A1")
		if err != nil {
			return true
		}
		resp.Body.Close()
		return false
	})
	if !stopped {
		t.Fatal("still serving after cancel")
	}
	_ = stop2()
}

func TestConcurrentUse(t *testing.T) {
	e, svc, _ := newServer(t)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 10; j++ {
				rng := fmt.Sprintf("Sparse!%s%d", a1notation.ColumnLetter(i), j+1)
				if _, err := svc.Spreadsheets.Values.Update(bookID, rng, &sheets.ValueRange{Values: [][]any{{float64(j)}}}).ValueInputOption("RAW").Do(); err != nil {
					t.Error(err)
					return
				}
				if _, err := svc.Spreadsheets.Values.BatchGet(bookID).Ranges("Sparse!A:H", "Inbox").Do(); err != nil {
					t.Error(err)
					return
				}
				_ = e.Cells(bookID, "Sparse")
				_ = e.Counts()
			}
		}(i)
	}
	wg.Wait()
	c := e.Cells(bookID, "Sparse")
	for i := 0; i < 8; i++ {
		for j := 0; j < 10; j++ {
			if c[j][i] != float64(j) {
				t.Fatalf("cell %s%d = %v", a1notation.ColumnLetter(i), j+1, c[j][i])
			}
		}
	}
	if n := e.Count(MethodValuesUpdate); n != 80 {
		t.Errorf("updates counted %d", n)
	}
}

func rawGet(t *testing.T, u string, wantStatus int) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != wantStatus {
		t.Errorf("GET %s: status %d, want %d: %s", u, resp.StatusCode, wantStatus, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("GET %s: Content-Type %q", u, ct)
	}
	if !json.Valid(b) {
		t.Errorf("GET %s: invalid JSON %s", u, b)
	}
	return string(b)
}

// updateSheetProperties takes its field mask with dots or with slashes, as Google does (a
// client that sends gridProperties/rowCount gets its resize, not a 200 with nothing done); a
// field Google has that the emulator doesn't update is refused with 501 naming it, and a
// field no one has with 400.
func TestUpdateSheetPropertiesMasks(t *testing.T) {
	e, svc, _ := newServer(t)
	upd := func(fields string, g *sheets.GridProperties) error {
		_, err := svc.Spreadsheets.BatchUpdate(bookID, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{{UpdateSheetProperties: &sheets.UpdateSheetPropertiesRequest{
			Properties: &sheets.SheetProperties{SheetId: 0, GridProperties: g}, Fields: fields}}}}).Do()
		return err
	}
	size := func() (int, int) {
		e.mu.Lock()
		defer e.mu.Unlock()
		sh, _ := e.books[bookID].sheetByID(0)
		return sh.rowCount, sh.colCount
	}
	if err := upd("gridProperties/rowCount,gridProperties/columnCount", &sheets.GridProperties{RowCount: 40, ColumnCount: 7}); err != nil {
		t.Fatal(err)
	}
	if r, c := size(); r != 40 || c != 7 {
		t.Fatalf("slash-form mask: grid %dx%d, want 40x7", r, c)
	}
	if err := upd("gridProperties.frozenRowCount", &sheets.GridProperties{FrozenRowCount: 1}); apiErr(t, err).Code != 501 || !strings.Contains(err.Error(), "frozenRowCount") {
		t.Errorf("frozen rows: %v", err)
	}
	// A mask covering a field without naming it ("gridProperties", "*") refuses it as well
	// when the request sets it; left at its default, it changes nothing either way.
	for _, mask := range []string{"gridProperties", "*"} {
		if err := upd(mask, &sheets.GridProperties{RowCount: 40, ColumnCount: 7, FrozenRowCount: 1}); apiErr(t, err).Code != 501 || !strings.Contains(err.Error(), "frozenRowCount") {
			t.Errorf("frozen rows under %q: %v", mask, err)
		}
	}
	if err := upd("gridProperties", &sheets.GridProperties{RowCount: 41, ColumnCount: 7}); err != nil {
		t.Fatal(err)
	}
	if err := upd("gridProperties", &sheets.GridProperties{RowCount: 40, ColumnCount: 7}); err != nil {
		t.Fatal(err)
	}
	if err := upd("gridProperties.nonsense", &sheets.GridProperties{RowCount: 3}); apiErr(t, err).Code != 400 {
		t.Errorf("an unknown field: %v", err)
	}
	if r, c := size(); r != 40 || c != 7 {
		t.Fatalf("a refused update changed the grid: %dx%d", r, c)
	}
}

// values:batchClear clears every range it names, all or none, and says which; a method of
// Google's the emulator doesn't serve is refused with 501 naming it, never answered as if it
// were no method at all.
func TestBatchClearAndMethodsNotEmulated(t *testing.T) {
	e, svc, srv := newServer(t)
	res, err := svc.Spreadsheets.Values.BatchClear(bookID, &sheets.BatchClearValuesRequest{Ranges: []string{"Inbox!A2:B2", "Inbox!F3"}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.ClearedRanges, []string{"Inbox!A2:B2", "Inbox!F3"}) {
		t.Errorf("cleared %v", res.ClearedRanges)
	}
	cell := func(row, col int) any {
		rows := e.Cells(bookID, "Inbox")
		if row-1 >= len(rows) || col >= len(rows[row-1]) {
			return nil
		}
		return rows[row-1][col]
	}
	if cell(2, 0) != nil || cell(2, 1) != nil || cell(3, 5) != nil {
		t.Errorf("a range was not cleared: %v %v %v", cell(2, 0), cell(2, 1), cell(3, 5))
	}
	before := cell(3, 1)
	if _, err := svc.Spreadsheets.Values.BatchClear(bookID, &sheets.BatchClearValuesRequest{Ranges: []string{"Inbox!B3", "Nope!A1"}}).Do(); apiErr(t, err).Code != 400 {
		t.Errorf("a batch with a bad range: %v", err)
	}
	if before != "Bob" || cell(3, 1) != before {
		t.Error("a refused batchClear cleared a range")
	}
	for path, method := range map[string]string{
		"/v4/spreadsheets/" + bookID + "/values:batchGetByDataFilter": "values.batchGetByDataFilter",
		"/v4/spreadsheets/" + bookID + ":getByDataFilter":             "spreadsheets.getByDataFilter",
		"/v4/spreadsheets/" + bookID + "/developerMetadata:search":    "spreadsheets.developerMetadata",
	} {
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 501 || !strings.Contains(string(body), method) {
			t.Errorf("%s: %d %s", path, resp.StatusCode, body)
		}
	}
}
