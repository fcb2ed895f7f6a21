package emulator

import (
	"context"
	"errors"
	"io"
	"syscall"
	"testing"
	"time"

	"google.golang.org/api/googleapi"
	sheets "google.golang.org/api/sheets/v4"
)

// networkError reports whether err is what a client sees when the
// connection closes before any answer: EOF or a reset, not an API error.
func networkError(err error) bool {
	var ge *googleapi.Error
	return err != nil && !errors.As(err, &ge) && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET))
}

func markRead(svc *sheets.Service, ctx context.Context) error {
	_, err := svc.Spreadsheets.BatchUpdate(bookID, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{
		updateCells(&sheets.UpdateCellsRequest{Start: &sheets.GridCoordinate{SheetId: inboxID, RowIndex: 1, ColumnIndex: 4}, Rows: []*sheets.RowData{row(str("read"))}}),
	}}).Context(ctx).Do()
	return err
}

func statusOf(e *Emulator) any { return e.Cells(bookID, "Inbox")[1][4] }

// TestFaultDrop: the write is applied, then the connection closes with no
// answer at all.
func TestFaultDrop(t *testing.T) {
	e, svc, _ := newServer(t)
	e.InjectFault(Fault{Method: MethodBatchUpdate, Drop: true})
	err := markRead(svc, context.Background())
	if !networkError(err) {
		t.Fatalf("got %v (%T), want a network error (EOF or connection reset)", err, err)
	}
	if got := statusOf(e); got != "read" {
		t.Errorf("the dropped write was not applied: E2 = %v", got)
	}
	// The transport does not resend a POST: one request was received.
	if n := e.Count(MethodBatchUpdate); n != 1 {
		t.Errorf("%d batchUpdate requests, want 1", n)
	}
	// A PUT (values.update) likewise; the fault is used up after Times.
	e.InjectFault(Fault{Method: MethodValuesUpdate, Drop: true, Times: 2})
	for i := range 3 {
		_, err := svc.Spreadsheets.Values.Update(bookID, "Inbox!E3", &sheets.ValueRange{Values: [][]any{{i}}}).ValueInputOption("RAW").Do()
		if (i < 2) != networkError(err) {
			t.Errorf("update %d: %v", i, err)
		}
		if got := e.Cells(bookID, "Inbox")[2][4]; got != float64(i) {
			t.Errorf("update %d not applied: E3 = %v", i, got)
		}
	}
	if n := e.Count(MethodValuesUpdate); n != 3 {
		t.Errorf("%d values.update requests, want 3", n)
	}
}

// TestFaultDropReplayedGET: Go's transport resends a replayable request
// (a GET) whose reused connection closed unanswered, so a dropped read may
// reach the emulator twice and succeed. Which happens depends on whether
// the transport reused the keep-alive connection: both outcomes are
// checked for what they must show.
func TestFaultDropReplayedGET(t *testing.T) {
	e, svc, _ := newServer(t)
	if _, err := svc.Spreadsheets.Values.Get(bookID, "Inbox!A1").Do(); err != nil {
		t.Fatal(err)
	}
	e.InjectFault(Fault{Method: MethodValuesGet, Drop: true})
	vr, err := svc.Spreadsheets.Values.Get(bookID, "Inbox!A1").Do()
	switch n := e.Count(MethodValuesGet); {
	case err == nil && n == 3 && vr.Values[0][0] == "Timestamp": // resent on a fresh connection
	case networkError(err) && n == 2: // the connection was not reused: not resent
	default:
		t.Errorf("got %+v, %v after %d values.get requests", vr, err, n)
	}
}

// expiring is a context whose deadline passes when the test says so, so
// that "the client gave up after the write was applied" does not depend
// on how fast the request travels: Done closes on expire, and Err is then
// context.DeadlineExceeded, as for a real deadline.
type expiring struct{ done chan struct{} }

func (c *expiring) expire()                   { close(c.done) }
func (*expiring) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *expiring) Done() <-chan struct{}     { return c.done }
func (*expiring) Value(any) any               { return nil }
func (c *expiring) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// TestFaultHold: the write is applied, then nothing is answered until the
// client's own deadline passes; the client sees context.DeadlineExceeded.
func TestFaultHold(t *testing.T) {
	e, svc, _ := newServer(t)
	t.Cleanup(e.ReleaseHeld) // runs before the server's Close, which waits for handlers
	e.InjectFault(Fault{Method: MethodBatchUpdate, Hold: true})
	ctx := &expiring{done: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- markRead(svc, ctx) }()
	if !until(t, func() bool { return statusOf(e) == "read" }) {
		t.Fatal("the held write was never applied")
	}
	select {
	case err := <-done:
		t.Fatalf("answered while held: %v", err)
	default:
	}
	ctx.expire()
	if err := <-done; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want context.DeadlineExceeded", err)
	}
	// The emulator serves on.
	if _, err := svc.Spreadsheets.Values.Get(bookID, "Inbox!E2").Do(); err != nil {
		t.Fatal(err)
	}
}

// TestFaultHoldRealDeadline is TestFaultHold with a real short deadline on
// a connection already open: the server never answers, so the deadline
// always passes first.
func TestFaultHoldRealDeadline(t *testing.T) {
	e, svc, _ := newServer(t)
	t.Cleanup(e.ReleaseHeld)
	if _, err := svc.Spreadsheets.Values.Get(bookID, "Inbox!A1").Do(); err != nil {
		t.Fatal(err)
	}
	e.InjectFault(Fault{Hold: true, Drop: true}) // Hold wins
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := markRead(svc, ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want context.DeadlineExceeded", err)
	}
	if !until(t, func() bool { return statusOf(e) == "read" }) {
		t.Error("the held write was not applied")
	}
}

// TestReleaseHeld ends a hold whose client has no deadline: the connection
// closes unanswered.
func TestReleaseHeld(t *testing.T) {
	e, svc, _ := newServer(t)
	t.Cleanup(e.ReleaseHeld)
	e.InjectFault(Fault{Method: MethodBatchUpdate, Hold: true})
	done := make(chan error, 1)
	go func() { done <- markRead(svc, context.Background()) }()
	if !until(t, func() bool { return statusOf(e) == "read" }) {
		t.Fatal("the held write was never applied")
	}
	e.ReleaseHeld()
	if err := <-done; !networkError(err) {
		t.Fatalf("got %v, want a network error", err)
	}
	// Faults are used up: the next write is answered.
	if err := markRead(svc, context.Background()); err != nil {
		t.Fatal(err)
	}
}
