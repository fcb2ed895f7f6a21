package emulator

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
)

// Developer metadata (spreadsheets.developerMetadata): key/value pairs a program attaches to
// a spreadsheet, not shown or editable in the Sheets UI. The emulator serves metadata located
// on the spreadsheet itself, as Google does: the metadataId may be chosen by the client (a
// positive integer, unique in the spreadsheet: an ID that exists is refused, and with it the
// whole batchUpdate), a key and a visibility are required, and it survives the deletion of any
// sheet. Metadata located on a sheet, a row or a column is answered 501: the emulator does not
// model how it moves with them.

// DeveloperMetadata is one spreadsheet-level developer metadata entry.
type DeveloperMetadata struct {
	MetadataID int64  `json:"metadataId"`
	Key        string `json:"metadataKey"`
	Value      string `json:"metadataValue,omitempty"`
	// Visibility is DOCUMENT or PROJECT.
	Visibility string `json:"visibility"`
}

// maxMetadataChars is how many characters of metadata keys and values a spreadsheet holds in
// all (Google's documented limit for a spreadsheet's, and for each sheet's, metadata).
const maxMetadataChars = 30000

type devMetaLocation struct {
	LocationType string `json:"locationType,omitempty"`
	Spreadsheet  bool   `json:"spreadsheet,omitempty"`
}

type devMetaOut struct {
	MetadataID    int64           `json:"metadataId"`
	MetadataKey   string          `json:"metadataKey"`
	MetadataValue string          `json:"metadataValue,omitempty"`
	Location      devMetaLocation `json:"location"`
	Visibility    string          `json:"visibility"`
}

func (m DeveloperMetadata) out() devMetaOut {
	return devMetaOut{MetadataID: m.MetadataID, MetadataKey: m.Key, MetadataValue: m.Value,
		Location: devMetaLocation{LocationType: "SPREADSHEET", Spreadsheet: true}, Visibility: m.Visibility}
}

// metadataOut lists the spreadsheet's metadata, by ID.
func (b *book) metadataOut() []devMetaOut {
	var out []devMetaOut
	for _, m := range b.meta {
		out = append(out, m.out())
	}
	return out
}

func (b *book) metadataChars() int {
	n := 0
	for _, m := range b.meta {
		n += len([]rune(m.Key)) + len([]rune(m.Value))
	}
	return n
}

type devMetaIn struct {
	DeveloperMetadata struct {
		MetadataID *int64          `json:"metadataId"`
		Key        string          `json:"metadataKey"`
		Value      string          `json:"metadataValue"`
		Location   json.RawMessage `json:"location"`
		Visibility string          `json:"visibility"`
	} `json:"developerMetadata"`
}

// createDeveloperMetadata adds one entry (see the file comment).
func (b *book) createDeveloperMetadata(raw json.RawMessage) (any, *apiError) {
	var in devMetaIn
	if err := decodeLoose(raw, &in); err != nil {
		return nil, err
	}
	d := in.DeveloperMetadata
	var loc struct {
		Spreadsheet *bool           `json:"spreadsheet"`
		SheetID     *int64          `json:"sheetId"`
		Dimension   json.RawMessage `json:"dimensionRange"`
	}
	if len(d.Location) > 0 {
		if err := decodeLoose(d.Location, &loc); err != nil {
			return nil, err
		}
	}
	switch {
	case loc.SheetID != nil || len(loc.Dimension) > 0:
		return nil, errf(501, "emulator: developer metadata located on a sheet, a row or a column is not emulated (only location.spreadsheet)")
	case loc.Spreadsheet == nil || !*loc.Spreadsheet:
		return nil, badRequest("A location must be specified for developer metadata.")
	case d.Key == "":
		return nil, badRequest("A metadata key must be specified.")
	case d.Visibility != "DOCUMENT" && d.Visibility != "PROJECT":
		return nil, badRequest("A visibility must be specified for developer metadata (DOCUMENT or PROJECT), not %q.", d.Visibility)
	}
	id := int64(0)
	if d.MetadataID != nil {
		id = *d.MetadataID
		if id <= 0 || id > 1<<31-1 {
			return nil, badRequest("Metadata ID must be a positive 32-bit integer, not %d.", id)
		}
		if slices.ContainsFunc(b.meta, func(m DeveloperMetadata) bool { return m.MetadataID == id }) {
			return nil, badRequest("Cannot add developer metadata with ID [%d] because developer metadata with that ID already exists.", id)
		}
	} else {
		id = 1
		for slices.ContainsFunc(b.meta, func(m DeveloperMetadata) bool { return m.MetadataID == id }) {
			id++
		}
	}
	m := DeveloperMetadata{MetadataID: id, Key: d.Key, Value: d.Value, Visibility: d.Visibility}
	b.meta = append(b.meta, m)
	if n := b.metadataChars(); n > maxMetadataChars {
		return nil, badRequest("The spreadsheet's developer metadata would hold %d characters, more than the limit of %d.", n, maxMetadataChars)
	}
	sort.Slice(b.meta, func(i, j int) bool { return b.meta[i].MetadataID < b.meta[j].MetadataID })
	return map[string]any{"createDeveloperMetadata": map[string]any{"developerMetadata": m.out()}}, nil
}

