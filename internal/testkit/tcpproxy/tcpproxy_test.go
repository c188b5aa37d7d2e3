package tcpproxy

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/internal/testkit/testwait"
)

// echo starts a server that answers each line with itself, until the
// test ends.
func echo(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

// roundTrip sends a line through c and returns the answer, or the error
// of a connection the proxy cut.
func roundTrip(c net.Conn, line string) (string, error) {
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return "", err
	}
	return bufio.NewReader(c).ReadString('\n')
}

// TestCutPauseResume: a cut proxy closes its connections and refuses new
// ones until Restore; a paused one holds a line until Resume delivers it.
func TestCutPauseResume(t *testing.T) {
	t.Parallel()
	p := New(t, "tcp://"+echo(t))
	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c.Close()
	got, err := roundTrip(c, "one")
	require.NoError(t, err)
	assert.Equal(t, "one\n", got)

	p.Cut()
	_, err = roundTrip(c, "two")
	assert.Error(t, err, "a cut connection")
	refused, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err, "the listener still accepts")
	_, err = roundTrip(refused, "three")
	assert.Error(t, err, "a new connection while cut is closed at once")
	refused.Close()

	p.Restore()
	c2, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c2.Close()
	got, err = roundTrip(c2, "four")
	require.NoError(t, err)
	assert.Equal(t, "four\n", got)

	p.Pause()
	answer := make(chan string, 1)
	go func() {
		s, _ := roundTrip(c2, "late")
		answer <- s
	}()
	select {
	case s := <-answer:
		t.Fatalf("a paused proxy passed %q", s)
	case <-time.After(100 * time.Millisecond): // what a pause holds shows only as nothing arriving
	}
	p.Resume()
	assert.Equal(t, "late\n", testwait.Recv(t, answer, "the line held by the pause"))
}
