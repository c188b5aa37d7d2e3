// Package testcert makes certificate authorities and certificates for
// tests of TLS: a server's, with mutual TLS, against an etcd that requires
// client certificates. Everything it makes is valid for an hour around
// now, on ECDSA P-256 keys.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// CA is a certificate authority made for one test.
type CA struct {
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// PEM is the CA's certificate in PEM.
	PEM []byte
}

// NewCA returns a new CA.
func NewCA(t testing.TB) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "idkit test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return &CA{cert, key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// TLS returns the CA's certificate and key as a tls.Certificate, the form
// in which fleettest.Options takes a CA.
func (ca *CA) TLS() *tls.Certificate {
	return &tls.Certificate{Certificate: [][]byte{ca.Cert.Raw}, PrivateKey: ca.key, Leaf: ca.Cert}
}

// Pool returns a pool holding the CA's certificate.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// WriteCA writes the CA's certificate to dir/name.pem and returns the path.
func (ca *CA) WriteCA(t testing.TB, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name+".pem")
	WriteFile(t, path, ca.PEM)
	return path
}

// Issue writes a certificate for name (its common name), with serial,
// signed by the CA, and its key, to dir/name.crt and dir/name.key, and
// returns their paths. A server certificate is for 127.0.0.1 and
// localhost; a client certificate is for client authentication.
func (ca *CA) Issue(t testing.TB, dir, name string, serial int64, server bool) (certFile, keyFile string) {
	t.Helper()
	var hosts []string
	if server {
		hosts = []string{"127.0.0.1", "localhost"}
	}
	certPEM, keyPEM, err := ca.Sign(name, serial, server, hosts...)
	require.NoError(t, err)
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	WriteFile(t, certFile, certPEM)
	WriteFile(t, keyFile, keyPEM)
	return certFile, keyFile
}

// Sign returns a certificate for name (its common name) with serial,
// signed by the CA, and its key, both in PEM. A server certificate is for
// hosts (IP addresses and DNS names) and serves for client authentication
// too, as an etcd member's certificate does towards its peers; a client
// certificate is for client authentication only. It is for harnesses
// that issue certificates outside a test's goroutine.
func (ca *CA) Sign(name string, serial int64, server bool, hosts ...string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
		for _, h := range hosts {
			if ip := net.ParseIP(h); ip != nil {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			} else {
				tmpl.DNSNames = append(tmpl.DNSNames, h)
			}
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), nil
}

// WriteFile replaces path's contents at once (a write to a temporary file,
// then a rename), as a deployment tool does, with mode 0600.
func WriteFile(t testing.TB, path string, b []byte) {
	t.Helper()
	tmp := path + ".tmp"
	require.NoError(t, os.WriteFile(tmp, b, 0o600))
	require.NoError(t, os.Rename(tmp, path))
}
