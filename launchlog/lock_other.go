//go:build !unix

package launchlog

import (
	"os"
	"time"
)

// earlyLock says that run locks and verifies the file before bbolt reads
// it; here bbolt locks it, and run verifies it after bbolt opened it.
const earlyLock = false

func lockFile(*os.File, bool, time.Time) error { return nil }

// unlock does nothing: bbolt's lock here goes with the file handle.
func unlock(*os.File) {}
