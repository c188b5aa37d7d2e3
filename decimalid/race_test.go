//go:build race

package decimalid

const raceEnabled = true
