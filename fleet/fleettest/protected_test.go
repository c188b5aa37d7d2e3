package fleettest

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/idkit/idkit/internal/testkit/testcert"
)

// A member of Options.CA serves https only and takes a client only with
// a certificate its CA signed.
func TestStartWithClientTLS(t *testing.T) {
	t.Parallel()
	ca := testcert.NewCA(t)
	c := StartWith(t, Options{CA: ca.TLS()})
	require.True(t, strings.HasPrefix(c.Endpoint(0), "https://"), c.Endpoint(0))

	cli := c.Client()
	p := Prefix(t, cli)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := cli.Put(ctx, p+"k", "v")
	require.NoError(t, err, "the harness's own client has a certificate")

	dir := t.TempDir()
	cert, key := ca.Issue(t, dir, "someone", 2, false)
	pair, err := tls.LoadX509KeyPair(cert, key)
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		certs []tls.Certificate
		ok    bool
	}{
		{"with a certificate of the CA", []tls.Certificate{pair}, true},
		{"without a client certificate", nil, false},
	} {
		cli, err := clientv3.New(clientv3.Config{
			Endpoints: c.Endpoints(), Logger: zap.NewNop(),
			TLS: &tls.Config{RootCAs: ca.Pool(), Certificates: tc.certs},
		})
		require.NoError(t, err)
		short, cancelShort := context.WithTimeout(ctx, 2*time.Second)
		_, err = cli.Get(short, p+"k")
		cancelShort()
		cli.Close()
		if tc.ok {
			assert.NoError(t, err, tc.name)
		} else {
			assert.Error(t, err, tc.name)
		}
	}
}

// A cluster of Options.Users lets each user read and write under KeyRoot
// with the user's password, and nobody without one.
func TestStartWithUsers(t *testing.T) {
	t.Parallel()
	c := StartWith(t, Options{Users: map[string]string{"app": "s3cret"}})
	p := Prefix(t, c.Client())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	app, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), Logger: zap.NewNop(),
		DialTimeout: 5 * time.Second, Username: "app", Password: "s3cret"})
	require.NoError(t, err)
	defer app.Close()
	_, err = app.Put(ctx, p+"k", "v")
	require.NoError(t, err)
	_, err = app.Put(ctx, "elsewhere", "v")
	assert.ErrorIs(t, err, rpctypes.ErrPermissionDenied, "the role covers KeyRoot only")

	_, err = clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), Logger: zap.NewNop(),
		DialTimeout: 5 * time.Second, Username: "app", Password: "wrong"})
	assert.ErrorIs(t, err, rpctypes.ErrAuthFailed)

	anon := NewClient(t, c.Endpoints()...)
	_, err = anon.Get(ctx, p+"k")
	assert.Error(t, err, "a client without a user is refused")
}
