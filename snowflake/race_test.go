//go:build race

package snowflake

const raceEnabled = true
