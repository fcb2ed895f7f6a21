package model

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Access is what a person may do (a `triage serve` user's role, DESIGN §9): a viewer reads; a
// triager also sets statuses, clears sticky errors and discards dead letters; an operator
// also replays, requeues stale claims and edits payloads. It is checked where writes and
// replays start (the store a session writes through, the replayer it replays through), so a
// key the TUI forgot to hide changes nothing.
type Access string

// The roles, weakest first.
const (
	AccessViewer   Access = "viewer"
	AccessTriager  Access = "triager"
	AccessOperator Access = "operator"
)

// Accesses lists the roles, weakest first.
var Accesses = []Access{AccessViewer, AccessTriager, AccessOperator}

// ParseAccess reads a role name (case and surrounding space ignored).
func ParseAccess(s string) (Access, error) {
	a := Access(strings.ToLower(strings.TrimSpace(s)))
	for _, x := range Accesses {
		if a == x {
			return a, nil
		}
	}
	return "", fmt.Errorf("unknown role %q: use viewer, triager or operator", s)
}

// CanWrite reports whether the role changes anything at all.
func (a Access) CanWrite() bool { return a == AccessTriager || a == AccessOperator }

// CanReplay reports whether the role sends calls (replays).
func (a Access) CanReplay() bool { return a == AccessOperator }

// AccessError is a write or a replay refused because of the person's role, before anything
// was sent: who, their role and why. Its text reads "alice is a viewer: a viewer can't change
// rows".
type AccessError struct {
	// Who is the person's name.
	Who string
	// Role is their role.
	Role Access
	// Why is what the role may not do (Access.Check's answer, or why it can't replay).
	Why string
}

func (e *AccessError) Error() string {
	return fmt.Sprintf("%s is a%s %s: %s", e.Who, article(string(e.Role)), e.Role, e.Why)
}

// article is "n" before a role starting with a vowel ("an operator"), else "".
func article(s string) string {
	if s != "" && strings.ContainsRune("aeiou", rune(s[0])) {
		return "n"
	}
	return ""
}

// triagerFields are the only fields a triager's edits may write: a status, a sticky error
// cleared (with the failed claim it releases and the time it was cleared), and the audit
// columns the store stamps. Anything else (a URL, a source, a key, a payload, a message) is
// an operator's, so a triager can't be made to change what a replay sends.
var triagerFields = []Field{FStatus, FError, FLastError, FClaimedBy, FClaimedAt, FUpdatedAt, FTriagedBy, FTriagedAt}

// Check says why a cannot make edit e, "" when it can. A triager's edits are status changes,
// clearing sticky errors (which also releases an error job's claim) and discarding; releasing
// a live claim (a requeue: the row expected claimed) and the fields only a replay or a
// payload edit writes are an operator's.
func (a Access) Check(e Edit) string {
	switch a {
	case AccessOperator:
		return ""
	case AccessTriager:
	default:
		return fmt.Sprintf("a %s can't change rows", cmp.Or(string(a), "viewer"))
	}
	for f := range e.Set {
		if !slices.Contains(triagerFields, f) {
			return fmt.Sprintf("writing %s is an operator's (a triager sets statuses, clears sticky errors and discards)", f)
		}
	}
	_, releases := e.Set[FClaimedBy]
	if releases && strings.EqualFold(strings.TrimSpace(e.Expect[FStatus]), StatusClaimed) {
		return "requeueing a claimed job is an operator's"
	}
	return ""
}
