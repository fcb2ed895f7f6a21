package serve

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/tui"
)

// Inbox columns of the fixture.
const (
	colStatus    = 4
	colID        = 5
	colTriagedBy = 6
)

// A write from one session: the row records that person in triaged_by, and every other
// session is pushed a workbook holding the change, without asking.
func TestWriteShowsInOtherSessions(t *testing.T) {
	f := newFixture(t, time.Hour, 4)
	f.run(t)
	a, b := f.hub.Session(tom), f.hub.Session(vera)
	defer a.Close()
	defer b.Close()
	next(t, b.Updates) // the cached first screen
	res, err := a.Store.Apply(context.Background(), []model.Edit{setStatus("Inbox", "id-1", "new", "done")})
	if err != nil || len(res.Applied) != 1 {
		t.Fatalf("apply: %v %s", err, res.Summary())
	}
	if got := f.cell("Inbox", colID, "id-1", colTriagedBy); got != "tom" {
		t.Errorf("triaged_by = %q, want tom", got)
	}
	if got := status(t, next(t, b.Updates), "Inbox", "id-1"); got != "done" {
		t.Errorf("the other session was pushed status %q, want done", got)
	}
	if log := f.log.String(); !strings.Contains(log, `who=tom`) || !strings.Contains(log, `id=id-1`) || !strings.Contains(log, `field=status old=new new=done`) {
		t.Errorf("the change isn't logged with who, ID and old → new:\n%s", log)
	}
}

// A viewer writes nothing, even through a key the TUI forgot to hide: refused with who, role
// and why, before any request.
func TestViewerApplyRefused(t *testing.T) {
	f := newFixture(t, time.Hour, 4)
	f.run(t)
	s := f.hub.Session(vera)
	defer s.Close()
	if !s.Store.ReadOnly() || s.ReadOnlyWhy != "vera is a viewer" {
		t.Errorf("a viewer's store: ReadOnly %v, why %q", s.Store.ReadOnly(), s.ReadOnlyWhy)
	}
	f.emu.ResetCounts()
	_, err := s.Store.Apply(context.Background(), []model.Edit{setStatus("Inbox", "id-1", "new", "done")})
	var ae *model.AccessError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "vera is a viewer: only a triager or an operator can change rows") {
		t.Fatalf("err = %v", err)
	}
	if n := f.total(); n != 0 {
		t.Errorf("%d requests for a refused write (%v), want 0", n, f.emu.Counts())
	}
	if got := f.cell("Inbox", colID, "id-1", colStatus); got != "new" {
		t.Errorf("status = %q after a viewer's write", got)
	}
	if !strings.Contains(f.log.String(), "refused") {
		t.Error("the refusal isn't logged")
	}
}

// A triager sets statuses but doesn't requeue a claimed job; a batch with one edit not theirs
// is refused whole.
func TestTriagerRequeueRefusedStatusAllowed(t *testing.T) {
	f := newFixture(t, time.Hour, 4)
	f.run(t)
	s := f.hub.Session(tom)
	defer s.Close()
	requeue := model.Edit{Tab: "Jobs", ID: "job-1",
		Expect: map[model.Field]string{model.FStatus: "claimed", model.FClaimedBy: "worker-7"},
		Set:    map[model.Field]string{model.FStatus: "pending", model.FClaimedBy: ""}}
	f.emu.ResetCounts()
	_, err := s.Store.Apply(context.Background(), []model.Edit{setStatus("Inbox", "id-2", "new", "done"), requeue})
	if err == nil || !strings.Contains(err.Error(), "tom is a triager: only an operator can requeue a claimed job") {
		t.Fatalf("err = %v", err)
	}
	if n := f.emu.Count(mBatchUpdate); n != 0 {
		t.Errorf("%d batchUpdates for a refused batch", n)
	}
	if got := f.cell("Inbox", colID, "id-2", colStatus); got != "new" {
		t.Errorf("part of a refused batch was written: status %q", got)
	}
	res, err := s.Store.Apply(context.Background(), []model.Edit{setStatus("Inbox", "id-2", "new", "read")})
	if err != nil || len(res.Applied) != 1 {
		t.Fatalf("a triager's status change: %v %s", err, res.Summary())
	}
	if got := f.cell("Inbox", colID, "id-2", colStatus); got != "read" {
		t.Errorf("status %q, want read", got)
	}
}

