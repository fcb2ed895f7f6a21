// Package emulator is a local emulator of the Google Sheets v4 REST API,
// faithful where triage depends on it: A1 ranges with quoted sheet names,
// trimmed responses, RAW vs USER_ENTERED, render options, field masks,
// Google's JSON error body, the 50,000-character cell limit and the
// 10,000,000-cell workbook limit, index checks answered 400 as Google
// answers them, atomic writes.
//
// Methods: spreadsheets.create, spreadsheets.get, spreadsheets.batchUpdate
// (with includeSpreadsheetInResponse, responseRanges and
// responseIncludeGridData) and values.get, batchGet, update, append,
// batchUpdate, clear, batchClear; of the Drive API, files.get of a
// spreadsheet (its name, version and times). The batchUpdate request kinds
// emulated, applied in order and all or none: addSheet, deleteSheet,
// updateSheetProperties (title, gridProperties rowCount and columnCount,
// index, hidden), insertDimension, deleteDimension, appendDimension,
// updateDimensionProperties (hidden columns), sortRange, setDataValidation
// (ONE_OF_LIST), updateCells and appendCells (of userEnteredValue), copyPaste
// (PASTE_NORMAL, PASTE_VALUES) and addProtectedRange (kept and reported, not
// enforced).
//
// It answers as Google does, or refuses with 501 naming what it doesn't do:
// any other request kind or method (a Drive call other than files.get
// included), a field it doesn't update (updateSheetProperties of frozen rows
// or a tab colour, updateCells of a note or a format), a value it can't give
// (the value of a formula other than arithmetic on numbers: Google computes
// it; valueRenderOption=FORMULA reads its text), and text written
// USER_ENTERED that Google would store as a formatted number (a date, a time,
// a percentage, an amount, a grouped number). A field mask may name paths
// with dots or with slashes; a message on its path is kept even when empty,
// as Google keeps it. values.append finds its table as Google does: the last
// value in the range grown to its region.
//
// TestConformanceWithRecordedGoogleTraffic holds it to that: it replays the
// real Google traffic gspread recorded for its own tests (testdata/gspread,
// with gspread's MIT licence) and classes every answer as matched, refused,
// diverged (after a refused write), outside (a spreadsheet the recording
// didn't make) or silent (answered 200 otherwise than Google); none may be
// silent. The figure per method is testdata/gspread/figure.txt.
//
// Quotas and lag, as Google's: a per-minute read and write quota per
// credential with Google's 429 body (SetQuotaPerMinute, off by default),
// and Drive's lagging file version (SetVersionLag).
//
// Test hooks: request counts per method, a bounded request log and
// ValueInputOptions log, added latency (SetLatency), injected faults
// (InjectFault: an error instead of the request, an error after it was
// performed, or a lost answer: the connection dropped, or held until the
// client's deadline, after the request was performed; ReleaseHeld), a
// per-minute quota, a hook between two requests (SetHook), and direct
// changes another editor would make (SetCell, SetFormula, InsertRows,
// DeleteRow, InsertColumns, DeleteColumn, SortRows).
//
// It never keeps (nor persists) a workbook it could not load again, and
// its memory stays bounded whatever a request asks for: sizes are checked
// before anything is allocated for them. Served standalone (Serve), it
// listens on loopback only unless told otherwise: it has no authentication.
//
// The real client talks to it like this:
//
//	e := emulator.New()
//	e.AddWorkbook(wb)
//	srv := httptest.NewServer(e)
//	svc, _ := sheets.NewService(ctx, option.WithEndpoint(srv.URL+"/"), option.WithoutAuthentication())
//
// An Emulator is safe for concurrent use.
//
// The design it follows, and the section (§N) and invariant numbers its comments cite, are in
// docs/DESIGN.md.
package emulator

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	drive "google.golang.org/api/drive/v3"
	sheets "google.golang.org/api/sheets/v4"
)

// Method names, as counted by Count and logged in Requests.
const (
	MethodCreate      = "spreadsheets.create"
	MethodGet         = "spreadsheets.get"
	MethodBatchUpdate = "spreadsheets.batchUpdate" // structural: addSheet, insertDimension...

	MethodValuesGet         = "values.get"
	MethodValuesBatchGet    = "values.batchGet"
	MethodValuesUpdate      = "values.update"
	MethodValuesAppend      = "values.append"
	MethodValuesBatchUpdate = "values.batchUpdate"
	MethodValuesClear       = "values.clear"
	MethodValuesBatchClear  = "values.batchClear"

	// MethodDriveGet is the Drive API v3 files.get the emulator answers for a spreadsheet
	// (GET /drive/v3/files/{id}): its version, which every change bumps (a change check
	// before a refresh).
	MethodDriveGet = "drive.files.get"
)

const maxBody = 64 << 20

// RequestLogLimit is how many entries Requests and ValueInputOptions keep:
// the most recent ones, so a long-running emulator's memory stays bounded.
// Count and Counts stay exact. Each string of a logged Request keeps at
// most maxLogged bytes.
const RequestLogLimit = 10_000

// maxLogged caps each string of a logged Request (a URL can be as long as
// the server reads headers).
const maxLogged = 4096

