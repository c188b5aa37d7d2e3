package connlimit

import (
	"fmt"
	"net/http"
	"net/netip"
	"sync"
)

// streamShares counts the HTTP/2 requests in flight by client address,
// up to Limits.MaxStreamsPerClient each.
type StreamShares struct {
	max int // negative for no cap
	mu  sync.Mutex
	by  map[netip.Addr]int
}

func NewStreamShares(max int) *StreamShares {
	return &StreamShares{max: max, by: make(map[netip.Addr]int)}
}

// take counts one more request of r's client address in flight, and
// reports false, counting nothing, when the address has its share. An
// HTTP/1.1 request, or one without an IP address, always passes:
// MaxBusyConnsPerClient bounds HTTP/1.1.
func (s *StreamShares) Take(r *http.Request) (netip.Addr, bool) {
	if s.max < 0 || r.ProtoMajor != 2 {
		return netip.Addr{}, true
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}, true
	}
	a := ap.Addr().Unmap()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.by[a] >= s.max {
		return netip.Addr{}, false
	}
	s.by[a]++
	return a, true
}

// give gives back a request's room that take counted for address a.
func (s *StreamShares) Give(a netip.Addr) {
	if !a.IsValid() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.by[a]--; s.by[a] <= 0 {
		delete(s.by, a)
	}
}

// tooManyStreams answers a request past its address's share: headers
// alone, which no flow-control window holds back, so that the stream
// ends at once even when the client lets no data through. The reason is
// in a header.
func (s *StreamShares) TooManyStreams(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Retry-After", "1")
	h.Set("Idkit-Error", fmt.Sprintf("this address has %d HTTP/2 requests in flight, the most it may; retry after Retry-After", s.max))
	w.WriteHeader(http.StatusTooManyRequests)
}
