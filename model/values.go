package model

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
)

// CellString turns a cell value as the API returns it under UNFORMATTED_VALUE (string,
// float64, bool, json.Number or nil) into the canonical text triage compares and stores.
// The store uses the same function at write time, so "the value the user saw" and "the
// value the cell holds now" are always compared in one form.
func CellString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(x), 'f', -1, 32)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		if x {
			return "TRUE"
		}
		return "FALSE"
	case json.Number:
		return x.String()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// serialEpoch is day 0 of a spreadsheet serial date (Lotus-compatible, as Sheets uses).
var serialEpoch = time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)

// SerialToTime converts a serial date-time (days since 1899-12-30, in the spreadsheet's time
// zone) to a time, rounded to the second.
func SerialToTime(serial float64, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	days := math.Floor(serial)
	secs := math.Round((serial - days) * 86400)
	d := serialEpoch.AddDate(0, 0, int(days)).Add(time.Duration(secs) * time.Second)
	return time.Date(d.Year(), d.Month(), d.Day(), d.Hour(), d.Minute(), d.Second(), 0, loc)
}

// TimeToSerial is the inverse of SerialToTime.
func TimeToSerial(t time.Time, loc *time.Location) float64 {
	if loc == nil {
		loc = time.UTC
	}
	t = t.In(loc)
	wall := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
	return wall.Sub(serialEpoch).Seconds() / 86400
}

var textLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05",
	"2006-01-02 15:04",
	"2006-01-02",
	"1/2/2006 15:04:05",
	"1/2/2006 15:04",
	"1/2/2006",
	"2 Jan 2006 15:04",
	"Jan 2, 2006 15:04",
	time.RFC1123Z,
	time.RFC1123,
}

// ParseTime reads a timestamp cell: a serial number (UNFORMATTED_VALUE + SERIAL_NUMBER, in
// loc), or text in RFC 3339 or a common spreadsheet form (zone-less text is read in loc).
func ParseTime(v any, loc *time.Location) (time.Time, bool) {
	if loc == nil {
		loc = time.UTC
	}
	switch x := v.(type) {
	case float64:
		if x <= 0 || x > 2958465 { // 9999-12-31
			return time.Time{}, false
		}
		return SerialToTime(x, loc), true
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return time.Time{}, false
		}
		return ParseTime(f, loc)
	case string:
		s := strings.TrimSpace(x)
		if s == "" {
			return time.Time{}, false
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return ParseTime(f, loc)
		}
		for _, l := range textLayouts {
			if t, err := time.ParseInLocation(l, s, loc); err == nil {
				return t, true
			}
		}
	}
	return time.Time{}, false
}

// FormatTime renders a time for a cell written by triage: RFC 3339 in UTC, which ParseTime
// reads back and a person can read in the sheet.
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