// logAppend appends v to a log that keeps its last RequestLogLimit entries.
// It trims only when the log reaches twice the limit, so appending stays
// amortised O(1) and the backing array never exceeds 2×RequestLogLimit.
func logAppend[T any](log []T, v T) []T {
	if len(log) >= 2*RequestLogLimit {
		log = append(make([]T, 0, 2*RequestLogLimit), log[len(log)-RequestLogLimit+1:]...)
	}
	return append(log, v)
}

// logTail copies the last RequestLogLimit entries of a log.
func logTail[T any](log []T) []T {
	return slices.Clone(log[max(0, len(log)-RequestLogLimit):])
}

// clipLogged copies s (so the log never pins a request's buffers), cut to
// maxLogged bytes.
func clipLogged(s string) string {
	if len(s) > maxLogged {
		s = s[:maxLogged]
	}
	return strings.Clone(s)
}

// Emulator serves workbooks over the Sheets v4 REST API. Create one with New.
type Emulator struct {
	mu      sync.Mutex
	books   map[string]*book
	persist map[string]string
	counts  map[string]int
	reqs    []Request
	inputs  []string
	faults  []Fault
	latency time.Duration
	quota   int
	// versionLag is how long Drive's reported version lags (SetVersionLag).
	versionLag time.Duration
	// reads and writes are each credential's requests of the last minute (SetQuotaPerMinute).
	reads   map[string][]time.Time
	writes  map[string][]time.Time
	now     func() time.Time
	hook    func(Request)
	release chan struct{} // closed by ReleaseHeld
}

// Request is one entry of the request log (see RequestLogLimit).
type Request struct {
	// Method is the API method ("values.batchGet"...), "" if the path
	// matched none.
	Method string
	// HTTPMethod is GET, POST, PUT...
	HTTPMethod string
	// Path is the unescaped URL path; RawQuery the query as sent. In the
	// log each keeps its first 4096 bytes.
	Path, RawQuery string
	// Authorization is the Authorization header value ("" if absent; its
	// first 4096 bytes in the log).
	Authorization string
}

// Fault is an injected failure: the next Times requests for Method ("" =
// any method) are answered with Status and Google's JSON error body, and are
// not performed. Times <= 0 means 1; a Status outside 400..599 means 500.
// Message "" uses Google's usual message for the status (for 429 the
// "Quota exceeded for quota metric ..." one). With After set the request IS
// performed first and only its response is replaced by the error: a write
// that happened although the client saw a failure.
//
// Drop and Hold lose the answer instead (Status and Message are then
// unused): the request IS performed, as with After, and the client gets no
// response at all. Drop closes the connection at once, without writing a
// byte (the handler hijacks it): the Go client sees a network error (EOF or
// "connection reset"), the lost answer of a write Google applied. Hold
// keeps the connection open and answers nothing until the request's
// context is done (the client gave up by its own deadline, or cancelled),
// or ReleaseHeld is called, then closes it unanswered: a client timeout
// after the write was applied, decided by the client's own deadline, which
// always passes first since no answer ever comes. A client without a
// deadline waits on a Hold until ReleaseHeld (httptest.Server.Close waits
// for it too). Hold wins over Drop when both are set.
//
// Go's http.Transport itself resends a request whose connection closed
// unanswered when the request is replayable (GET, HEAD, OPTIONS, TRACE,
// or an Idempotency-Key header) and went out on a reused keep-alive
// connection: a dropped values.get or spreadsheets.get can come back as a
// second request (counted, and matched by the next fault if any). Writes
// (POST, PUT) are never resent by the transport.
type Fault struct {
	Method  string
	Status  int
	Times   int
	Message string
	After   bool
	Drop    bool
	Hold    bool
}

// SetClock sets the emulator's clock: the Date header of every answer, and the quota's
// minutes. A test moves it on to let a journal's lease run out without waiting.
func (e *Emulator) SetClock(now func() time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.now = now
}

func (e *Emulator) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now()
}

// New returns an empty emulator.
func New() *Emulator {
	return &Emulator{
		books:   map[string]*book{},
		persist: map[string]string{},
		counts:  map[string]int{},
		now:     time.Now,
		release: make(chan struct{}),
	}
}

