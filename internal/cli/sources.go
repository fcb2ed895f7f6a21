package cli

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/replay"
)

// buildSources turns the config's `[sources.NAME]` sections into the replay package's
// sources. What is wrong with a section is decided by config.CheckSource, the validator
// behind `triage config check` too (invariant 12): a section with a problem it reports is
// refused here with the same words, every problem of every source at once. A source without
// url_prefixes is only a warning there and builds here (replay.Plan refuses its rows with a
// reason naming it).
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

// buildSource converts one `[sources.NAME]` section that config.CheckSource accepts; it
// refuses one that it doesn't, listing its problems.
func buildSource(name string, sec config.SourceSection) (*replay.Source, error) {
	var probs []string
	for _, p := range config.CheckSource(name, sec) {
		if !p.Warning {
			probs = append(probs, p.Msg)
		}
	}
	if len(probs) > 0 {
		return nil, fmt.Errorf("[sources.%s]: %s", name, strings.Join(probs, "; "))
	}
	src := &replay.Source{
		Name:             name,
		Preset:           sec.PresetName(),
		URLPrefixes:      append([]string(nil), sec.URLPrefixes...),
		RedirectPrefixes: append([]string(nil), sec.RedirectPrefixes...),
		RatePerMinute:    sec.RatePerMinute,
		MaxAttempts:      sec.MaxAttempts,
		Concurrency:      sec.Concurrency,
		Timeout:          sec.TimeoutDuration(),
		KeyTTL:           sec.KeyTTLDuration(),
	}
	specs, err := sec.KeySpecs()
	if err != nil {
		return nil, fmt.Errorf("[sources.%s]: key: %v", name, err)
	}
	for _, k := range specs {
		in := replay.KeyInHeader
		if k.In == "body" {
			in = replay.KeyInBody
		}
		src.Key = append(src.Key, replay.KeySpec{In: in, Name: k.Name})
	}
	if len(sec.Headers) > 0 {
		src.Headers = make(map[string]string, len(sec.Headers))
		for h, v := range sec.Headers {
			src.Headers[h] = v
		}
	}
	if ov := sec.OutcomeOverrides(); len(ov) > 0 {
		src.Overrides = make(map[string]replay.Outcome, len(ov))
		for key, oname := range ov {
			o, err := replay.ParseOutcome(oname)
			if err != nil {
				// config.Outcomes and replay.ParseOutcome disagree: a test keeps them equal.
				return nil, fmt.Errorf("[sources.%s]: outcomes.%s: %v", name, key, err)
			}
			src.Overrides[key] = o
		}
	}
	return src, nil
}

// newReplayClient returns the one replay client of a process: the configured sources, secrets
// read through secret at send time, the default backoff (1s base, 30s cap) and a transport that
// follows no redirects (the client handles the Apps Script hop itself).
func newReplayClient(sources map[string]*replay.Source, secret func(string) string) *replay.Client {
	return &replay.Client{Sources: sources, Getenv: secret}
}

// newReplayRunner is the replayer of the interactive front ends (the TUI, demo and serve). It
// sets no bound on requests in flight, so Run's default holds, as for `triage replay` without
// --concurrency: each source at its own configured concurrency, the others sharing
// replay.DefaultConcurrency (a setting the person didn't give never wins over the config).
func newReplayRunner(sources map[string]*replay.Source, secret func(string) string, st replay.Store) *replay.Runner {
	return &replay.Runner{Client: newReplayClient(sources, secret), Store: st}
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
