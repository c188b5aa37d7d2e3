package fleettest_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/fleet/fleettest"
)

// A test outside idkit's repository makes its CA with the standard
// library alone, and StartWith takes it.
func TestStartWithACAOfTheStandardLibrary(t *testing.T) {
	t.Parallel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "a user's test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)

	c := fleettest.StartWith(t, fleettest.Options{CA: &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}})
	require.True(t, strings.HasPrefix(c.Endpoint(0), "https://"), c.Endpoint(0))
	cli := c.Client()
	p := fleettest.Prefix(t, cli)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = cli.Put(ctx, p+"k", "v")
	require.NoError(t, err, "the harness's client has a certificate of the CA")
	got, err := cli.Get(ctx, p+"k")
	require.NoError(t, err)
	require.Len(t, got.Kvs, 1)
}
