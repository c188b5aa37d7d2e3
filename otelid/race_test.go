//go:build race

package otelid

const raceEnabled = true
