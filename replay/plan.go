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
	seen := map[*model.Record]bool{}
	seenID := map[string]int{} // key → the row first planned with it
	for _, r := range recs {
		if r == nil || seen[r] {
			continue
		}
		seen[r] = true
		refuse := func(skip bool, format string, args ...any) {
			refused = append(refused, model.Refusal{ID: r.ID, Row: r.Row, Reason: fmt.Sprintf("row %d: ", r.Row) + fmt.Sprintf(format, args...), Skipped: skip})
		}
		if t.Config.Role != model.RoleDeadLetter {
			refuse(false, "tab %q is not a dead-letter tab; only dead letters are replayed", t.Config.Name)
			continue
		}
		switch r.Status {
		case model.StatusDead:
		case model.StatusRejected:
			refuse(true, "rejected: clear its error first to replay it")
			continue
		case model.StatusDiscarded:
			refuse(true, "discarded: set its status back to dead to replay it")
			continue
		case model.StatusDelivered:
			refuse(true, "already delivered")
			continue
		default:
			refuse(false, "status %q: only dead (or blank) rows are replayed", r.Status)
			continue
		}
		key, origin, problem := model.EffectiveKey(t.Config, t.Header, r.Cells)
		if problem != "" {
			refuse(false, "%s", problem)
			continue
		}
		if r.ID == "" || key == "" {
			why := "it has no identity"
			if len(r.Problems) > 0 {
				why = strings.Join(r.Problems, "; ")
			}
			refuse(false, "can't be replayed: %s", why)
			continue
		}
		if key != r.ID {
			refuse(false, "its key changed since it was loaded (%q, now %q): refresh first", r.ID, key)
			continue
		}
		// Checked as the row holds it: it is sent exactly so, never trimmed (invariant 3).
		if why := unsendableKey(t, r, model.KeyAsHeld(t.Config, t.Header, r.Cells), origin); why != "" {
			refuse(false, "%s", why)
			continue
		}
		if first, ok := seenID[key]; ok {
			if first != r.Row {
				refuse(false, "same key as row %d: replaying both would be one call (the receiver acts once per key); discard one of them, or give it its own key", first)
			}
			continue
		}
		seenID[key] = r.Row
		srcName := strings.TrimSpace(t.Get(r, model.FSource))
		src := sources[srcName]
		if srcName == "" {
			refuse(false, "source is empty: no configured destination can be checked")
			continue
		}
		if src == nil {
			refuse(false, "source %q is not configured: add [sources.%s] with url_prefixes", srcName, srcName)
			continue
		}
		if err := src.Validate(); err != nil {
			refuse(false, "%v", err)
			continue
		}
		rawURL := strings.TrimSpace(t.Get(r, model.FURL))
		if rawURL == "" {
			refuse(false, "url is empty: nothing to replay to")
			continue
		}
		if ok, why := allowed(rawURL, src.URLPrefixes); !ok {
			refuse(false, "source %s: %s; not contacted", srcName, why)
			continue
		}
		method, err := normMethod(t.Get(r, model.FMethod))
		if err != nil {
			refuse(false, "%v", err)
			continue
		}
		payload := t.Get(r, model.FPayload)
		if _, err := prepareBody(src, []byte(payload), key); err != nil {
			refuse(false, "source %s: %v", srcName, err)
			continue
		}
		if why := keyTTLRefusal(srcName, src.KeyTTL, r.Time, now); why != "" && !force {
			refuse(false, "%s", why)
			continue
		}
		hasKeyCol := t.Header.Has(model.FKey)
		if origin == model.KeyMinted && !hasKeyCol {
			refuse(false, "its key was minted but the tab has no key column to keep it in; add a \"key\" header (triage init) and replay again")
			continue
		}
		prev, _ := strconv.Atoi(strings.TrimSpace(t.Get(r, model.FAttempts)))
		if prev < 0 {
			prev = 0
		}
		jobs = append(jobs, Job{
			ID:           key,
			Row:          r.Row,
			Call:         Call{Key: key, Source: srcName, Method: method, URL: rawURL, Body: []byte(payload)},
			Status:       t.Get(r, model.FStatus),
			KeyCell:      t.Get(r, model.FKey),
			PrevAttempts: prev,
			KeyOrigin:    origin,
			SaveKey:      origin != model.KeyCell && hasKeyCol,
		})
	}
	return jobs, refused
}
