package sheets

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A journal entry (journal.go) carries its writer and a lease: until the lease runs out, no
// other triage settles the entry, because its writer may still be settling it itself (a write
// whose answer is late, or lost and about to be fenced). Leases are told in Google's clock
// (the Date header of its answers), never in a host's own: two hosts' clocks may differ by
// minutes, while both see the same Date. A writer never acts on an entry past its own lease
// (it stops, saying the write may have landed), so a lease that ran out is proof that nobody
// is acting on it any more.
//
// On the writer's own host there is a quicker proof: an entry whose process is gone (the same
// host and boot, and no process with its PID) is settled at once, so a command killed by a
// cron timeout is put right by the next run, not ten minutes later.

// leaseFor is how long a write's entry is its writer's alone. An Apply gives up long before
// (its retry budget is bounded); one that hasn't, stops (see writer.leaseLeft).
const leaseFor = 10 * time.Minute

// leaseSkew is how far past a lease another process waits: Date has whole seconds, and the
// answers that carried it took time to arrive.
const leaseSkew = 30 * time.Second

// leaseMargin is how long before its lease runs out a writer stops acting on its entry.
const leaseMargin = time.Minute

// writerID names the process that made a journal entry: for messages (Who, Host) and for the
// same-host proof that it is gone (Host, Boot, PID). Run tells two stores of one process apart.
type writerID struct {
	Who  string `json:"who,omitempty"`
	Host string `json:"host,omitempty"`
	Boot string `json:"boot,omitempty"`
	// NS is the PID namespace the PID is in (containers on one host share its boot ID, and
	// with host networking its name, but not their PIDs).
	NS  string `json:"ns,omitempty"`
	PID int    `json:"pid,omitempty"`
	Run string `json:"run"`
}

// String is the writer as a person reads it: "ann on jump1 (pid 4242)".
func (w writerID) String() string {
	s := w.Who
	if s == "" {
		s = "triage"
	}
	if w.Host != "" {
		s += " on " + w.Host
	}
	if w.PID > 0 {
		s += " (pid " + strconv.Itoa(w.PID) + ")"
	}
	return s
}

// thisProcess is the writerID of this process, Run left to each store.
var thisProcess = sync.OnceValue(func() writerID {
	host, _ := os.Hostname()
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	ns, _ := os.Readlink("/proc/self/ns/pid")
	return writerID{Host: host, Boot: strings.TrimSpace(string(boot)), NS: ns, PID: os.Getpid()}
})

// newWriterID is a store's writer identity.
func newWriterID(who string) writerID {
	w := thisProcess()
	var b [8]byte
	_, _ = rand.Read(b[:])
	w.Run = hex.EncodeToString(b[:])
	w.Who = who
	return w
}

// gone reports whether an entry's writer is provably not running: it ran on this host, and
// this host has rebooted since, or no process of its PID namespace has its PID. Anything
// else (another host, another container, a host that can't tell) is not proof.
func (w writerID) gone() bool {
	me := thisProcess()
	if w.Host == "" || w.Host != me.Host || w.Boot == "" || me.Boot == "" {
		return false
	}
	if w.Boot != me.Boot {
		return true
	}
	if w.PID <= 0 || w.PID == me.PID || w.NS == "" || w.NS != me.NS {
		return false
	}
	return processGone(w.PID)
}

// googleClock is Google's time as the Date headers of its answers tell it: the offset from
// this host's clock, measured at the last answer.
type googleClock struct {
	mu     sync.Mutex
	offset time.Duration
	// local is this host's clock (nil: time.Now); a test moves it to let a lease run out.
	local func() time.Time
}

func (g *googleClock) localNow() time.Time {
	if g.local != nil {
		return g.local()
	}
	return time.Now()
}

// saw takes the Date header of an answer.
func (g *googleClock) saw(h http.Header) {
	if h == nil {
		return
	}
	t, err := http.ParseTime(h.Get("Date"))
	if err != nil {
		return
	}
	g.mu.Lock()
	g.offset = t.Sub(g.localNow())
	g.mu.Unlock()
}

// now is Google's time now (this host's, before any answer).
func (g *googleClock) now() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.localNow().Add(g.offset).UTC().Truncate(time.Second)
}
