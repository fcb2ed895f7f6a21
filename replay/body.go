package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// withBodyKey returns body carrying key in the top-level JSON field, leaving every other byte
// as it was (invariant 4): where the field is absent, `"field":"key",` is inserted right after
// the opening brace; where it is present and equal to the key, body is returned unchanged.
// A body that is not a JSON object, or whose field holds a different value, is an error.
func withBodyKey(body []byte, field, key string) ([]byte, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, fmt.Errorf("payload is not a JSON object, so it can't carry the key in body field %q", field)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, fmt.Errorf("payload is not a valid JSON object (%v), so it can't carry the key in body field %q", err, field)
	}
	if raw, ok := obj[field]; ok {
		if keyValue(raw) == key {
			return body, nil
		}
		return nil, fmt.Errorf("payload field %q is %s, not the row's key %q: fix one of them before replaying", field, raw, key)
	}
	open := bytes.IndexByte(body, '{')
	k, _ := json.Marshal(field)
	v, _ := json.Marshal(key)
	ins := make([]byte, 0, len(k)+len(v)+2)
	ins = append(ins, k...)
	ins = append(ins, ':')
	ins = append(ins, v...)
	if len(obj) > 0 {
		ins = append(ins, ',')
	}
	out := make([]byte, 0, len(body)+len(ins))
	out = append(out, body[:open+1]...)
	out = append(out, ins...)
	out = append(out, body[open+1:]...)
	return out, nil
}

// keyValue renders a JSON value the way model.PayloadKey reads a key: a string's text or a
// number's literal; "" for anything else.
func keyValue(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	var n json.Number
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&n); err == nil {
		return n.String()
	}
	return ""
}

// prepareBody applies a source's body key placement to a payload.
func prepareBody(src *Source, body []byte, key string) ([]byte, error) {
	field := src.bodyKeyField()
	if field == "" {
		return body, nil
	}
	return withBodyKey(body, field, key)
}
