package model

import (
	"strings"
	"testing"
)

// A batch is checked whole: every bad letter named in one error, a good batch nil.
func TestCheckDeadLettersNamesEveryBadLetter(t *testing.T) {
	good := DeadLetter{Key: "k1", Source: "crm", URL: "https://crm.example/a", Payload: `{"a":1}`}
	if err := CheckDeadLetters([]DeadLetter{good, good}); err != nil {
		t.Fatalf("good batch: %v", err)
	}
	if err := CheckDeadLetters(nil); err != nil {
		t.Fatalf("empty batch: %v", err)
	}
	notText := good
	notText.Key, notText.Payload = "k2", "\xff\xfe"
	tooLong := good
	tooLong.Key, tooLong.Payload = "k3", strings.Repeat("x", 60_000)
	err := CheckDeadLetters([]DeadLetter{good, notText, tooLong})
	if err == nil {
		t.Fatal("a batch with two bad letters passed")
	}
	if msg := err.Error(); !strings.Contains(msg, "not UTF-8") || strings.Count(msg, "dead letter") != 2 {
		t.Errorf("error %q: want both bad letters named", msg)
	}
}