// AddWorkbook serves a deep copy of wb, replacing any workbook with the
// same ID. An empty SpreadsheetID is generated and stored back into wb. It
// panics if wb is invalid (see Workbook.Validate; ParseWorkbook and
// LoadWorkbook return validated workbooks).
func (e *Emulator) AddWorkbook(wb *Workbook) {
	if wb.SpreadsheetID == "" {
		wb.SpreadsheetID = newSpreadsheetID()
	}
	b, err := newBook(wb)
	if err != nil {
		panic("emulator: AddWorkbook: " + err.Error())
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	b.created = e.now()
	b.modified = b.created
	e.books[b.id] = b
}

// Workbook returns a deep-copy snapshot of a workbook, nil if absent.
// Formula cells hold their "=..." text and are listed in Sheet.Formulas.
func (e *Emulator) Workbook(id string) *Workbook {
	e.mu.Lock()
	defer e.mu.Unlock()
	b := e.books[id]
	if b == nil {
		return nil
	}
	return b.export()
}

// SpreadsheetIDs lists the served spreadsheet IDs, sorted.
func (e *Emulator) SpreadsheetIDs() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var ids []string
	for id := range e.books {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// SetPersist makes every successful write to workbook id (through the API
// or the direct mutation methods) save it as JSON to path, atomically
// (temporary file + rename). Before saving, the JSON is parsed back as
// LoadWorkbook would: a change that would leave a file that does not load
// is not applied at all (the API answers 500 INTERNAL, a direct method
// returns an error). If writing the file fails the API answers 500
// INTERNAL (the write itself was applied in memory). path "" turns it off.
func (e *Emulator) SetPersist(id, path string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if path == "" {
		delete(e.persist, id)
		return
	}
	e.persist[id] = path
}

// errUnloadable marks a change refused because the workbook it would
// leave could not be loaded again; nothing of it was applied.
var errUnloadable = errors.New("emulator: change refused")

// commit makes work (a copy a write was applied to) the served state of
// its workbook, and saves it if persistence is on; the caller holds e.mu.
// It refuses, keeping the previous state, a book that breaks the model's
// invariants or whose saved JSON would not load again (LoadWorkbook):
// request-time checks make that impossible, this is what guarantees it. A
// failure to write the file keeps the change (it was made in memory).
func (e *Emulator) commit(work *book) error {
	if err := work.check(); err != nil {
		return fmt.Errorf("%w: it would leave workbook %s unloadable: %v", errUnloadable, work.id, err)
	}
	// Every change bumps the file's version, as Drive's does.
	if prev := e.books[work.id]; prev != nil {
		work.version = prev.version + 1
	}
	work.modified = e.now()
	path := e.persist[work.id]
	if path == "" {
		e.books[work.id] = work
		return nil
	}
	data, err := marshalWorkbook(work.export())
	if err == nil {
		_, err = ParseWorkbook(data)
	}
	if err != nil {
		return fmt.Errorf("%w: it would persist workbook %s as a file that does not load: %v", errUnloadable, work.id, err)
	}
	e.books[work.id] = work
	if err := writeFileAtomic(path, data); err != nil {
		return fmt.Errorf("emulator: saving workbook %s: %w", work.id, err)
	}
	return nil
}

// SetVersionLag makes Drive's metadata of a Sheets file lag as Google's does: the version
// files.get reports moves to the file's current one only when d has passed since it last
// moved (Google refreshes it about every 3 minutes), so a change can stay unseen by a change
// check for up to d. 0 (the default) reports every change at once.
func (e *Emulator) SetVersionLag(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.versionLag = d
}

// driveVersion is the version Drive reports for b now; the caller holds e.mu.
func (e *Emulator) driveVersion(b *book) int64 {
	if e.versionLag <= 0 {
		return b.version
	}
	now := e.now()
	if b.shownVersion == 0 || now.Sub(b.shownAt) >= e.versionLag {
		b.shownVersion, b.shownAt = b.version, now
	}
	return b.shownVersion
}

// Version returns the Drive version of a spreadsheet (0 if there is none): it starts at 1 and
// every change, through the API or the direct calls, bumps it.
func (e *Emulator) Version(id string) int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	if b := e.books[id]; b != nil {
		return b.version
	}
	return 0
}

// Count returns how many requests were received for method (see the
// Method constants), including ones answered with an injected fault or a
// quota error.
func (e *Emulator) Count(method string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.counts[method]
}

// Counts returns a copy of all per-method request counts.
func (e *Emulator) Counts() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]int, len(e.counts))
	for k, v := range e.counts {
		out[k] = v
	}
	return out
}

// ResetCounts zeroes the counts and empties the request log and the
// ValueInputOptions log.
func (e *Emulator) ResetCounts() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.counts = map[string]int{}
	e.reqs = nil
	e.inputs = nil
}

// SetHook installs h (nil removes it): it runs before every routed request
// is performed, outside the emulator's lock, so it may change the workbook
// through SetCell, InsertRows, DeleteRow, InsertColumns, DeleteColumn,
// SortRows... as another editor would in the instant between two of a
// client's requests: after the client's previous request was answered,
// before this one is read. That is the worst moment for a client that
// writes by row (or column) number.
func (e *Emulator) SetHook(h func(Request)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.hook = h
}

// SetLatency adds d before every response. A request whose context ends
// while it waits is dropped unperformed.
func (e *Emulator) SetLatency(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.latency = d
}

// InjectFault queues a fault; faults are used in the order queued.
func (e *Emulator) InjectFault(f Fault) {
	if f.Times <= 0 {
		f.Times = 1
	}
	if f.Status < 400 || f.Status > 599 {
		f.Status = http.StatusInternalServerError
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults = append(e.faults, f)
}

// ReleaseHeld ends every request a Hold fault is holding now: each
// connection is closed unanswered, as when its client gives up. Requests
// held later are held again.
func (e *Emulator) ReleaseHeld() {
	e.mu.Lock()
	defer e.mu.Unlock()
	close(e.release)
	e.release = make(chan struct{})
}

// ClearFaults drops every queued fault.
func (e *Emulator) ClearFaults() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults = nil
}

