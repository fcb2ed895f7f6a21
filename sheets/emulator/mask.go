//lint:file-ignore ST1005 the errors are Google's messages, answered as they are (capitalised)

package emulator

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// maskNode is a parsed partial-response field mask ("fields=" query
// parameter): "properties(title,timeZone),sheets(properties,data.columnMetadata)".
// all means the whole value at this point is selected.
type maskNode struct {
	all  bool
	kids map[string]*maskNode
}

func (n *maskNode) add(path []string, sub *maskNode) {
	for _, p := range path {
		if n.all {
			return
		}
		if n.kids == nil {
			n.kids = map[string]*maskNode{}
		}
		k := n.kids[p]
		if k == nil {
			k = &maskNode{}
			n.kids[p] = k
		}
		n = k
	}
	if n.all {
		return
	}
	if sub == nil {
		n.all, n.kids = true, nil
		return
	}
	n.merge(sub)
}

func (n *maskNode) merge(o *maskNode) {
	if n.all {
		return
	}
	if o.all {
		n.all, n.kids = true, nil
		return
	}
	for k, v := range o.kids {
		if n.kids == nil {
			n.kids = map[string]*maskNode{}
		}
		if n.kids[k] == nil {
			n.kids[k] = &maskNode{}
		}
		n.kids[k].merge(v)
	}
}

// child returns the selection for key (nil = not selected).
func (n *maskNode) child(key string) *maskNode {
	if n.all {
		return n
	}
	a, b := n.kids[key], n.kids["*"]
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	m := &maskNode{}
	m.merge(a)
	m.merge(b)
	return m
}

// reaches reports whether the mask selects anything at or under path.
func (n *maskNode) reaches(path ...string) bool {
	for _, p := range path {
		if n == nil {
			return false
		}
		if n.all {
			return true
		}
		n = n.child(p)
	}
	return n != nil
}

// parseMask parses Google's partial-response syntax: comma-separated paths
// whose parts are joined by "/" or ".", each optionally followed by a
// parenthesised sub-selection.
func parseMask(s string) (*maskNode, error) {
	p := &maskParser{s: s}
	root := &maskNode{}
	if err := p.list(root, false); err != nil {
		return nil, err
	}
	if p.i != len(p.s) {
		return nil, fmt.Errorf("Invalid field selection %s", s)
	}
	if !root.all && len(root.kids) == 0 {
		return nil, fmt.Errorf("Invalid field selection %s", s)
	}
	return root, nil
}

type maskParser struct {
	s string
	i int
}

func (p *maskParser) skipSpace() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *maskParser) name() string {
	p.skipSpace()
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if isLetter(c) || (c >= '0' && c <= '9') || c == '_' || c == '*' || c == '@' {
			p.i++
			continue
		}
		break
	}
	n := p.s[start:p.i]
	p.skipSpace()
	return n
}

func (p *maskParser) list(into *maskNode, nested bool) error {
	for {
		var path []string
		for {
			n := p.name()
			if n == "" {
				return fmt.Errorf("Invalid field selection %s", p.s)
			}
			path = append(path, n)
			if p.i < len(p.s) && (p.s[p.i] == '/' || p.s[p.i] == '.') {
				p.i++
				continue
			}
			break
		}
		var sub *maskNode
		if p.i < len(p.s) && p.s[p.i] == '(' {
			p.i++
			sub = &maskNode{}
			if err := p.list(sub, true); err != nil {
				return err
			}
			if p.i >= len(p.s) || p.s[p.i] != ')' {
				return fmt.Errorf("Invalid field selection %s", p.s)
			}
			p.i++
			p.skipSpace()
		}
		into.add(path, sub)
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if nested || p.i == len(p.s) {
			return nil
		}
		return fmt.Errorf("Invalid field selection %s", p.s)
	}
}

// check verifies that every name in the mask is a field of t (a type of
// google.golang.org/api/sheets/v4), following the JSON names, as Google
// rejects unknown fields.
func (n *maskNode) check(t reflect.Type, path string) error {
	if n == nil || n.all {
		return nil
	}
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map || t.Kind() == reflect.Array {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		if t.Kind() == reflect.Interface {
			return nil
		}
		return fmt.Errorf("Invalid field selection %s: %s has no sub-fields", path, strings.TrimPrefix(path, "."))
	}
	for name, kid := range n.kids {
		if name == "*" {
			continue
		}
		f, ok := jsonField(t, name)
		if !ok {
			return fmt.Errorf("Invalid field selection %s", strings.TrimPrefix(path+"."+name, "."))
		}
		if err := kid.check(f.Type, path+"."+name); err != nil {
			return err
		}
	}
	if star := n.kids["*"]; star != nil && !star.all {
		for i := 0; i < t.NumField(); i++ {
			if tag := jsonName(t.Field(i)); tag != "" {
				_ = star.check(t.Field(i).Type, path+"."+tag) // best effort
			}
		}
	}
	return nil
}

func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	name, _, _ := strings.Cut(tag, ",")
	if name == "-" {
		return ""
	}
	return name
}

func jsonField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if jsonName(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// filter keeps only the selected parts of an encoded JSON value. A message
// the value holds on the mask's path is kept even when none of the fields
// selected under it is set (as {}), and array elements likewise, so indexes
// still line up: Google's field masks copy a present message whether or not
// anything under it is selected (fields=sheets.properties.tabColorStyle of a
// tab without a colour answers {"sheets":[{"properties":{}}]}).
func (n *maskNode) filter(raw json.RawMessage) (any, error) {
	if n == nil || n.all {
		return raw, nil
	}
	switch raw[0] {
	case '{':
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, err
		}
		out := make(map[string]any, len(obj))
		for k, val := range obj {
			sub := n.child(k)
			if sub == nil {
				continue
			}
			kept, err := sub.filter(val)
			if err != nil {
				return nil, err
			}
			out[k] = kept
		}
		return out, nil
	case '[':
		var arr []json.RawMessage
		if err := json.Unmarshal(raw, &arr); err != nil {
			return nil, err
		}
		out := make([]any, len(arr))
		for i, e := range arr {
			kept, err := n.filter(e)
			if err != nil {
				return nil, err
			}
			out[i] = kept
		}
		return out, nil
	}
	return raw, nil
}