// metadataFilter is the part of a DataFilter the emulator serves: a lookup by ID or by key,
// either narrowed by the exact value (Google: "limits the selected developer metadata to that
// which has a matching metadata_value").
type metadataFilter struct {
	DeveloperMetadataLookup *struct {
		MetadataID    *int64  `json:"metadataId"`
		MetadataKey   *string `json:"metadataKey"`
		MetadataValue *string `json:"metadataValue"`
	} `json:"developerMetadataLookup"`
	A1Range   json.RawMessage `json:"a1Range"`
	GridRange json.RawMessage `json:"gridRange"`
}

func (f metadataFilter) matches(m DeveloperMetadata) (bool, *apiError) {
	l := f.DeveloperMetadataLookup
	if l == nil || len(f.A1Range) > 0 || len(f.GridRange) > 0 {
		return false, errf(501, "emulator: only developerMetadataLookup data filters are emulated")
	}
	if l.MetadataID == nil && l.MetadataKey == nil {
		return false, badRequest("A developer metadata lookup must name a metadataId or a metadataKey.")
	}
	return (l.MetadataID == nil || *l.MetadataID == m.MetadataID) && (l.MetadataKey == nil || *l.MetadataKey == m.Key) &&
		(l.MetadataValue == nil || *l.MetadataValue == m.Value), nil
}

// deleteDeveloperMetadata deletes every entry the data filter matches. Google does not document
// what a filter that matches nothing answers; the emulator answers it as a success that deleted
// nothing, and triage's writes hold either way (a delete refused with its batch is sent again
// without it).
func (b *book) deleteDeveloperMetadata(raw json.RawMessage) (any, *apiError) {
	var in struct {
		DataFilter metadataFilter `json:"dataFilter"`
	}
	if err := decodeLoose(raw, &in); err != nil {
		return nil, err
	}
	var gone []devMetaOut
	var keep []DeveloperMetadata
	for _, m := range b.meta {
		ok, err := in.DataFilter.matches(m)
		if err != nil {
			return nil, err
		}
		if ok {
			gone = append(gone, m.out())
		} else {
			keep = append(keep, m)
		}
	}
	b.meta = keep
	return map[string]any{"deleteDeveloperMetadata": map[string]any{"deletedDeveloperMetadata": gone}}, nil
}

// DeveloperMetadata returns a copy of a spreadsheet's metadata, by ID (nil if it has none).
func (e *Emulator) DeveloperMetadata(id string) []DeveloperMetadata {
	e.mu.Lock()
	defer e.mu.Unlock()
	if b := e.books[id]; b != nil {
		return slices.Clone(b.meta)
	}
	return nil
}

// DeleteDeveloperMetadata deletes one entry, as another program with access to the file
// could (a person can't, from the Sheets UI).
func (e *Emulator) DeleteDeveloperMetadata(id string, metadataID int64) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	b := e.books[id]
	if b == nil {
		return fmt.Errorf("emulator: no spreadsheet %q", id)
	}
	work := b.clone()
	work.meta = slices.DeleteFunc(work.meta, func(m DeveloperMetadata) bool { return m.MetadataID == metadataID })
	return e.commit(work)
}

// RenameSheet renames a tab, as a person would by double-clicking it.
func (e *Emulator) RenameSheet(id, tab, title string) error {
	return e.mutate(id, tab, func(b *book, sh *sheet) error {
		if err := b.checkRename(sh, title); err != nil {
			return fmt.Errorf("emulator: RenameSheet: %s", err.msg)
		}
		sh.title = title
		return nil
	})
}