// SetQuotaPerMinute limits requests per rolling minute, like Google's
// per-user quota: read requests (spreadsheets.get, values.get,
// values.batchGet) and write requests (everything else but Drive's
// files.get, which Drive's own quota covers) are counted
// separately, n each, and each credential (the request's Authorization
// header; none is one more) has its own, as each user has on Google.
// Requests beyond it get 429 RESOURCE_EXHAUSTED with Google's body
// ("Quota exceeded for quota metric 'Read requests' ...", its ErrorInfo
// naming the quota_limit). Rejected requests do not use quota. 0 (the
// default, the demo's) means unlimited.
func (e *Emulator) SetQuotaPerMinute(n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.quota = n
	e.reads, e.writes = map[string][]time.Time{}, map[string][]time.Time{}
}

// ValueInputOptions returns how each write request received asked its
// values to be stored, in order, the last RequestLogLimit of them:
//
//   - values.update, values.append, values.batchUpdate: the request's
//     valueInputOption ("" where it had none);
//   - spreadsheets.batchUpdate holding one or more updateCells or
//     appendCells (which have no valueInputOption): "RAW" when every value
//     they write is a stringValue, numberValue or boolValue, stored as it
//     is and never parsed, as RAW stores it; "FORMULA" when any carries a
//     formulaValue, which makes a live formula. One entry per batchUpdate,
//     however many updateCells and appendCells it holds; a batchUpdate
//     without them (addSheet, sortRange, copyPaste...) has none: a
//     copyPaste writes no value of the client's, it copies cells already
//     in the workbook.
//
// So a test asserts invariant 2 (every write RAW, text from the public
// never a formula) by checking that every entry is "RAW", whichever of the
// two kinds of write the client used. Like Requests, an entry is logged when
// the request is received, whether or not it then succeeds.
func (e *Emulator) ValueInputOptions() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return logTail(e.inputs)
}

// Requests returns a copy of the request log: the last RequestLogLimit
// requests, oldest first (Count has the exact totals).
func (e *Emulator) Requests() []Request {
	e.mu.Lock()
	defer e.mu.Unlock()
	return logTail(e.reqs)
}

// ---- errors ----

// apiError is an error answered with Google's JSON error body.
type apiError struct {
	code    int
	msg     string
	details []any
}

func (e *apiError) Error() string { return e.msg }

func errf(code int, format string, args ...any) *apiError {
	return &apiError{code: code, msg: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) *apiError {
	return errf(http.StatusBadRequest, format, args...)
}

func notFound() *apiError {
	return errf(http.StatusNotFound, "Requested entity was not found.")
}

// statusName maps an HTTP status to the google.rpc.Code name Google sends.
func statusName(code int) string {
	switch code {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 409:
		return "ABORTED"
	case 412:
		return "FAILED_PRECONDITION"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 499:
		return "CANCELLED"
	case 500:
		return "INTERNAL"
	case 501:
		return "NOT_IMPLEMENTED"
	case 503:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	return "UNKNOWN"
}

func isRead(method string) bool {
	return method == MethodGet || method == MethodValuesGet || method == MethodValuesBatchGet
}

func quotaError(method, msg string, limit int) *apiError {
	kind, limitName := "Write", "WriteRequestsPerMinutePerUser"
	if isRead(method) {
		kind, limitName = "Read", "ReadRequestsPerMinutePerUser"
	}
	if msg == "" {
		msg = fmt.Sprintf("Quota exceeded for quota metric '%s requests' and limit '%s requests per minute per user' of service 'sheets.googleapis.com' for consumer 'project_number:000000000000'.", kind, kind)
	}
	return &apiError{code: 429, msg: msg, details: []any{
		map[string]any{
			"@type":  "type.googleapis.com/google.rpc.ErrorInfo",
			"reason": "RATE_LIMIT_EXCEEDED",
			"domain": "googleapis.com",
			"metadata": map[string]any{
				"service":           "sheets.googleapis.com",
				"consumer":          "projects/000000000000",
				"quota_metric":      "sheets.googleapis.com/" + strings.ToLower(kind) + "_requests",
				"quota_limit":       limitName,
				"quota_limit_value": fmt.Sprint(limit),
				"quota_location":    "global",
			},
		},
		map[string]any{
			"@type": "type.googleapis.com/google.rpc.Help",
			"links": []any{map[string]any{
				"description": "Request a higher quota limit.",
				"url":         "https://cloud.google.com/docs/quotas/help/request_increase",
			}},
		},
	}}
}

func faultError(f Fault, method string) *apiError {
	if f.Status == 429 {
		return quotaError(method, f.Message, 60)
	}
	msg := f.Message
	if msg == "" {
		switch f.Status {
		case 400:
			msg = "Request contains an invalid argument."
		case 401:
			msg = "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."
		case 403:
			msg = "The caller does not have permission"
		case 404:
			msg = "Requested entity was not found."
		case 409:
			msg = "The operation was aborted."
		case 500:
			msg = "Internal error encountered."
		case 502:
			msg = "Bad Gateway"
		case 503:
			msg = "The service is currently unavailable."
		case 504:
			msg = "The request timed out. Please try again."
		default:
			msg = http.StatusText(f.Status)
		}
	}
	return &apiError{code: f.Status, msg: msg}
}

func writeError(w http.ResponseWriter, r *http.Request, e *apiError) {
	body := map[string]any{"code": e.code, "message": e.msg, "status": statusName(e.code)}
	if len(e.details) > 0 {
		body["details"] = e.details
	}
	writeJSON(w, r, e.code, map[string]any{"error": body})
}

// writeJSON answers v as JSON, indented unless the request says
// prettyPrint=false (Google's default is pretty; the Go client turns it off).
func writeJSON(w http.ResponseWriter, r *http.Request, code int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if pp := r.URL.Query().Get("prettyPrint"); pp != "false" && pp != "0" {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		code = 500
		buf.Reset()
		fmt.Fprintf(&buf, `{"error":{"code":500,"message":%q,"status":"INTERNAL"}}`, "emulator: encoding response: "+err.Error())
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Header().Set("Vary", "Origin, X-Origin, Referer")
	if acceptsGzip(r) {
		// As Google does: the wire carries what a client that asks for gzip (Go's net/http
		// does by default) really receives. BestSpeed: the emulator serves tests, whose CPU
		// matters more than a few percent of bytes.
		var z bytes.Buffer
		zw := gzipWriters.Get().(*gzip.Writer)
		zw.Reset(&z)
		zw.Write(buf.Bytes())
		zw.Close()
		gzipWriters.Put(zw)
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Add("Vary", "Accept-Encoding")
		w.WriteHeader(code)
		w.Write(z.Bytes())
		return
	}
	w.WriteHeader(code)
	w.Write(buf.Bytes())
}

// gzipWriters keeps the compressors between answers: a flate writer holds about a megabyte of
// tables, and making one per answer was most of what the emulator allocated.
var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return zw
}}

// acceptsGzip reports whether a request's Accept-Encoding allows gzip.
func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for part := range strings.SplitSeq(v, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			if strings.EqualFold(strings.TrimSpace(name), "gzip") && strings.ReplaceAll(params, " ", "") != "q=0" {
				return true
			}
		}
	}
	return false
}

