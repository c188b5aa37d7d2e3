// Package tlslog turns the TLS handshake errors net/http logs into one
// warning a minute, with their count, and a metric. It imports nothing of
// serve.
package tlslog
