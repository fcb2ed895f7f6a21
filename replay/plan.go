package replay

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/triage-dev/triage/model"
)

// Job is one row that a run will replay: its call and what the write-back needs.
type Job struct {
	// ID is the row's identity at write time (its effective key, invariant 3).
	ID string
	// Row is the 1-based sheet row at load time (display only).
	Row int
	// Call is what will be sent.
	Call Call
	// Status is the status cell as loaded; the check before sending and the write-back
	// expect it unchanged.
	Status string
	// KeyCell is the key cell as loaded ("" when blank or the tab has no key column); the
	// check before sending expects it unchanged.
	KeyCell string
	// PrevAttempts is the attempts cell as loaded (0 when blank or not a number).
	PrevAttempts int
	// Time is the row's timestamp as loaded (zero when blank or unreadable): a row limit
	// (RunOptions.Limit) takes the oldest rows first.
	Time time.Time
	// KeyOrigin is where the key came from: the key cell, the payload's key field, or minted.
	KeyOrigin model.KeyOrigin
	// SaveKey is set when the key is not in the row's key cell yet (it came from the payload
	// or was minted) and the tab has a key column: Run writes it there before the row's first
	// request leaves, so it can never change afterwards, whatever happens to the config or
	// the row's other cells (invariant 3).
	SaveKey bool
}

// Plan decides which records a run sends and builds their calls. It refuses, with a reason
// naming the row: rows that aren't waiting (delivered, rejected, discarded, unknown status:
// invariant 6); rows without an identity or whose payload key disagrees with the key cell;
// rows whose source isn't configured, has no url_prefixes or doesn't allow the URL
// (invariant 8); rows whose payload can't carry a body key; rows whose key, as the row holds
// it, can't be sent exactly (a control character, a line separator, whitespace at either end:
// invariant 3, model.CheckKey); rows older than the source's KeyTTL, or
// dated in the future, unless force is set; a row whose key is that of an earlier row of recs (replaying
// both would be one call: the receiver would act once, for one of them); and a row whose key
// was minted on a tab without a key column to keep it in. A record listed twice is planned
// once.
//
// A key taken from the payload on a tab without a key column is planned unsaved: the payload
// carries it, so every replay of that payload under that config sends it. Should the config
// later stop reading the payload's key field, the row's key would be a minted one, which such
// a tab refuses, so it is never sent under another key.
func Plan(t *model.Table, recs []*model.Record, sources map[string]*Source, now time.Time, force bool) (jobs []Job, refused []model.Refusal) {
	if t == nil {
		return nil, nil
	}
	p := planner{t: t, sources: sources, now: now, force: force, seenID: map[string]int{}}
	seen := map[*model.Record]bool{}
	for _, r := range recs {
		if r == nil || seen[r] {
			continue
		}
		seen[r] = true
		job, ok, skip, why := p.plan(r)
		switch {
		case ok:
			jobs = append(jobs, job)
		case why != "":
			refused = append(refused, model.Refusal{ID: r.ID, Row: r.Row, Reason: fmt.Sprintf("row %d: %s", r.Row, why), Skipped: skip})
		}
	}
	return jobs, refused
}

// planner is one Plan's state: the rows' table, the sources, the clock, and the row first
// planned with each key.
type planner struct {
	t       *model.Table
	sources map[string]*Source
	now     time.Time
	force   bool
	seenID  map[string]int
}

