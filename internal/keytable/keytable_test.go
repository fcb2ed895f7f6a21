package keytable

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseRefusesABadLine: a line without its five columns, or before any area, is an error
// naming the line, never a binding dropped in silence.
func TestParseRefusesABadLine(t *testing.T) {
	for _, table := range []string{
		"# App\nquit | Quit | q | q\n",
		"quit | Quit | q | q | quit\n",
		"# App\nquit | Quit | q | q | \n",
	} {
		if _, err := Parse(table); err == nil || !strings.Contains(err.Error(), "keyTable line") {
			t.Errorf("Parse(%q) = %v, want an error naming the line", table, err)
		}
	}
	rows, err := Parse("# App\nquit | Quit | q ctrl+c | q | quit\n")
	if err != nil || len(rows) != 1 || rows[0].Area != "App" || len(rows[0].Keys) != 2 {
		t.Fatalf("Parse = %+v, %v", rows, err)
	}
}

// TestGenerateReadsTheConstant: Generate finds keyTable among a file's declarations and
// writes gofmt'ed source for it; a file without it is an error.
func TestGenerateReadsTheConstant(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.go")
	if err := os.WriteFile(good, []byte("package main\n\nconst other = 1\n\nconst keyTable = `\n# App\nquit | Quit | q | q | quit\n`\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := Generate(good)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"DO NOT EDIT.", `Quit: b("q", "quit", "q"),`, `{"quit", &k.Quit},`} {
		if !strings.Contains(string(src), want) {
			t.Errorf("generated source lacks %q:\n%s", want, src)
		}
	}
	bad := filepath.Join(dir, "bad.go")
	if err := os.WriteFile(bad, []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(bad); err == nil {
		t.Error("Generate of a file without keyTable succeeded")
	}
}
