package tui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/triage-dev/triage/model"
)

// previewWideAt is the terminal width from which the preview sits right of the table rather
// than below it.
const previewWideAt = 120

// previewMaxBytes caps how much of a cell the preview wraps: it shows one screenful, and a
// 50,000-character cell would otherwise be re-wrapped on every cursor move.
const previewMaxBytes = 16 << 10

// prettyJSON indents a JSON payload for reading; anything that isn't JSON comes back as is.
// The caller sanitises the result either way: JSON escapes like \u001b stay escaped text,
// but a cell can hold raw control bytes that merely look like JSON.
func prettyJSON(s string) string {
	t := strings.TrimSpace(s)
	if t == "" || (t[0] != '{' && t[0] != '[') {
		return s
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, []byte(t), "", "  "); err != nil {
		return s
	}
	return buf.String()
}

// prettyJSONErr is prettyJSON that also says why a value isn't JSON, with the byte offset of
// the problem, for the detail view.
func prettyJSONErr(s string) (string, error) {
	t := strings.TrimSpace(s)
	var buf bytes.Buffer
	if err := json.Indent(&buf, []byte(t), "", "  "); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return s, fmt.Errorf("%v (at byte %d)", se, se.Offset)
		}
		return s, err
	}
	return buf.String(), nil
}

// previewBody is the readable part of a record: the message of an inbox row, the error and
// payload of a dead letter, the last error and payload of a job. Raw (unsanitised) text.
func previewBody(t *model.Table, r *model.Record) (title string, sections []string) {
	get := func(f model.Field) string { return t.Get(r, f) }
	switch t.Config.Role {
	case model.RoleInbox:
		from := strings.TrimSpace(get(model.FName))
		if e := strings.TrimSpace(get(model.FEmail)); e != "" {
			if from != "" {
				from += " <" + e + ">"
			} else {
				from = e
			}
		}
		return from, []string{get(model.FMessage)}
	case model.RoleDeadLetter:
		method := strings.ToUpper(strings.TrimSpace(get(model.FMethod)))
		if method == "" {
			method = "POST"
		}
		var secs []string
		if e := strings.TrimSpace(get(model.FError)); e != "" {
			secs = append(secs, "error: "+e)
		}
		return method + " " + strings.TrimSpace(get(model.FURL)), append(secs, prettyJSON(get(model.FPayload)))
	case model.RoleQueue:
		title := strings.TrimSpace(get(model.FType))
		if title == "" {
			title = "job"
		}
		title += " " + r.ID
		var secs []string
		if e := strings.TrimSpace(get(model.FLastError)); e != "" {
			secs = append(secs, "lastError: "+e)
		}
		return title, append(secs, prettyJSON(get(model.FPayload)))
	}
	return "", nil
}

// previewPane is the preview under or beside the table: whether it is shown, and its last
// rendering.
type previewPane struct {
	show  bool
	cache previewCache
}

// previewCache remembers the last preview, so redraws that don't move the cursor (clock
// ticks, toasts) don't re-wrap the message.
type previewCache struct {
	ri    int32
	data  *tabData
	w, h  int
	gen   int
	lines []string
}

// lines renders the preview of the cursor record as exactly h lines of w cells.
func (pv *previewPane) lines(c *common, ts *tabState, w, h, gen int) []string {
	r, ri := ts.current()
	pc := &pv.cache
	if pc.lines != nil && pc.ri == ri && pc.data == ts.data && pc.w == w && pc.h == h && pc.gen == gen {
		return pc.lines
	}
	st := c.styles
	var lines []string
	if r == nil {
		lines = []string{st.paint(st.Muted, "nothing selected")}
	} else {
		t := ts.data.table
		title, secs := previewBody(t, r)
		meta := r.Status
		if !r.Time.IsZero() {
			meta += " · " + ago(c.now(), inZone(r.Time, t.Location))
		}
		meta += " · row " + itoa(r.Row)
		// Title and facts share the first line when they fit: a short pane is for the body.
		head := truncate(cellLine(title), w)
		facts := cellLine(meta)
		if textWidth(head)+3+textWidth(facts) <= w {
			lines = append(lines, st.paint(st.Bold, head)+st.paint(st.Muted, " · "+facts))
		} else {
			lines = append(lines, st.paint(st.Bold, head), st.paint(st.Muted, truncate(facts, w)))
		}
		for _, p := range r.Problems {
			for _, l := range wrapText("! "+model.SanitizeLine(p), w) {
				lines = append(lines, st.paint(st.Problem, l))
			}
		}
		for _, s := range secs {
			if len(lines) >= h {
				break
			}
			if h >= 8 {
				lines = append(lines, "")
			}
			s, cut := clip(s, previewMaxBytes)
			body := wrapText(model.Sanitize(s), w)
			if cut {
				more := "…"
				if k := firstKey(c.keys.Detail); k != "" {
					more += " (" + k + " for the whole record)"
				}
				body = append(body, st.paint(st.Muted, more))
			}
			lines = append(lines, body...)
		}
		if len(lines) > h && h > 1 {
			lines = lines[:h]
			more := "… more"
			if k := firstKey(c.keys.Detail); k != "" {
				more += ": " + k + " for detail"
			}
			lines[h-1] = st.paint(st.Muted, fit(more, w))
		}
	}
	*pc = previewCache{ri: ri, data: ts.data, w: w, h: h, gen: gen, lines: padLines(lines, w, h)}
	return pc.lines
}
