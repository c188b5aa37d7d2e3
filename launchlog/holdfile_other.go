//go:build !unix && !windows

package launchlog

import (
	"errors"
	"os"
)

// lockHold fails: this system offers no lock that dies with its process.
func lockHold(*os.File) (bool, error) {
	return false, errors.New("holds need a Unix or Windows file lock, which this system lacks")
}

func unlockHold(*os.File) error { return nil }
