// Package tcpproxy forwards TCP connections from a loopback port to a
// server, for tests that cut a client off from its server (etcd,
// PostgreSQL, MariaDB, Redis) while the server runs on, or hold its bytes
// and deliver them late.
//
// It is for tests only; nothing in the library imports it.
package tcpproxy

import (
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy forwards TCP connections from a loopback port to a target address.
// A test can cut it, modelling a client cut off from its server while the
// server runs on, or pause it, modelling a link that holds bytes and
// delivers them late.
type Proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	cut    bool
	paused chan struct{} // while paused, open; closed by Resume
	conns  map[net.Conn]struct{}
}

// New starts a proxy to target (host:port, or a URL whose host is used)
// and stops it when the test ends.
func New(t testing.TB, target string) *Proxy {
	t.Helper()
	if u, err := url.Parse(target); err == nil && u.Host != "" {
		target = u.Host
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("tcpproxy: %v", err)
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.serve()
	t.Cleanup(p.close)
	return p
}

// Endpoint returns the proxy's URL, as an etcd client names an endpoint.
func (p *Proxy) Endpoint() string { return "http://" + p.ln.Addr().String() }

// Addr returns the proxy's host:port, for clients of any TCP server.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Cut closes every forwarded connection, dropping any bytes a pause held,
// and refuses new ones until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
	p.resume()
}

// Restore forwards new connections again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

// Pause holds every byte in both directions, of the open connections and
// of new ones, until Resume delivers them, in order. Neither end learns of
// the pause: their requests are late, not refused.
func (p *Proxy) Pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused == nil {
		p.paused = make(chan struct{})
	}
}

// Resume delivers the bytes held since Pause and forwards as before.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.resume()
}

func (p *Proxy) resume() {
	if p.paused != nil {
		close(p.paused)
		p.paused = nil
	}
}

// gate returns once the proxy is not paused.
func (p *Proxy) gate() {
	p.mu.Lock()
	paused := p.paused
	p.mu.Unlock()
	if paused != nil {
		<-paused
	}
}

func (p *Proxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(in)
	}
}

func (p *Proxy) forward(in net.Conn) {
	if !p.track(in) {
		in.Close()
		return
	}
	out, err := net.Dial("tcp", p.target)
	if err != nil || !p.track(out) {
		in.Close()
		if out != nil {
			out.Close()
		}
		return
	}
	done := make(chan struct{}, 2)
	go p.pipe(out, in, done)
	go p.pipe(in, out, done)
	<-done
	<-done
	p.mu.Lock()
	delete(p.conns, in)
	delete(p.conns, out)
	p.mu.Unlock()
}

// pipe copies src to dst, holding what it read while the proxy is paused
// (and, the kernel's buffers filling, what src sends after it).
func (p *Proxy) pipe(dst, src net.Conn, done chan<- struct{}) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.gate()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
	done <- struct{}{}
}

// track records c, or reports false while the proxy is cut.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) close() {
	p.ln.Close()
	p.Cut()
}
