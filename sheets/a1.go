package sheets

import (
	"strings"
)

// quoteTab returns a tab name as the sheet part of an A1 range: always in single quotes,
// with each apostrophe inside doubled, as Sheets requires ("it's" becomes a quoted "it" +
// two apostrophes + "s"). Quoting is valid for every name, so no name needs a special case.
func quoteTab(name string) string {
	return "'" + strings.ReplaceAll(name, "'", "''") + "'"
}
