package replay

import (
	"fmt"
	"strings"

	"github.com/triage-dev/triage/model"
)

// Outcome is what an answer (or the lack of one) means for a call.
type Outcome int

// The outcomes of DESIGN §5, plus Refused for a call that was never sent. The zero value is
// no outcome yet.
const (
	// Delivered: the destination acted on the call.
	Delivered Outcome = iota + 1
	// Duplicate: the destination had already acted on this key; counts as delivered.
	Duplicate
	// Rejected: a permanent answer about this row only; the row becomes sticky.
	Rejected
	// Systemic: the integration itself is broken (credentials, endpoint moved, request shape);
	// a bulk run halts.
	Systemic
	// Retryable: no usable answer (timeout, network error, 429, 5xx...): the row stays dead
	// and replaying it later is harmless.
	Retryable
	// Refused: not sent at all, because a local check failed (destination not allowed, key
	// or body problem). The row is left as it was.
	Refused
)

// Outcomes lists the outcomes in display order.
var Outcomes = []Outcome{Delivered, Duplicate, Rejected, Systemic, Retryable, Refused}

// String returns the outcome's lower-case name, as used in config overrides and summaries: the
// name of the row state it leaves a row in.
func (o Outcome) String() string {
	switch o {
	case Delivered:
		return string(model.StateDelivered)
	case Duplicate:
		return string(model.StateDuplicate)
	case Rejected:
		return string(model.StateRejected)
	case Systemic:
		return string(model.StateSystemic)
	case Retryable:
		return string(model.StateRetryable)
	case Refused:
		return string(model.StateRefused)
	}
	return "none"
}

// State is the row state named as the outcome (Run reports a deferred row as deferred).
func (o Outcome) State() model.RowState { return model.RowState(o.String()) }

// Success reports whether the destination has acted on the call (delivered or duplicate).
func (o Outcome) Success() bool { return o == Delivered || o == Duplicate }

// ParseOutcome reads an outcome name as written in a config override ("retryable"...).
// Refused is not accepted: only the answer table can be overridden.
func ParseOutcome(s string) (Outcome, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "delivered":
		return Delivered, nil
	case "duplicate":
		return Duplicate, nil
	case "rejected":
		return Rejected, nil
	case "systemic":
		return Systemic, nil
	case "retryable":
		return Retryable, nil
	}
	return 0, fmt.Errorf("unknown outcome %q (delivered, duplicate, rejected, systemic or retryable)", s)
}

// Presets.
const (
	// PresetREST is the default outcome table.
	PresetREST = "rest"
	// PresetAppsScript is the table of a Google Apps Script web app.
	PresetAppsScript = "apps-script"
)

// Override keys for answers that have no HTTP status.
const (
	OverrideTimeout = "timeout"
	OverrideNetwork = "network"
)

// classifyStatus maps an HTTP status to an outcome by a source's preset and overrides. It
// does not look at bodies or headers: 2xx of the apps-script preset and redirects are decided
// by the caller. The preset table is DESIGN §5; for apps-script, 400, 405 and 422 are not
// named in its column and keep the default (systemic).
func (s *Source) classifyStatus(code int) Outcome {
	if o, ok := s.Overrides[fmt.Sprint(code)]; ok && o != 0 {
		return o
	}
	apps := s.preset() == PresetAppsScript
	switch {
	case code >= 200 && code < 300:
		return Delivered
	case code == 419:
		return Duplicate
	case code >= 300 && code < 400:
		return Systemic
	case code == 404 && apps:
		return Retryable
	case code == 400, code == 401, code == 403, code == 404, code == 405, code == 422:
		return Systemic
	case code == 408, code == 409, code == 425, code == 429, code >= 500:
		return Retryable
	case code >= 400 && code < 500:
		return Rejected
	}
	// 1xx that reached us, or nonsense: no usable answer.
	return Retryable
}

// classifyFailure maps a transport failure (no HTTP answer) to an outcome: "timeout" or
// "network" overrides, else retryable.
func (s *Source) classifyFailure(timeout bool) Outcome {
	k := OverrideNetwork
	if timeout {
		k = OverrideTimeout
	}
	if o, ok := s.Overrides[k]; ok && o != 0 {
		return o
	}
	return Retryable
}
