package emulator

import "testing"

func TestFormulaResult(t *testing.T) {
	computed := map[string]float64{
		"=4/2":         2,
		"= 1 / 1024":   0.0009765625,
		"=3/2":         1.5,
		"=-2^2":        4,
		"=2^3^2":       64,
		"=(1+2)*3":     9,
		"=1e3+.5":      1000.5,
		"=+1--1":       2,
		"= ( 2 ) ":     2,
		"=10-2-3":      5,
		"=2*3+4*5":     26,
		"=1.5E-1*10":   1.5,
		"=-(3-5)/2^-1": 4,
	}
	for f, want := range computed {
		if got, ok := formulaResult(f); !ok || got != want {
			t.Errorf("%s = %v, %v; want %v", f, got, ok, want)
		}
	}
	for _, f := range []string{"=A1", "=SUM(1,2)", "=", "=1+", "=2 3", "=1/0", "=(1", "=1)", `="a"`, "=1e", "=A1&B1", "=- item", "=10^400"} {
		if v, ok := formulaResult(f); ok {
			t.Errorf("%s computed as %v; the emulator doesn't know its value", f, v)
		}
	}
	// Formatted, Sheets rounds a long result in a way the emulator doesn't model: refused.
	third := cell{v: "=1/3", f: true}
	if formulaShown(third, "FORMATTED_VALUE") || !formulaShown(third, "UNFORMATTED_VALUE") || !formulaShown(third, "FORMULA") {
		t.Error("=1/3: formatted should be refused, unformatted and FORMULA given")
	}
}

func TestTypedAsNumber(t *testing.T) {
	for _, s := range []string{"2020-01-01", "1999-01-02", "1/2", "1/2/2020", "12-31-99", "10:30", "10:30:15 pm", "Jan 2", "2 January 2020", "January 2nd, 2020",
		"12%", "-3.5 %", "$5", "5 €", "$1,000.50", "2,000,000.01", " 1,234 "} {
		if !typedAsNumber(s) {
			t.Errorf("%q: Google stores it as a formatted number; the emulator should refuse it", s)
		}
	}
	for _, s := range []string{"hello", "42", "-1.5e3", "May", "call me at 10", "'2020-01-01", "=1+1", "1,2,3", "1.5", "0.12", "12.31", "room 101", "1.2.3.4", "v1.2", "12 monkeys", ""} {
		if typedAsNumber(s) {
			t.Errorf("%q refused as a formatted number; Google keeps it as typed", s)
		}
	}
}
