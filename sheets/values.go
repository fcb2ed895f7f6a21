package sheets

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"google.golang.org/api/googleapi"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets/internal/batchget"
)

// This file reads values:batchGet answers without the Go client's generic decode. A 100,000-row
// tab is ~15 MB of JSON; the client reads it whole into memory, validates it in one pass and
// decodes it by reflection in another (gensupport.DecodeResponseBytes was 46% of a load's
// CPU). Here the answer is decoded as it arrives, in one pass, by batchget.Decode, straight
// into the rows model.Decode takes (the decoder, its differential tests and its fuzz target
// live in sheets/internal/batchget). The request is the one the sheets/v4 client builds (same
// URL, query and auth: the same *http.Client), sent through Options.HTTPClient; without one
// the store uses the client's Do.

// rawBatchGet sends one values:batchGet with the store's HTTP client and decodes the answer
// streaming: the rows of each range, in the order asked. A non-2xx answer is the
// *googleapi.Error the client's Do would return, so retries and messages are the same.
func (s *Store) rawBatchGet(ctx context.Context, ranges []string) ([][][]any, error) {
	q := url.Values{}
	q.Set("alt", "json")
	q.Set("prettyPrint", "false")
	q.Set("valueRenderOption", valueRender)
	q.Set("dateTimeRenderOption", dateTimeRender)
	for _, r := range ranges {
		q.Add("ranges", r)
	}
	u := googleapi.ResolveRelative(s.svc.BasePath, "v4/spreadsheets/{spreadsheetId}/values:batchGet") + "?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	googleapi.Expand(req.URL, map[string]string{"spreadsheetId": s.id})
	if s.svc.UserAgent != "" {
		req.Header.Set("User-Agent", s.svc.UserAgent)
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	s.gclock.saw(resp.Header)
	if err := googleapi.CheckResponse(resp); err != nil {
		return nil, err
	}
	rows, err := batchget.Decode(resp.Body, progressOf(ctx))
	if err != nil {
		return nil, fmt.Errorf("reading the Sheets API's answer: %w", err)
	}
	if len(rows) != len(ranges) {
		return nil, fmt.Errorf("the Sheets API answered %d ranges for %d requested", len(rows), len(ranges))
	}
	return rows, nil
}

// progressKey is the context key of a read's progress callback (withTabProgress).
type progressKey struct{}

// withTabProgress returns a context under which a read of the tabs titles reports, every
// batchget.ProgressEvery rows and at the end of each range, how many rows of each it has
// decoded, to the caller's model.LoadProgressFunc (model.WithLoadProgress), with the tab's grid row count as
// the total: a first screen or a progress bar can be shown before a large tab is whole. The
// report runs on the reading goroutine and must not block.
func (s *Store) withTabProgress(ctx context.Context, titles []string) context.Context {
	totals := make([]int, len(titles))
	for i, t := range titles {
		totals[i] = s.gridRows(t)
	}
	return context.WithValue(ctx, progressKey{}, func(i, rows int) {
		if i < len(titles) {
			model.ReportLoadProgress(ctx, titles[i], rows, max(totals[i], rows))
		}
	})
}

func progressOf(ctx context.Context) func(int, int) {
	f, _ := ctx.Value(progressKey{}).(func(int, int))
	return f
}