// ---- routing ----

// call is one routed request.
type call struct {
	method string // API method name
	id     string // spreadsheet id
	rng    string // unescaped range from the path
	query  url.Values
	body   []byte
	fields *maskNode
	resp   reflect.Type // response type, for checking the field mask
	// who is the credential the request came with (its Authorization header, "" for
	// none): Google's per-user quota is counted per credential.
	who string
}

var routeErr = errf(http.StatusNotFound, "Method not found.")

// route maps a request to an API method. Only a literal ":" in the escaped
// path marks a verb; "%3A" inside a range belongs to the range. A literal
// ":" is also accepted inside a range (as curl users type it) unless what
// follows it is the route's verb.
func route(r *http.Request) (*call, *apiError) {
	segs := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	if len(segs) < 2 || segs[0] != "v4" {
		return nil, routeErr
	}
	c := &call{}
	unesc := func(s string) (string, bool) {
		u, err := url.PathUnescape(s)
		return u, err == nil
	}
	m := r.Method
	if len(segs) == 2 {
		if segs[1] == "spreadsheets" && m == http.MethodPost {
			c.method, c.resp = MethodCreate, reflect.TypeFor[sheets.Spreadsheet]()
			return c, nil
		}
		return nil, routeErr
	}
	if segs[1] != "spreadsheets" {
		return nil, routeErr
	}
	idSeg, verb, _ := strings.Cut(segs[2], ":")
	id, ok := unesc(idSeg)
	if !ok || id == "" {
		return nil, routeErr
	}
	c.id = id
	var routed bool
	switch len(segs) {
	case 3:
		routed = c.routeSpreadsheet(verb, m)
	case 4:
		routed = c.routeValues(segs[3], m)
	case 5:
		routed = segs[3] == "values" && c.routeRange(segs[4], m)
	}
	if !routed {
		if m := notEmulated(segs); m != "" {
			return nil, errf(http.StatusNotImplemented, "emulator: %s is not emulated", m)
		}
		return nil, routeErr
	}
	return c, nil
}

// routeSpreadsheet routes /v4/spreadsheets/{id}[:verb]: get and batchUpdate.
func (c *call) routeSpreadsheet(verb, m string) bool {
	switch {
	case verb == "" && m == http.MethodGet:
		c.method, c.resp = MethodGet, reflect.TypeFor[sheets.Spreadsheet]()
	case verb == "batchUpdate" && m == http.MethodPost:
		c.method, c.resp = MethodBatchUpdate, reflect.TypeFor[sheets.BatchUpdateSpreadsheetResponse]()
	default:
		return false
	}
	return true
}

