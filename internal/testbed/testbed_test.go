package testbed

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

const module = "github.com/triage-dev/triage/"

// TestOnlyTestsImportTheTestbed holds docs/DESIGN.md §1's rule: no production file (a .go
// file that is not a _test.go file, outside this package) imports internal/testbed, and the
// testbed imports only the packages of ours that the rule names, so that the in-package tests
// of tui, internal/serve and internal/cli can import it without a cycle. The same holds for
// the store contract's suite: no production file outside the testbed imports store/storetest,
// and storetest imports only model and store of ours; store itself imports only model.
func TestOnlyTestsImportTheTestbed(t *testing.T) {
	storetestAllowed := []string{"model", "store"}
	allowed := []string{"model", "store", "store/storetest", "sheets", "sheets/emulator", "replay/receiver"}
	root, err := filepath.Abs("../..")
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
		inTestbed := filepath.Dir(rel) == filepath.Join("internal", "testbed")
		inStoretest := filepath.Dir(rel) == filepath.Join("store", "storetest")
		inStore := filepath.Dir(rel) == "store"
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			ours, isOurs := strings.CutPrefix(path, module)
			switch {
			case !isOurs:
			case inTestbed && !slices.Contains(allowed, ours):
				t.Errorf("%s imports %s: the testbed may import only %v of ours", rel, path, allowed)
			case inStore && ours != "model":
				t.Errorf("%s imports %s: the store contract imports only model of ours", rel, path)
			case inStoretest && !slices.Contains(storetestAllowed, ours):
				t.Errorf("%s imports %s: store/storetest may import only %v of ours", rel, path, storetestAllowed)
			case !inTestbed && ours == "internal/testbed":
				t.Errorf("%s is production code and imports the testbed", rel)
			case !inTestbed && !inStoretest && ours == "store/storetest":
				t.Errorf("%s is production code and imports store/storetest", rel)
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

// Until checks at once, polls until the condition holds, and gives up (false) only when the
// test is over.
func TestUntil(t *testing.T) {
	n := 0
	if !Until(t, func() bool { n++; return n == 3 }) || n != 3 {
		t.Fatalf("Until stopped after %d checks, want 3", n)
	}
	t.Run("over", func(t *testing.T) {
		// In a cleanup, the test's context is done: Until no longer waits.
		t.Cleanup(func() {
			if Until(t, func() bool { return false }) {
				t.Error("Until reported a condition that never held")
			}
		})
	})
}
