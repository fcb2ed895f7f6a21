package googleauth_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestWhoImportsTheSignIn holds docs/DESIGN.md §1's rule for this package: of ours it
// imports only model, and of the product's packages only sheets (whose Connect asks it for
// a credential) and internal/cli (the auth commands) import it, so sign-in stays one room
// that the rest reaches through the store.
func TestWhoImportsTheSignIn(t *testing.T) {
	const module = "github.com/triage-dev/triage/"
	importers := []string{"sheets", filepath.Join("internal", "cli")}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		rel, _ := filepath.Rel(root, p)
		dir := filepath.Dir(rel)
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			ours, isOurs := strings.CutPrefix(path, module)
			switch {
			case !isOurs:
			case dir == "googleauth" && ours != "model":
				t.Errorf("%s imports %s: googleauth may import only model of ours", rel, path)
			case ours == "googleauth" && !slices.Contains(importers, dir):
				t.Errorf("%s imports googleauth: only %v may", rel, importers)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("read %d production files under %s: not the module's tree", files, root)
	}
}
