package emulator

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	drive "google.golang.org/api/drive/v3"
	"google.golang.org/api/option"
)

func wireBook() *Workbook {
	rows := [][]any{{"ID", "Status"}}
	for i := range 200 {
		rows = append(rows, []any{"m" + strings.Repeat("x", i%7), "new"})
	}
	return &Workbook{SpreadsheetID: "wire", Title: "wire", Sheets: []*Sheet{{Title: "Inbox", Rows: rows}}}
}

// get sends a GET with the given Accept-Encoding ("" sends none: Go's transport would add
// gzip itself, so compression is turned off and the header set by hand).
func get(t *testing.T, url, acceptEncoding string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// Responses are gzipped when the client asks (as Google's are), and only then; the body
// unzips to the same JSON.
func TestGzipWhenAsked(t *testing.T) {
	e := New()
	e.AddWorkbook(wireBook())
	srv := httptest.NewServer(e)
	defer srv.Close()
	url := srv.URL + "/v4/spreadsheets/wire/values:batchGet?ranges=Inbox&prettyPrint=false"

	plain := get(t, url, "")
	if plain.Header.Get("Content-Encoding") != "" {
		t.Fatalf("gzipped without being asked: %v", plain.Header)
	}
	want, _ := io.ReadAll(plain.Body)

	for _, ae := range []string{"gzip", "deflate, gzip;q=0.8", "br,GZIP"} {
		zipped := get(t, url, ae)
		if zipped.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("Accept-Encoding %q: Content-Encoding %q, want gzip", ae, zipped.Header.Get("Content-Encoding"))
		}
		raw, _ := io.ReadAll(zipped.Body)
		if len(raw) >= len(want) {
			t.Errorf("Accept-Encoding %q: %d bytes on the wire, not less than %d plain", ae, len(raw), len(want))
		}
		zr, err := gzip.NewReader(strings.NewReader(string(raw)))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(zr)
		if string(got) != string(want) {
			t.Errorf("Accept-Encoding %q: unzipped body differs from the plain one", ae)
		}
	}
	if r := get(t, url, "gzip;q=0"); r.Header.Get("Content-Encoding") != "" {
		t.Errorf("gzip;q=0 was gzipped")
	}
	// Errors too.
	if r := get(t, srv.URL+"/v4/spreadsheets/nope/values:batchGet?ranges=A", "gzip"); r.StatusCode != 404 || r.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("error answer: %d %q", r.StatusCode, r.Header.Get("Content-Encoding"))
	}
}

// The Drive files.get version: served with the Go drive/v3 client, bumped by every write
// through the API and by every direct change, not by reads.
func TestDriveVersion(t *testing.T) {
	e := New()
	e.AddWorkbook(wireBook())
	srv := httptest.NewServer(e)
	defer srv.Close()
	ctx := context.Background()
	dsvc, err := drive.NewService(ctx, option.WithEndpoint(srv.URL+"/drive/v3/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	version := func() int64 {
		t.Helper()
		f, err := dsvc.Files.Get("wire").Fields("version").Context(ctx).Do()
		if err != nil {
			t.Fatal(err)
		}
		return f.Version
	}
	v0 := version()
	if v0 != e.Version("wire") || v0 < 1 {
		t.Fatalf("version %d, emulator says %d", v0, e.Version("wire"))
	}
	// A read changes nothing.
	get(t, srv.URL+"/v4/spreadsheets/wire/values:batchGet?ranges=Inbox", "")
	if v := version(); v != v0 {
		t.Errorf("a read bumped the version: %d → %d", v0, v)
	}
	// A write through the API.
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/v4/spreadsheets/wire/values/Inbox!B2?valueInputOption=RAW", strings.NewReader(`{"values":[["done"]]}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("write: %v %v", err, resp)
	}
	resp.Body.Close()
	v1 := version()
	if v1 <= v0 {
		t.Errorf("a write left the version at %d (was %d)", v1, v0)
	}
	// A direct change (a person in the Sheets UI).
	if err := e.SetCell("wire", "Inbox", 3, 1, "spam"); err != nil {
		t.Fatal(err)
	}
	if v2 := version(); v2 <= v1 {
		t.Errorf("a direct change left the version at %d (was %d)", v2, v1)
	}
	// The answer is a few hundred bytes, the field mask applied.
	r := get(t, srv.URL+"/drive/v3/files/wire?fields=version&alt=json", "")
	var body map[string]any
	raw, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(raw, &body); err != nil || len(body) != 1 || body["version"] == nil || len(raw) > 300 {
		t.Errorf("files.get?fields=version answered %s", raw)
	}
	if e.Count(MethodDriveGet) == 0 {
		t.Error("drive requests not counted")
	}
	// An unknown file is a 404.
	if _, err := dsvc.Files.Get("nope").Fields("version").Context(ctx).Do(); err == nil {
		t.Error("an unknown file has a version")
	}
}
