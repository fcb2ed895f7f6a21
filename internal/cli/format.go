package cli

// listTimeLayout is how `list` shows a row's time: in the sheet's zone, which it names.
const listTimeLayout = "2006-01-02 15:04 MST"

// article is "a" or "an" for a word read aloud ("an inbox tab", "a queue tab").
func article(word string) string {
	if word != "" && (word[0] == 'a' || word[0] == 'e' || word[0] == 'i' || word[0] == 'o' || word[0] == 'u') {
		return "an"
	}
	return "a"
}
