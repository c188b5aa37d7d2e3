//go:build !race

package traceid

const raceEnabled = false