// routeValues routes /v4/spreadsheets/{id}/values:verb: batchGet and batchUpdate.
func (c *call) routeValues(seg, m string) bool {
	switch {
	case seg == "values:batchGet" && m == http.MethodGet:
		c.method, c.resp = MethodValuesBatchGet, reflect.TypeFor[sheets.BatchGetValuesResponse]()
	case seg == "values:batchUpdate" && m == http.MethodPost:
		c.method, c.resp = MethodValuesBatchUpdate, reflect.TypeFor[sheets.BatchUpdateValuesResponse]()
	case seg == "values:batchClear" && m == http.MethodPost:
		c.method, c.resp = MethodValuesBatchClear, reflect.TypeFor[sheets.BatchClearValuesResponse]()
	default:
		return false
	}
	return true
}

// notEmulated names a Sheets API method Google has and the emulator doesn't serve, for its
// path ("" for a path that is no method of Google's: 404 as Google answers it).
func notEmulated(segs []string) string {
	switch {
	case len(segs) == 3 && strings.HasSuffix(segs[2], ":getByDataFilter"):
		return "spreadsheets.getByDataFilter"
	case len(segs) >= 4 && strings.HasPrefix(segs[3], "developerMetadata"):
		return "spreadsheets.developerMetadata"
	case len(segs) == 5 && segs[3] == "sheets" && strings.HasSuffix(segs[4], ":copyTo"):
		return "spreadsheets.sheets.copyTo"
	case len(segs) == 4:
		for _, v := range []string{"batchGetByDataFilter", "batchUpdateByDataFilter", "batchClearByDataFilter"} {
			if segs[3] == "values:"+v {
				return "values." + v
			}
		}
	}
	return ""
}

// routeRange routes /v4/spreadsheets/{id}/values/{range}[:verb]: get, update, append and
// clear of one range. Only a POST's ":append" or ":clear" at the end is a verb; any other ":"
// belongs to the range.
func (c *call) routeRange(rs, m string) bool {
	verb := ""
	if i := strings.LastIndex(rs, ":"); i >= 0 && m == http.MethodPost {
		switch rs[i+1:] {
		case "append", "clear":
			rs, verb = rs[:i], rs[i+1:]
		}
	}
	rng, err := url.PathUnescape(rs)
	if err != nil {
		return false
	}
	c.rng = rng
	switch {
	case verb == "" && m == http.MethodGet:
		c.method, c.resp = MethodValuesGet, reflect.TypeFor[sheets.ValueRange]()
	case verb == "" && m == http.MethodPut:
		c.method, c.resp = MethodValuesUpdate, reflect.TypeFor[sheets.UpdateValuesResponse]()
	case verb == "append":
		c.method, c.resp = MethodValuesAppend, reflect.TypeFor[sheets.AppendValuesResponse]()
	case verb == "clear":
		c.method, c.resp = MethodValuesClear, reflect.TypeFor[sheets.ClearValuesResponse]()
	default:
		return false
	}
	return true
}

// routeDrive routes the one Drive API call the emulator answers: GET /drive/v3/files/{id}
// (the spreadsheet's name, version and times). Any other Drive method is refused with 501
// naming it; a path that is none of Drive's is a 404.
func routeDrive(r *http.Request) (*call, *apiError) {
	segs := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	if len(segs) == 4 && segs[1] == "v3" && segs[2] == "files" && r.Method == http.MethodGet {
		id, err := url.PathUnescape(segs[3])
		if err != nil || id == "" {
			return nil, routeErr
		}
		return &call{method: MethodDriveGet, id: id, resp: reflect.TypeFor[drive.File]()}, nil
	}
	if m := driveMethod(r.Method, segs); m != "" {
		return nil, errf(http.StatusNotImplemented, "emulator: the Drive API's %s is not emulated (only files.get of a spreadsheet is)", m)
	}
	return nil, routeErr
}

// driveMethod names the Drive API method of a path under /drive or /upload/drive ("" for
// none): files.list, create, delete, copy, export, update and the like, comments and
// permissions.
func driveMethod(verb string, segs []string) string {
	if len(segs) > 0 && segs[0] == "upload" {
		segs = segs[1:]
	}
	if len(segs) < 3 || segs[0] != "drive" || (segs[1] != "v2" && segs[1] != "v3") {
		return ""
	}
	res := segs[2]
	switch len(segs) {
	case 3:
		switch verb {
		case http.MethodGet:
			return res + ".list"
		case http.MethodPost:
			return res + ".create"
		}
	case 4:
		switch verb {
		case http.MethodGet:
			return res + ".get"
		case http.MethodPatch, http.MethodPut:
			return res + ".update"
		case http.MethodDelete:
			return res + ".delete"
		}
	default:
		sub := segs[4]
		if len(segs) == 5 && (sub == "copy" || sub == "export" || sub == "watch") {
			return res + "." + sub
		}
		if len(segs) == 5 {
			return sub + ".list"
		}
		return sub + "." + strings.ToLower(verb)
	}
	return res + "." + strings.ToLower(verb)
}

// driveTime is how Drive writes its times (RFC 3339 in UTC, milliseconds).
const driveTime = "2006-01-02T15:04:05.000Z"

func isValueWrite(method string) bool {
	return method == MethodValuesUpdate || method == MethodValuesAppend || method == MethodValuesBatchUpdate
}

