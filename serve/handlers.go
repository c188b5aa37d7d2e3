package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/idkit/idkit"
)

// Header values, shared so that a response allocates none for them.
var (
	jsonType = []string{"application/json"}
	textType = []string{"text/plain; charset=utf-8"}
	noStore  = []string{"no-store"}
	nosniff  = []string{"nosniff"}
)

// buffers holds response buffers. One that grew beyond maxPooled (a
// request for far more IDs than usual) is left to the garbage collector.
var buffers = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

const maxPooled = 1 << 20

func getBuffer() *[]byte { return buffers.Get().(*[]byte) }

func putBuffer(b *[]byte) {
	if cap(*b) <= maxPooled {
		*b = (*b)[:0]
		buffers.Put(b)
	}
}

// handleIDs serves GET /v1/{scheme}?n=N and GET /v1/segment/{tag}?n=N.
func (s *Server) handleIDs(w http.ResponseWriter, r *http.Request, name string) {
	start := time.Now()
	client, ok := s.authenticate(r)
	if !ok {
		s.m.done(r, "ids", "", writeUnauthorized(w), start)
		return
	}
	sc := s.lookup(w, name)
	if sc == nil {
		s.m.done(r, "ids", "", http.StatusNotFound, start)
		return
	}
	status := s.issue(w, r, sc, client)
	if status == http.StatusOK {
		sc.idsOK.Inc()
		sc.idsLatency.Observe(time.Since(start).Seconds())
		return
	}
	s.m.done(r, "ids", sc.name, status, start)
}

// issue writes the IDs of one request of client and returns the status it
// wrote. A HEAD request is checked as a GET would be, and answered with
// the headers of a GET's answer but issues nothing, takes nothing of the
// client's limits and has no length: IDs are issued only to be sent.
func (s *Server) issue(w http.ResponseWriter, r *http.Request, sc *scheme, client string) int {
	n, err := s.count(r.URL.RawQuery)
	if err != nil {
		return writeError(w, http.StatusBadRequest, err.Error())
	}
	asText, ok := wantsText(r.Header["Accept"])
	if !ok {
		return writeError(w, http.StatusNotAcceptable, fmt.Sprintf("Accept %s allows neither application/json nor text/plain", quote(strings.Join(r.Header["Accept"], ", "))))
	}
	if r.Method == http.MethodHead {
		h := w.Header()
		h["Content-Type"] = jsonType
		if asText {
			h["Content-Type"] = textType
		}
		h["Cache-Control"] = noStore
		h["X-Content-Type-Options"] = nosniff
		w.WriteHeader(http.StatusOK)
		return http.StatusOK
	}
	if ok, why := s.limits.Allow(client, sc.name, n, s.clk.Now()); !ok {
		return writeTooMany(w, sc.name, why)
	}
	bp := getBuffer()
	defer putBuffer(bp)
	b := *bp
	if !asText {
		b = append(b, `{"ids":[`...)
	}
	b, err = sc.issue(r.Context(), b, n, asText)
	*bp = b
	if err != nil && r.Context().Err() != nil {
		return statusClientGone // nobody to answer
	}
	if err != nil {
		if s.cfg.Logger != nil {
			s.cfg.Logger.Warn("serve: cannot issue IDs", "scheme", sc.name, "err", err)
		}
		w.Header().Set("Retry-After", "1")
		return writeError(w, http.StatusServiceUnavailable, sc.name+": "+publicReason(err))
	}
	sc.issued.Add(float64(n))
	h := w.Header()
	if asText {
		h["Content-Type"] = textType
	} else {
		b = append(b[:len(b)-1], "]}\n"...) // the last comma
		*bp = b
		h["Content-Type"] = jsonType
	}
	h["Cache-Control"] = noStore
	h["X-Content-Type-Options"] = nosniff
	setLength(h, len(b))
	w.WriteHeader(http.StatusOK)
	w.Write(b)
	return http.StatusOK
}

// ownLength is the longest body whose length net/http sets itself: it
// holds a handler's first bytes in a buffer of this size and, when the
// handler returns with the whole body in it, sends its length, without
// the two allocations of a header value of the handler's own. A longer
// body would go out chunked.
const ownLength = 2048

// setLength sets the Content-Length header of a body of n bytes, unless
// net/http will (see ownLength).
func setLength(h http.Header, n int) {
	if n > ownLength {
		h["Content-Length"] = []string{strconv.Itoa(n)}
	}
}

// statusClientGone is the status counted for a request whose client went
// away before its IDs were issued, as nginx counts it: nothing is written.
const statusClientGone = 499

