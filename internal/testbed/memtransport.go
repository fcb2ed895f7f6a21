package testbed

import (
	"net/http"
	"net/http/httptest"
)

// HandlerTransport serves a client's requests from a handler in memory (the emulator): no
// socket, so a testing/synctest bubble's fake clock runs the client's waits and the handler's
// clock together, and a bubble whose goroutines all wait is seen as such.
type HandlerTransport struct{ Handler http.Handler }

// RoundTrip serves r from the handler, as a server would receive it.
func (t HandlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	in := r.Clone(r.Context())
	if in.Body == nil {
		in.Body = http.NoBody // a server's request always has one
	}
	t.Handler.ServeHTTP(rec, in)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}
