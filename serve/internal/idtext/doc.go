// Package idtext writes IDs as decimal and hexadecimal text without a
// division per digit: each writer carries its digits from one ID to the
// next. It imports nothing of serve.
package idtext