// plan plans one record: its job (ok), or why it is refused (skip: a row not waiting, left
// alone rather than failed), or neither (a row listed again under its own key).
func (p *planner) plan(r *model.Record) (job Job, ok, skip bool, why string) {
	t := p.t
	if t.Config.Role != model.RoleDeadLetter {
		return Job{}, false, false, fmt.Sprintf("tab %q is not a dead-letter tab; only dead letters are replayed", t.Config.Name)
	}
	if skip, why := statusRefusal(r.Status); why != "" {
		return Job{}, false, skip, why
	}
	key, origin, why := p.identity(r)
	if why != "" {
		return Job{}, false, false, why
	}
	if first, dup := p.seenID[key]; dup {
		if first != r.Row {
			return Job{}, false, false, fmt.Sprintf("same key as row %d: replaying both would be one call (the receiver acts once per key); discard one of them, or give it its own key", first)
		}
		return Job{}, false, false, ""
	}
	p.seenID[key] = r.Row
	call, why := p.call(r, key)
	if why != "" {
		return Job{}, false, false, why
	}
	hasKeyCol := t.Header.Has(model.FKey)
	if origin == model.KeyMinted && !hasKeyCol {
		return Job{}, false, false, "its key was minted but the tab has no key column to keep it in; add a \"key\" header (triage init) and replay again"
	}
	prev, _ := strconv.Atoi(strings.TrimSpace(t.Get(r, model.FAttempts)))
	return Job{
		ID:           key,
		Row:          r.Row,
		Call:         call,
		Status:       t.Get(r, model.FStatus),
		KeyCell:      t.Get(r, model.FKey),
		PrevAttempts: max(prev, 0),
		Time:         r.Time,
		KeyOrigin:    origin,
		SaveKey:      origin != model.KeyCell && hasKeyCol,
	}, true, false, ""
}

// statusRefusal says why a row of this status is not replayed ("" for a dead or blank one),
// and whether it is skipped (left alone: it is not waiting) rather than refused.
func statusRefusal(status string) (skip bool, why string) {
	switch status {
	case model.StatusDead:
		return false, ""
	case model.StatusRejected:
		return true, "rejected: clear its error first to replay it"
	case model.StatusDiscarded:
		return true, "discarded: set its status back to dead to replay it"
	case model.StatusDelivered:
		return true, "already delivered"
	default:
		return false, fmt.Sprintf("status %q: only dead (or blank) rows are replayed", status)
	}
}

// identity is the row's key and where it came from, or why the row has none that can be
// sent: no identity, a key that changed since the load, or one that can't be sent exactly.
func (p *planner) identity(r *model.Record) (key string, origin model.KeyOrigin, why string) {
	t := p.t
	key, origin, problem := model.EffectiveKey(t.Config, t.Header, r.Cells)
	if problem != "" {
		return "", origin, problem
	}
	if r.ID == "" || key == "" {
		why := "it has no identity"
		if len(r.Problems) > 0 {
			why = strings.Join(r.Problems, "; ")
		}
		return "", origin, "can't be replayed: " + why
	}
	if key != r.ID {
		return "", origin, fmt.Sprintf("its key changed since it was loaded (%q, now %q): refresh first", r.ID, key)
	}
	// Checked as the row holds it: it is sent exactly so, never trimmed (invariant 3).
	if why := unsendableKey(t, r, model.KeyAsHeld(t.Config, t.Header, r.Cells), origin); why != "" {
		return "", origin, why
	}
	return key, origin, ""
}

// call builds the row's call, or says why it can't go: its source (configured, valid,
// allowing the URL: invariant 8), its method, a body that can carry the key, and the
// source's key TTL (unless forced).
func (p *planner) call(r *model.Record, key string) (Call, string) {
	t := p.t
	srcName := strings.TrimSpace(t.Get(r, model.FSource))
	src := p.sources[srcName]
	if srcName == "" {
		return Call{}, "source is empty: no configured destination can be checked"
	}
	if src == nil {
		return Call{}, fmt.Sprintf("source %q is not configured: add [sources.%s] with url_prefixes", srcName, srcName)
	}
	if err := src.Validate(); err != nil {
		return Call{}, err.Error()
	}
	rawURL := strings.TrimSpace(t.Get(r, model.FURL))
	if rawURL == "" {
		return Call{}, "url is empty: nothing to replay to"
	}
	if ok, why := allowed(rawURL, src.URLPrefixes); !ok {
		return Call{}, fmt.Sprintf("source %s: %s; not contacted", srcName, why)
	}
	method, err := normMethod(t.Get(r, model.FMethod))
	if err != nil {
		return Call{}, err.Error()
	}
	payload := t.Get(r, model.FPayload)
	if _, err := prepareBody(src, []byte(payload), key); err != nil {
		return Call{}, fmt.Sprintf("source %s: %v", srcName, err)
	}
	if why := keyTTLRefusal(srcName, src.KeyTTL, r.Time, p.now); why != "" && !p.force {
		return Call{}, why
	}
	return Call{Key: key, Source: srcName, Method: method, URL: rawURL, Body: []byte(payload)}, ""
}
