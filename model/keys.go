package model

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// KeyOrigin says where a dead-letter row's idempotency key comes from (invariant 3).
type KeyOrigin int

// Key origins, in the order they are tried.
const (
	KeyNone KeyOrigin = iota
	KeyCell
	KeyPayload
	KeyMinted
)

func (o KeyOrigin) String() string {
	switch o {
	case KeyCell:
		return "key cell"
	case KeyPayload:
		return "payload"
	case KeyMinted:
		return "minted"
	}
	return "none"
}

// MintKey derives a key from a row's content. It is deterministic, so two sessions that mint
// for the same row produce the same key, and it is written to the key cell before the first
// send, so later edits to the row never change it.
func MintKey(source, url, payload, timestamp string) string {
	h := sha256.New()
	for _, p := range []string{source, url, payload, timestamp} {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return "triage-" + hex.EncodeToString(h.Sum(nil))[:32]
}

// PayloadKey returns the string at a top-level field of a JSON object payload, trimmed like a
// key cell (a key saved from the payload must read back the same); see payloadKeyAsHeld.
func PayloadKey(payload, field string) (string, bool) {
	s, ok := payloadKeyAsHeld(payload, field)
	if s = strings.TrimSpace(s); !ok || s == "" {
		return "", false
	}
	return s, true
}

// payloadKeyAsHeld returns the string at a top-level field of a JSON object payload as the
// payload holds it (untrimmed), or a number's text.
func payloadKeyAsHeld(payload, field string) (string, bool) {
	if field == "" {
		return "", false
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(payload), &obj); err != nil {
		return "", false
	}
	raw, ok := obj[field]
	if !ok {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, true
	}
	var n json.Number
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&n); err == nil {
		return n.String(), true
	}
	return "", false
}

// EffectiveKey computes a dead-letter row's key from its cells: the key cell, else the
// source's payload key field, else a minted key. A payload key that disagrees with the key
// cell is returned as a problem: such a row must not be replayed.
func EffectiveKey(tc TabConfig, hm HeaderMap, cells []string) (key string, origin KeyOrigin, problem string) {
	source := strings.TrimSpace(get(cells, hm.Col(FSource)))
	payload := get(cells, hm.Col(FPayload))
	field := tc.BodyKeyFields[source]
	pk, hasPK := PayloadKey(payload, field)
	if k := strings.TrimSpace(get(cells, hm.Col(FKey))); k != "" {
		if hasPK && pk != k {
			return k, KeyCell, fmt.Sprintf("payload %s %q disagrees with key cell %q: fix one of them before replaying", field, pk, k)
		}
		return k, KeyCell, ""
	}
	if hasPK {
		return pk, KeyPayload, ""
	}
	return MintKey(source, strings.TrimSpace(get(cells, hm.Col(FURL))), payload, get(cells, hm.Col(FTimestamp))), KeyMinted, ""
}

// KeyAsHeld is a dead-letter row's key exactly as the row holds it, where EffectiveKey trims
// it to find the row by: the key cell as it is, else the payload's key field as it is, else
// the minted key (the same rules as EffectiveKey pick which). A key is sent exactly, so a row
// whose key differs from its trimmed self (" k-1", "CRKEY\r", "k\u2028") is refused before
// sending: CheckKey(KeyAsHeld(...)) says why (invariant 3).
func KeyAsHeld(tc TabConfig, hm HeaderMap, cells []string) string {
	key, origin, _ := EffectiveKey(tc, hm, cells)
	switch origin {
	case KeyCell:
		return get(cells, hm.Col(FKey))
	case KeyPayload:
		source := strings.TrimSpace(get(cells, hm.Col(FSource)))
		if s, ok := payloadKeyAsHeld(get(cells, hm.Col(FPayload)), tc.BodyKeyFields[source]); ok {
			return s
		}
	}
	return key
}

// RowIdentity is the identity a row is located by at write time (invariant 1): the ID cell,
// or for dead letters the effective key, so a row whose key cell is empty is found by content.
func RowIdentity(tc TabConfig, hm HeaderMap, cells []string) string {
	if tc.Role == RoleDeadLetter {
		k, _, _ := EffectiveKey(tc, hm, cells)
		return k
	}
	return strings.TrimSpace(get(cells, hm.Col(FID)))
}

func validJSON(s string) bool { return json.Valid([]byte(strings.TrimSpace(s))) }

func decodeDeadLetter(t *Table, rec *Record) {
	hm := t.Header
	key, origin, problem := EffectiveKey(t.Config, hm, rec.Cells)
	rec.ID, rec.KeyOrigin = key, origin
	if problem != "" {
		rec.Problems = append(rec.Problems, problem)
	}
	if strings.TrimSpace(get(rec.Cells, hm.Col(FURL))) == "" {
		rec.Problems = append(rec.Problems, "url is empty: nothing to replay to")
	}
	if p := get(rec.Cells, hm.Col(FPayload)); strings.TrimSpace(p) != "" && !validJSON(p) {
		rec.Problems = append(rec.Problems, "payload is not valid JSON: it will be sent as-is only if the source accepts raw bodies")
	}
	if strings.TrimSpace(get(rec.Cells, hm.Col(FSource))) == "" {
		rec.Problems = append(rec.Problems, "source is empty: no configured destination can be checked")
	}
}
