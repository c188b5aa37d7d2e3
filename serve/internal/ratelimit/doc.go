// Package ratelimit holds the token buckets of serve's clients (IDs and
// requests a second) and each scheme's node-wide ceiling, shared among
// the clients by max-min fairness. It imports nothing of serve.
package ratelimit
