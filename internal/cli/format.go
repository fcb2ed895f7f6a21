package cli

import (
	"fmt"
	"time"
)

// humanDuration says d the way a person would: "45 s", "30 min", "1 h 40 min", "2 d 3 h".
// Under a minute it counts seconds, under two days hours and minutes, then days and hours.
func humanDuration(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	if d < time.Minute {
		return fmt.Sprintf("%d s", int(d.Round(time.Second)/time.Second))
	}
	d = d.Round(time.Minute)
	h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
	switch {
	case h >= 48:
		if h%24 == 0 {
			return fmt.Sprintf("%d d", h/24)
		}
		return fmt.Sprintf("%d d %d h", h/24, h%24)
	case h > 0 && m == 0:
		return fmt.Sprintf("%d h", h)
	case h > 0:
		return fmt.Sprintf("%d h %d min", h, m)
	}
	return fmt.Sprintf("%d min", m)
}

// listTimeLayout is how `list` shows a row's time: in the sheet's zone, which it names.
const listTimeLayout = "2006-01-02 15:04 MST"

// article is "a" or "an" for a word read aloud ("an inbox tab", "a queue tab").
func article(word string) string {
	if word != "" && (word[0] == 'a' || word[0] == 'e' || word[0] == 'i' || word[0] == 'o' || word[0] == 'u') {
		return "an"
	}
	return "a"
}