// loggedInput is the ValueInputOptions log entry for a request, and whether
// it has one: the valueInputOption of a values write ("" where it had none);
// for a spreadsheets.batchUpdate holding at least one updateCells or
// appendCells, what those cells would store (see cellsInput). It is
// decided from the request as received, before it is performed, like the
// rest of the log.
func loggedInput(method string, r *http.Request, body []byte) (string, bool) {
	switch {
	case method == MethodValuesBatchUpdate:
		var peek struct {
			ValueInputOption string `json:"valueInputOption"`
		}
		_ = json.Unmarshal(body, &peek)
		return clipLogged(peek.ValueInputOption), true
	case isValueWrite(method):
		return clipLogged(r.URL.Query().Get("valueInputOption")), true
	case method == MethodBatchUpdate && len(body) <= maxBody:
		return cellsInput(body)
	}
	return "", false
}

// jsonPresent records that a JSON field was present and not null, without
// keeping (or copying) its value.
type jsonPresent bool

func (p *jsonPresent) UnmarshalJSON(b []byte) error {
	*p = jsonPresent(string(b) != "null")
	return nil
}

// cellsInput classifies the updateCells and appendCells requests of a
// spreadsheets.batchUpdate body for the ValueInputOptions log: "RAW" when
// no written cell carries a formulaValue (stringValue, numberValue and
// boolValue are stored as they are, never parsed), "FORMULA" when any does,
// whatever its text. ok is false when the body holds neither request (or
// is not JSON). Keys and fields are matched as batchUpdate, updateCells and
// appendCells decode them.
func cellsInput(body []byte) (opt string, ok bool) {
	var in struct {
		Requests []map[string]json.RawMessage `json:"requests"`
	}
	if json.Unmarshal(body, &in) != nil {
		return "", false
	}
	opt = "RAW"
	for _, req := range in.Requests {
		raw, has := req["updateCells"]
		if !has {
			raw, has = req["appendCells"]
		}
		if !has {
			continue
		}
		ok = true
		var uc struct {
			Rows []struct {
				Values []struct {
					UserEnteredValue *struct {
						FormulaValue jsonPresent `json:"formulaValue"`
					} `json:"userEnteredValue"`
				} `json:"values"`
			} `json:"rows"`
		}
		_ = json.Unmarshal(raw, &uc) // an updateCells that does not decode is refused and writes nothing
		for _, row := range uc.Rows {
			for _, v := range row.Values {
				if v.UserEnteredValue != nil && v.UserEnteredValue.FormulaValue {
					opt = "FORMULA"
				}
			}
		}
	}
	return opt, ok
}

