//go:build !linux

package launchlog

import "os"

// useLog registers nothing outside Linux: a copy of a log in use is not
// found there.
func (l *Log) useLog([]byte, *os.File) error { return nil }
