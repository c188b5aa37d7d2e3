//go:build !race

package decimalid

const raceEnabled = false
