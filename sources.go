package main

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/replay"
)

// buildSources turns the config's `[sources.NAME]` sections into the replay package's
// sources: preset names checked and normalised, durations parsed, outcome overrides parsed
// with replay.ParseOutcome, and the key placement(s) of config.KeySpecs converted. Every
// problem is reported (not just the first), each naming its source; a source without
// url_prefixes is not an error here (replay.Plan refuses its rows with a reason naming it).
func buildSources(cfg *config.Config) (map[string]*replay.Source, error) {
	out := map[string]*replay.Source{}
	if cfg == nil {
		return out, nil
	}
	names := make([]string, 0, len(cfg.Sources))
	for n := range cfg.Sources {
		names = append(names, n)
	}
	sort.Strings(names)
	var probs []string
	for _, name := range names {
		src, err := buildSource(name, cfg.Sources[name])
		if err != nil {
			probs = append(probs, err.Error())
			continue
		}
		out[name] = src
	}
	if len(probs) > 0 {
		return nil, errors.New("config: " + strings.Join(probs, "; "))
	}
	return out, nil
}

// buildSource converts one `[sources.NAME]` section.
func buildSource(name string, sec config.SourceSection) (*replay.Source, error) {
	var probs []string
	bad := func(format string, a ...any) { probs = append(probs, fmt.Sprintf(format, a...)) }

	preset := strings.ToLower(strings.TrimSpace(sec.Preset))
	switch preset {
	case "", replay.PresetREST:
		preset = replay.PresetREST
	case replay.PresetAppsScript:
	default:
		bad("unknown preset %q (presets: %s)", sec.Preset, strings.Join(config.Presets, ", "))
	}
	src := &replay.Source{
		Name:             name,
		Preset:           preset,
		URLPrefixes:      append([]string(nil), sec.URLPrefixes...),
		RedirectPrefixes: append([]string(nil), sec.RedirectPrefixes...),
		RatePerMinute:    sec.RatePerMinute,
		MaxAttempts:      sec.MaxAttempts,
		Concurrency:      sec.Concurrency,
	}
	specs, err := sec.KeySpecs()
	if err != nil {
		bad("key: %v", err)
	}
	for _, k := range specs {
		in := replay.KeyInHeader
		if k.In == "body" {
			in = replay.KeyInBody
		}
		src.Key = append(src.Key, replay.KeySpec{In: in, Name: k.Name})
	}
	if sec.RatePerMinute < 0 {
		bad("rate_per_minute must be ≥ 0 (0 = unlimited)")
	}
	if sec.MaxAttempts < 0 || sec.MaxAttempts > 10 {
		bad("max_attempts must be between 1 and 10")
	}
	if sec.Concurrency < 0 || sec.Concurrency > replay.MaxConcurrency {
		bad("concurrency must be between 1 and %d", replay.MaxConcurrency)
	}
	parseDur := func(key, v string) time.Duration {
		if strings.TrimSpace(v) == "" {
			return 0
		}
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d <= 0 {
			bad("%s %q is not a positive duration (e.g. \"20s\", \"24h\")", key, v)
			return 0
		}
		return d
	}
	src.Timeout = parseDur("timeout", sec.Timeout)
	src.KeyTTL = parseDur("key_ttl", sec.KeyTTL)
	if len(sec.Headers) > 0 {
		src.Headers = make(map[string]string, len(sec.Headers))
		for h, v := range sec.Headers {
			if !validHeaderName(h) {
				bad("header name %q is not a valid HTTP header name", h)
				continue
			}
			if env, ok := strings.CutPrefix(strings.TrimSpace(v), "env:"); ok && strings.TrimSpace(env) == "" {
				bad("header %s says env: without a variable name", h)
				continue
			}
			src.Headers[h] = v
		}
	}
	if len(sec.Outcomes) > 0 {
		src.Overrides = make(map[string]replay.Outcome, len(sec.Outcomes))
		codes := make([]string, 0, len(sec.Outcomes))
		for c := range sec.Outcomes {
			codes = append(codes, c)
		}
		sort.Strings(codes)
		for _, code := range codes {
			key := strings.ToLower(strings.TrimSpace(code))
			if key != replay.OverrideTimeout && key != replay.OverrideNetwork {
				n, err := strconv.Atoi(key)
				if err != nil || n < 100 || n > 599 {
					bad("outcome override %q is not an HTTP status (100-599), %q or %q", code, replay.OverrideTimeout, replay.OverrideNetwork)
					continue
				}
				key = strconv.Itoa(n)
			}
			o, err := replay.ParseOutcome(sec.Outcomes[code])
			if err != nil {
				bad("outcomes.%s: %v", code, err)
				continue
			}
			src.Overrides[key] = o
		}
	}
	if len(probs) > 0 {
		return nil, fmt.Errorf("[sources.%s]: %s", name, strings.Join(probs, "; "))
	}
	return src, nil
}

// newReplayClient returns the one replay client of a process: the configured sources, secrets
// read through getenv at send time, the default backoff (1s base, 30s cap) and a transport that
// follows no redirects (the client handles the Apps Script hop itself).
func newReplayClient(sources map[string]*replay.Source, getenv func(string) string) *replay.Client {
	return &replay.Client{Sources: sources, Getenv: getenv}
}

// sourceNames lists the configured sources, sorted, for messages.
func sourceNames(sources map[string]*replay.Source) string {
	if len(sources) == 0 {
		return "none configured"
	}
	n := make([]string, 0, len(sources))
	for k := range sources {
		n = append(n, k)
	}
	sort.Strings(n)
	return joinQuoted(n)
}

// validHeaderName reports whether h is an HTTP header field name (RFC 9110 token).
func validHeaderName(h string) bool {
	if h == "" {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
