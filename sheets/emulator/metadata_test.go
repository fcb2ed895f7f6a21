package emulator

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// do sends one request to the emulator and returns its status and body.
func do(t *testing.T, e *Emulator, method, path, body string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

func post(t *testing.T, e *Emulator, id, body string) (int, string) {
	return do(t, e, http.MethodPost, "/v4/spreadsheets/"+id+":batchUpdate", body)
}

// Developer metadata as the journal's fence needs it: an ID chosen by the client, refused
// when it exists (and the whole batch with it), deleted by a lookup, kept when a sheet is
// deleted, listed by spreadsheets.get.
func TestDeveloperMetadata(t *testing.T) {
	e := New()
	e.AddWorkbook(&Workbook{SpreadsheetID: "dm", Sheets: []*Sheet{{Title: "Inbox"}, {Title: "Other"}}})
	create := `{"createDeveloperMetadata":{"developerMetadata":{"metadataId":1234567890,"metadataKey":"triage.journal","metadataValue":"v","location":{"spreadsheet":true},"visibility":"DOCUMENT"}}}`
	if code, body := post(t, e, "dm", `{"requests":[`+create+`]}`); code != 200 || !strings.Contains(body, `1234567890`) {
		t.Fatalf("create: %d %s", code, body)
	}
	// The same ID again, after an addSheet in the same batch: refused, and nothing applied.
	code, body := post(t, e, "dm", `{"requests":[{"addSheet":{"properties":{"title":"New"}}},`+create+`]}`)
	if code != 400 || !strings.Contains(body, "Invalid requests[1].createDeveloperMetadata: Cannot add developer metadata with ID [1234567890]") {
		t.Fatalf("duplicate: %d %s", code, body)
	}
	if len(e.Workbook("dm").Sheets) != 2 {
		t.Fatal("a refused batch applied its addSheet")
	}
	if code, body := post(t, e, "dm", `{"requests":[{"deleteSheet":{"sheetId":1}}]}`); code != 200 {
		t.Fatalf("delete sheet: %d %s", code, body)
	}
	if m := e.DeveloperMetadata("dm"); len(m) != 1 || m[0].Value != "v" {
		t.Fatalf("after a sheet's deletion: %v", m)
	}
	code, body = do(t, e, http.MethodGet, "/v4/spreadsheets/dm?fields=developerMetadata(metadataId,metadataValue)", "")
	if code != 200 || !strings.Contains(body, `"metadataValue": "v"`) {
		t.Fatalf("get: %d %s", code, body)
	}
	del := `{"requests":[{"deleteDeveloperMetadata":{"dataFilter":{"developerMetadataLookup":{"metadataId":1234567890}}}}]}`
	if code, body := post(t, e, "dm", del); code != 200 || !strings.Contains(body, "deletedDeveloperMetadata") {
		t.Fatalf("delete: %d %s", code, body)
	}
	if m := e.DeveloperMetadata("dm"); len(m) != 0 {
		t.Fatalf("after delete: %v", m)
	}
	// Located on a sheet: not modelled, so refused as such, never a 200.
	onSheet := `{"requests":[{"createDeveloperMetadata":{"developerMetadata":{"metadataKey":"k","location":{"sheetId":0},"visibility":"DOCUMENT"}}}]}`
	if code, _ := post(t, e, "dm", onSheet); code != 501 {
		t.Fatalf("sheet-located metadata: %d, want 501", code)
	}
	// Past the spreadsheet's 30,000 characters of metadata: refused.
	big := `{"requests":[{"createDeveloperMetadata":{"developerMetadata":{"metadataKey":"k","metadataValue":"` + strings.Repeat("x", 30000) + `","location":{"spreadsheet":true},"visibility":"DOCUMENT"}}}]}`
	if code, body := post(t, e, "dm", big); code != 400 || !strings.Contains(body, "30000") {
		t.Fatalf("over the limit: %d %s", code, body)
	}
}

// What a replay lease needs: a lookup narrowed by the exact value deletes only metadata that
// still holds it (one someone replaced meanwhile stays), and a delete then a create of the same
// ID in one batch apply in order, so a lease can be taken over in one request.
func TestDeveloperMetadataLookupByValueAndReplace(t *testing.T) {
	e := New()
	e.AddWorkbook(&Workbook{SpreadsheetID: "dm", Sheets: []*Sheet{{Title: "Inbox"}}})
	create := func(id, value string) string {
		return `{"createDeveloperMetadata":{"developerMetadata":{"metadataId":` + id + `,"metadataKey":"triage.l","metadataValue":"` + value + `","location":{"spreadsheet":true},"visibility":"DOCUMENT"}}}`
	}
	delByValue := func(id, value string) string {
		return `{"deleteDeveloperMetadata":{"dataFilter":{"developerMetadataLookup":{"metadataId":` + id + `,"metadataKey":"triage.l","metadataValue":"` + value + `"}}}}`
	}
	if code, body := post(t, e, "dm", `{"requests":[`+create("77", "run-a")+`,`+create("78", "run-a")+`]}`); code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}
	// Taken over: delete exactly run-a's, create run-b's, one batch.
	if code, body := post(t, e, "dm", `{"requests":[`+delByValue("77", "run-a")+`,`+create("77", "run-b")+`]}`); code != 200 {
		t.Fatalf("take over: %d %s", code, body)
	}
	// A late takeover by a run that saw run-a's: its delete matches nothing, its create is
	// refused, and the batch with it.
	if code, body := post(t, e, "dm", `{"requests":[`+delByValue("77", "run-a")+`,`+create("77", "run-c")+`]}`); code != 400 || !strings.Contains(body, "already exists") {
		t.Fatalf("late takeover: %d %s", code, body)
	}
	// Every lease of run-a by one lookup of key and value.
	if code, body := post(t, e, "dm", `{"requests":[{"deleteDeveloperMetadata":{"dataFilter":{"developerMetadataLookup":{"metadataKey":"triage.l","metadataValue":"run-a"}}}}]}`); code != 200 {
		t.Fatalf("release: %d %s", code, body)
	}
	m := e.DeveloperMetadata("dm")
	if len(m) != 1 || m[0].MetadataID != 77 || m[0].Value != "run-b" {
		t.Fatalf("after all: %+v, want only 77 run-b", m)
	}
}
