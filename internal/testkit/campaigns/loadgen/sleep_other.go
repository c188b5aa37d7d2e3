//go:build !linux

package loadgen

import "time"

// sleep pauses for d.
func sleep(d time.Duration) { time.Sleep(d) }