// ServeHTTP answers one Sheets v4 REST request.
func (e *Emulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Every answer carries Google's clock, as Google's do: triage's journal leases are told in
	// it, never in a client's own clock.
	w.Header().Set("Date", e.clock().UTC().Format(http.TimeFormat))
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return // the client went away
	}
	c, rerr := route(r)
	if c != nil {
		c.who = r.Header.Get("Authorization")
	}
	if strings.HasPrefix(r.URL.Path, "/drive/") || strings.HasPrefix(r.URL.Path, "/upload/drive/") {
		c, rerr = routeDrive(r)
	}
	method := ""
	if c != nil {
		method = c.method
	}
	input, isWrite := loggedInput(method, r, body)
	e.mu.Lock()
	e.reqs = logAppend(e.reqs, Request{
		Method:        method,
		HTTPMethod:    clipLogged(r.Method),
		Path:          clipLogged(r.URL.Path),
		RawQuery:      clipLogged(r.URL.RawQuery),
		Authorization: clipLogged(r.Header.Get("Authorization")),
	})
	if method != "" {
		e.counts[method]++
	}
	if isWrite {
		e.inputs = logAppend(e.inputs, input)
	}
	latency := e.latency
	hook := e.hook
	e.mu.Unlock()

	if hook != nil && rerr == nil {
		hook(Request{Method: method, HTTPMethod: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery})
	}

	if latency > 0 {
		t := time.NewTimer(latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if rerr != nil {
		writeError(w, r, rerr)
		return
	}
	if len(body) > maxBody {
		writeError(w, r, errf(http.StatusRequestEntityTooLarge, "Request payload size exceeds the limit: %d bytes.", maxBody))
		return
	}
	c.query = r.URL.Query()
	c.body = body
	if f := c.query.Get("fields"); f != "" {
		mask, err := parseMask(f)
		if err == nil {
			err = mask.check(c.resp, "")
		}
		if err != nil {
			writeError(w, r, badRequest("%s", err.Error()))
			return
		}
		c.fields = mask
	}

	resp, aerr, lost := e.perform(c)
	switch lost.kind {
	case lostHold:
		select {
		case <-r.Context().Done():
		case <-lost.release:
		}
		abandon(w)
		return
	case lostDrop:
		abandon(w)
		return
	}
	if aerr != nil {
		writeError(w, r, aerr)
		return
	}
	if c.fields != nil {
		if resp, err = applyMask(resp, c.fields); err != nil {
			writeError(w, r, errf(500, "emulator: applying field mask: %v", err))
			return
		}
	}
	writeJSON(w, r, http.StatusOK, resp)
}

// lostAnswer says how a Drop or Hold fault loses a performed request's
// answer; the zero value answers normally.
type lostAnswer struct {
	kind    int
	release chan struct{} // for a hold: closed by ReleaseHeld
}

// Kinds of lostAnswer.
const (
	lostNone = iota
	lostDrop
	lostHold
)

// abandon closes the request's connection without writing a response (a
// server that cannot hijack aborts the handler, which does the same).
func abandon(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// perform applies faults and quota, then the request itself, under the
// lock. The response it returns shares nothing with the emulator's state,
// so it is encoded and written after the lock is released. lost is of
// kind lostDrop or lostHold when a fault takes the answer away.
func (e *Emulator) perform(c *call) (resp any, aerr *apiError, lost lostAnswer) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var fault *Fault
	if i := slices.IndexFunc(e.faults, func(f Fault) bool { return f.Method == "" || f.Method == c.method }); i >= 0 {
		f := e.faults[i]
		fault = &f
		e.faults[i].Times--
		if e.faults[i].Times <= 0 {
			e.faults = slices.Delete(e.faults, i, i+1)
		}
	}
	if fault == nil {
		// Drive's quota is its own, not the Sheets API's: files.get is not counted.
		if c.method != MethodDriveGet {
			if qerr := e.takeQuota(c.method, c.who); qerr != nil {
				return nil, qerr, lostAnswer{}
			}
		}
	}
	if fault != nil && !fault.After && !fault.Drop && !fault.Hold {
		return nil, faultError(*fault, c.method), lostAnswer{}
	}
	resp, aerr = e.handle(c)
	switch {
	case fault == nil:
		return resp, aerr, lostAnswer{}
	case fault.Hold:
		return nil, nil, lostAnswer{kind: lostHold, release: e.release}
	case fault.Drop:
		return nil, nil, lostAnswer{kind: lostDrop}
	}
	return nil, faultError(*fault, c.method), lostAnswer{}
}

// applyMask answers with what the mask selects of v. The answer is encoded once and cut at
// the levels the mask narrows; what it selects whole stays the encoded text, so a tab's
// values are not decoded into maps and encoded again.
func applyMask(v any, m *maskNode) (any, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // as writeJSON encodes: the kept text goes out as it is
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return m.filter(bytes.TrimSpace(buf.Bytes()))
}

// takeQuota uses one unit of the method's per-minute quota of the credential who; the caller
// holds e.mu.
func (e *Emulator) takeQuota(method, who string) *apiError {
	if e.quota <= 0 {
		return nil
	}
	byWho := e.writes
	if isRead(method) {
		byWho = e.reads
	}
	q := byWho[who]
	now := e.now()
	cut := now.Add(-time.Minute)
	i := 0
	for i < len(q) && !q[i].After(cut) {
		i++
	}
	q = q[i:]
	if len(q) >= e.quota {
		byWho[who] = q
		return quotaError(method, "", e.quota)
	}
	byWho[who] = append(q, now)
	return nil
}

// handle performs a routed request; the caller holds e.mu.
func (e *Emulator) handle(c *call) (any, *apiError) {
	if c.method == MethodCreate {
		return e.create(c)
	}
	b := e.books[c.id]
	if b == nil {
		return nil, notFound()
	}
	switch c.method {
	case MethodDriveGet:
		// Drive's int64 fields are JSON strings.
		return map[string]any{"kind": "drive#file", "id": b.id, "name": b.title, "mimeType": "application/vnd.google-apps.spreadsheet",
			"version":     strconv.FormatInt(e.driveVersion(b), 10),
			"createdTime": b.created.UTC().Format(driveTime), "modifiedTime": b.modified.UTC().Format(driveTime)}, nil
	case MethodGet:
		return e.getSpreadsheet(b, c)
	case MethodValuesGet:
		return valuesGet(b, c)
	case MethodValuesBatchGet:
		return valuesBatchGet(b, c)
	}
	// A write is applied to a copy, kept only if all of it succeeds (Google
	// applies a request atomically: "if any request is not valid, no
	// requests will be applied") and the result loads again.
	work := b.clone()
	var resp any
	var aerr *apiError
	switch c.method {
	case MethodBatchUpdate:
		resp, aerr = e.batchUpdate(work, c)
	case MethodValuesUpdate:
		resp, aerr = valuesUpdate(work, c)
	case MethodValuesAppend:
		resp, aerr = valuesAppend(work, c)
	case MethodValuesBatchUpdate:
		resp, aerr = valuesBatchUpdate(work, c)
	case MethodValuesBatchClear:
		resp, aerr = valuesBatchClear(work, c)
	case MethodValuesClear:
		resp, aerr = valuesClear(work, c)
	default:
		return nil, routeErr
	}
	if aerr != nil {
		return nil, aerr
	}
	if err := e.commit(work); err != nil {
		return nil, errf(http.StatusInternalServerError, "%s", err.Error())
	}
	return resp, nil
}

// newSpreadsheetID returns a random 44-character id like Google's.
func newSpreadsheetID() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	var buf [44]byte
	rand.Read(buf[:])
	for i, c := range buf {
		buf[i] = alphabet[int(c)%len(alphabet)]
	}
	buf[0] = '1'
	return string(buf[:])
}
