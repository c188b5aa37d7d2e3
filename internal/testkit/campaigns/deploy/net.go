//go:build linux

// Package deploy runs idkit as it is deployed: three etcd server
// processes and four "idkit-full serve" processes, each in a network
// namespace of its own joined to a bridge by a veth pair, behind two
// HAProxy, so that a fault is a real network fault (a link set down, a
// route that drops one direction) or a real process fault (SIGKILL,
// SIGSTOP, a restart). It uses the files of the repository's deploy directory: the
// systemd unit's ExecStart and credentials, the etcd flags, the script
// that turns etcd's authentication on, and the HAProxy configuration.
//
// It needs root, network namespaces and veth pairs (Linux), HAProxy
// (Debian's haproxy package) and setpriv (util-linux).
package deploy

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// A Net is a bridge in the host's namespace and the hosts joined to it.
type Net struct {
	id     string // a random tag in every name, so that runs never meet
	bridge string
	prefix netip.Prefix // a /24; the bridge is .1
	mu     sync.Mutex
	hosts  []*Host
	routes map[[2]string]bool // blackholed (from host, to address)
}

// A Host is a network namespace with one address on the Net.
type Host struct {
	Name string     // "e1", "s3"
	NS   string     // the namespace's name
	IP   netip.Addr // its address on the bridge
	veth string     // the veth's end in the host namespace
	net  *Net
}

// Available reports why the harness cannot run here, or nil: it needs
// root, the ip command, and a kernel that makes namespaces, bridges and
// veth pairs.
func Available() error {
	if os.Geteuid() != 0 {
		return errors.New("the deployed fleet needs root, for network namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return errors.New("the deployed fleet needs the ip command (iproute2)")
	}
	if _, err := exec.LookPath("haproxy"); err != nil {
		return errors.New("the deployed fleet needs haproxy (apt-get install haproxy)")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		return errors.New("the deployed fleet needs setpriv, to run the servers as their own user (apt-get install util-linux)")
	}
	id := tag()
	if err := ip("netns", "add", "idkchk"+id); err != nil {
		return fmt.Errorf("the deployed fleet needs network namespaces: %w", err)
	}
	defer ip("netns", "del", "idkchk"+id)
	if err := ip("link", "add", "idkchk"+id, "type", "veth", "peer", "name", "idkchp"+id); err != nil {
		return fmt.Errorf("the deployed fleet needs veth pairs: %w", err)
	}
	return ip("link", "del", "idkchk"+id)
}

// NewNet makes a bridge on 10.X.Y.0/24 (X and Y random) and a namespace
// for each of names, with addresses .11 upwards in the order given.
func NewNet(names ...string) (*Net, error) {
	var b [2]byte
	rand.Read(b[:])
	n := &Net{
		id:     tag(),
		prefix: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 100 + b[0]%100, b[1], 0}), 24),
		routes: make(map[[2]string]bool),
	}
	n.bridge = "idk" + n.id + "br"
	if err := n.setUp(names); err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

func (n *Net) setUp(names []string) error {
	if err := ip("link", "add", n.bridge, "type", "bridge"); err != nil {
		return err
	}
	if err := ip("addr", "add", n.Gateway().String()+"/24", "dev", n.bridge); err != nil {
		return err
	}
	if err := ip("link", "set", n.bridge, "up"); err != nil {
		return err
	}
	for i, name := range names {
		a := n.prefix.Addr().As4()
		a[3] = byte(11 + i)
		h := &Host{Name: name, NS: "idk" + n.id + name, IP: netip.AddrFrom4(a), veth: "idk" + n.id + name, net: n}
		peer := h.veth + "p"
		for _, args := range [][]string{
			{"netns", "add", h.NS},
			{"link", "add", h.veth, "type", "veth", "peer", "name", peer},
			{"link", "set", peer, "netns", h.NS},
			{"-n", h.NS, "link", "set", peer, "name", "eth0"},
			{"-n", h.NS, "addr", "add", h.IP.String() + "/24", "dev", "eth0"},
			{"-n", h.NS, "link", "set", "eth0", "up"},
			{"-n", h.NS, "link", "set", "lo", "up"},
			{"link", "set", h.veth, "master", n.bridge},
			{"link", "set", h.veth, "up"},
		} {
			if err := ip(args...); err != nil {
				return err
			}
		}
		n.hosts = append(n.hosts, h)
	}
	return nil
}

// Gateway is the bridge's address: the host namespace's, where HAProxy
// and the clients run.
func (n *Net) Gateway() netip.Addr {
	a := n.prefix.Addr().As4()
	a[3] = 1
	return netip.AddrFrom4(a)
}

// Host returns the host called name.
func (n *Net) Host(name string) *Host {
	for _, h := range n.hosts {
		if h.Name == name {
			return h
		}
	}
	panic("deploy: no host " + name)
}

// Cut sets the host's link down: it reaches no one and no one reaches it.
func (h *Host) Cut() error { return ip("link", "set", h.veth, "down") }

// Join sets the host's link up again.
func (h *Host) Join() error { return ip("link", "set", h.veth, "up") }

// Drop makes the host's packets to each of to go nowhere (a blackhole
// route in its namespace): traffic from to still arrives, answers to it
// do not, as when one direction of a link fails.
func (h *Host) Drop(to ...*Host) error {
	h.net.mu.Lock()
	defer h.net.mu.Unlock()
	for _, t := range to {
		key := [2]string{h.NS, t.IP.String()}
		if h.net.routes[key] {
			continue
		}
		if err := ip("-n", h.NS, "route", "add", "blackhole", t.IP.String()+"/32"); err != nil {
			return err
		}
		h.net.routes[key] = true
	}
	return nil
}

// Split drops every packet between a host of side and one of other, both
// ways: a partition.
func Split(side, other []*Host) error {
	for _, h := range side {
		if err := h.Drop(other...); err != nil {
			return err
		}
	}
	for _, h := range other {
		if err := h.Drop(side...); err != nil {
			return err
		}
	}
	return nil
}

// Heal removes every route that Drop or Split added and sets every link
// up.
func (n *Net) Heal() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	var errs []error
	for key := range n.routes {
		if err := ip("-n", key[0], "route", "del", "blackhole", key[1]+"/32"); err != nil {
			errs = append(errs, err)
		}
		delete(n.routes, key)
	}
	for _, h := range n.hosts {
		errs = append(errs, h.Join())
	}
	return errors.Join(errs...)
}

// Close deletes the namespaces, their veth pairs and the bridge.
func (n *Net) Close() error {
	var errs []error
	for _, h := range n.hosts {
		errs = append(errs, ip("netns", "del", h.NS))
		ip("link", "del", h.veth) // gone with its namespace's end, as a rule
	}
	if n.bridge != "" {
		errs = append(errs, ip("link", "del", n.bridge))
	}
	return errors.Join(errs...)
}

// Command returns the command that runs name with args in the host's
// namespace: "ip netns exec" enters it and execs name, which keeps the
// process's pid.
func (h *Host) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", h.NS, name}, args...)...)
}

func ip(args ...string) error {
	var stderr bytes.Buffer
	cmd := exec.Command("ip", args...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
}

// tag is 4 random hex digits: interface names hold at most 15 bytes.
func tag() string {
	var b [2]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