// count reads n from a request's query: 1 if absent.
func (s *Server) count(rawQuery string) (int, error) {
	if rawQuery == "" {
		return 1, nil
	}
	v, ok := strings.CutPrefix(rawQuery, "n=")
	if !ok || strings.ContainsAny(v, "&;%+") {
		q, err := url.ParseQuery(rawQuery)
		if err != nil {
			return 0, fmt.Errorf("query %s does not parse", quote(rawQuery))
		}
		if err := onlyParams(q, "n"); err != nil {
			return 0, err
		}
		if len(q["n"]) > 1 {
			return 0, fmt.Errorf("n given %d times, want once", len(q["n"]))
		}
		v = q.Get("n")
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > s.cfg.MaxN || v[0] == '+' {
		return 0, fmt.Errorf("n %s out of range, want 1 to %d", quote(v), s.cfg.MaxN)
	}
	return n, nil
}

// wantsText reads Accept headers: whether the client prefers text/plain
// to application/json, and whether it accepts either. Without a header,
// or at equal preference, the answer is JSON.
func wantsText(accept []string) (asText, ok bool) {
	if len(accept) == 0 {
		return false, true
	}
	// q of each type, from the most specific range that matches it (3
	// exact, 2 type/*, 1 */*).
	var jq, tq float64
	js, ts := 0, 0
	for _, h := range accept {
		for part := range strings.SplitSeq(h, ",") {
			mt, params, _ := strings.Cut(part, ";")
			mt = strings.ToLower(strings.TrimSpace(mt))
			q := 1.0
			for p := range strings.SplitSeq(params, ";") {
				if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.TrimSpace(k) == "q" {
					if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && f >= 0 && f <= 1 {
						q = f
					}
				}
			}
			spec := func(typ, sub string) int {
				switch mt {
				case typ + "/" + sub:
					return 3
				case typ + "/*":
					return 2
				case "*/*":
					return 1
				}
				return 0
			}
			if sp := spec("application", "json"); sp > js {
				js, jq = sp, q
			}
			if sp := spec("text", "plain"); sp > ts {
				ts, tq = sp, q
			}
		}
	}
	if js == 0 {
		jq = 0
	}
	if ts == 0 {
		tq = 0
	}
	if jq == 0 && tq == 0 {
		return false, false
	}
	return tq > jq, true
}

// handleInspect serves GET /v1/{scheme}/{id} and /v1/segment/{tag}/{id}.
func (s *Server) handleInspect(w http.ResponseWriter, r *http.Request, name string) {
	start := time.Now()
	if _, ok := s.authenticate(r); !ok {
		s.m.done(r, "inspect", "", writeUnauthorized(w), start)
		return
	}
	sc := s.lookup(w, name)
	if sc == nil {
		s.m.done(r, "inspect", "", http.StatusNotFound, start)
		return
	}
	status := http.StatusOK
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		status = writeError(w, http.StatusBadRequest, fmt.Sprintf("query %s does not parse", quote(r.URL.RawQuery)))
	} else if rep, err := sc.explain(r.PathValue("id"), q); err != nil {
		var he *httpError
		if errors.As(err, &he) {
			status = writeError(w, he.status, he.msg)
		} else {
			status = writeError(w, http.StatusBadRequest, err.Error())
		}
	} else {
		writeJSON(w, http.StatusOK, rep.JSON())
	}
	if status == http.StatusOK {
		sc.inspectOK.Inc()
		sc.inspectLatency.Observe(time.Since(start).Seconds())
		return
	}
	s.m.done(r, "inspect", sc.name, status, start)
}

// handleHealth serves GET /healthz.
// publicReason tells a client why IDs could not be issued, in words it can
// act on: the kind of failure, never the store's error, which may name
// files, hosts or keys. The details go to the server's log.
func publicReason(err error) string {
	switch {
	case errors.Is(err, idkit.ErrNodeLost):
		return "node claim lost; ask another server"
	case errors.Is(err, idkit.ErrExhausted):
		return "IDs used up for now; retry after Retry-After"
	case errors.Is(err, idkit.ErrRefused):
		return "store refused the request; ask another server"
	case errors.Is(err, idkit.ErrUnavailable):
		return "store unavailable; retry later"
	case errors.Is(err, idkit.ErrClosed):
		return "server shutting down; ask another server"
	}
	return "cannot issue IDs now; retry later"
}

// handleLive answers /livez: 200 while the process serves requests at all.
// It never depends on a store or a claim, so that a liveness probe does not
// restart a server that only waits for one.
func (s *Server) handleLive(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	writeJSON(w, http.StatusOK, []byte(`{"status":"ok"}`+"\n"))
	s.m.done(r, "livez", "", http.StatusOK, start)
}

// handleHealth answers /readyz and /healthz: 200 while the server can
// issue IDs, 503 while a node claim is lost, the store does not answer or
// its last write failed, or the server is shutting down.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rep := s.health.check(r.Context())
	status := http.StatusOK
	if rep.Error != "" {
		status = http.StatusServiceUnavailable
	}
	b, _ := json.Marshal(rep)
	writeJSON(w, status, append(b, '\n'))
	s.m.done(r, "healthz", "", status, start)
}

// quoteMax is the most bytes of what a client sent that an answer quotes.
const quoteMax = 64

// quote returns s, which a client sent, quoted as %q does, cut to its
// first quoteMax bytes: an answer names what was wrong without echoing
// whatever a client sends back to it.
func quote(s string) string {
	if len(s) <= quoteMax {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%q... (%d bytes)", s[:quoteMax], len(s))
}

// clip returns s, which a client sent, cut to its first quoteMax bytes,
// for a message that names it unquoted.
func clip(s string) string {
	if len(s) <= quoteMax {
		return s
	}
	return fmt.Sprintf("%s... (%d bytes)", strings.ToValidUTF8(s[:quoteMax], "?"), len(s))
}

// writeError writes {"error": msg} with status and returns status.
func writeError(w http.ResponseWriter, status int, msg string) int {
	b, _ := json.Marshal(struct {
		Error string `json:"error"`
	}{msg})
	writeJSON(w, status, append(b, '\n'))
	return status
}

func writeJSON(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h["Content-Type"] = jsonType
	h["Cache-Control"] = noStore
	h["X-Content-Type-Options"] = nosniff
	setLength(h, len(b))
	w.WriteHeader(status)
	w.Write(b)
}