// A refresh asked for by one person reads the sheet once and is pushed to everyone; another
// right after is answered from the cache; refreshes asked at once share one read.
func TestRefreshByOneServesAll(t *testing.T) {
	f := newFixture(t, time.Hour, 4)
	f.run(t)
	var ss []*Session
	for _, u := range []User{alice, tom, vera} {
		s := f.hub.Session(u)
		defer s.Close()
		next(t, s.Updates)
		ss = append(ss, s)
	}
	if err := f.emu.SetCell(sheetID, "Inbox", 2, 4, "spam"); err != nil { // id-0, by someone in the sheet
		t.Fatal(err)
	}
	f.clock.add(time.Minute)
	f.emu.ResetCounts()
	wb, err := ss[0].Store.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := f.emu.Count(mBatchGet); n != 1 {
		t.Errorf("a refresh read %d times, want 1", n)
	}
	if st := wb.TabNamed("Inbox").Records[wb.TabNamed("Inbox").Index("id-0")].Status; st != "spam" {
		t.Errorf("the refresher got %q", st)
	}
	for _, s := range ss[1:] {
		if got := status(t, next(t, s.Updates), "Inbox", "id-0"); got != "spam" {
			t.Errorf("%s was pushed %q, want spam", s.Identity, got)
		}
	}
	if _, err := ss[1].Store.Load(context.Background()); err != nil || f.emu.Count(mBatchGet) != 1 {
		t.Errorf("a refresh within %v of another read again (%d reads, %v)", freshFor, f.emu.Count(mBatchGet), err)
	}

	// Eight at once, the cache stale: one read between them.
	f.clock.add(time.Minute)
	f.emu.SetLatency(100 * time.Millisecond)
	f.emu.ResetCounts()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := ss[2].Store.Load(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := f.emu.Count(mBatchGet); n != 1 {
		t.Errorf("8 refreshes at once read %d times, want 1", n)
	}
}

// A closed session is no longer pushed to, and its channel is closed.
func TestSessionClose(t *testing.T) {
	f := newFixture(t, time.Hour, 4)
	f.run(t)
	s := f.hub.Session(alice)
	next(t, s.Updates)
	s.Close()
	s.Close()
	if _, ok := <-s.Updates; ok {
		t.Error("the channel is open after Close")
	}
	if n := f.hub.Sessions(); n != 0 {
		t.Errorf("%d sessions after Close", n)
	}
	f.clock.add(time.Minute)
	if _, err := f.hub.Session(tom).Store.Load(context.Background()); err != nil { // pushes to all: must not panic
		t.Fatal(err)
	}
}

// A refusal for the role is a whole sentence naming the role that may (never "…is an
// operator's"), for every kind of edit a role may not make.
func TestRefusedEditNamesTheRoleNeeded(t *testing.T) {
	requeue := model.Edit{Tab: "Jobs", ID: "job-1",
		Expect: map[model.Field]string{model.FStatus: "claimed", model.FClaimedBy: "worker-7"},
		Set:    map[model.Field]string{model.FStatus: "pending", model.FClaimedBy: ""}}
	payload := model.Edit{Tab: "failed_calls", ID: "k-1",
		Set: map[model.Field]string{model.FPayload: `{"a":1}`, model.FURL: "https://x", model.FStatus: "dead"}}
	status := setStatus("Inbox", "id-1", "new", "done")
	for _, c := range []struct {
		a    model.Access
		e    model.Edit
		want string
	}{
		{model.AccessViewer, status, "only a triager or an operator can change rows"},
		{model.AccessViewer, requeue, "only an operator can requeue a claimed job"},
		{model.AccessTriager, requeue, "only an operator can requeue a claimed job"},
		{model.AccessTriager, payload, "only an operator can write payload, url (a triager sets statuses, clears sticky errors and discards)"},
		{model.AccessTriager, status, ""},
		{model.AccessOperator, payload, ""},
	} {
		if got := refusedEdit(c.a, c.e); got != c.want {
			t.Errorf("a %s's %v: %q, want %q", c.a, c.e.Set, got, c.want)
		}
	}
}

// A session's TUI options carry the person's role and name, so the TUI offers only what
// the role allows.
func TestSessionOptionsCarryTheRole(t *testing.T) {
	f := newFixture(t, time.Hour, 4)
	f.run(t)
	s := f.hub.Session(tom)
	defer s.Close()
	o := s.Options(tui.Options{})
	if o.Access != model.AccessTriager || o.User != "tom" || o.Identity != "tom · triager" {
		t.Errorf("options: access %q user %q identity %q", o.Access, o.User, o.Identity)
	}
}
