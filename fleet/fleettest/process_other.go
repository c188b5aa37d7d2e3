//go:build !linux

package fleettest

import "syscall"

// sysProcAttr starts a member as any other process: outside Linux a member
// can outlive a test process that is killed.
func sysProcAttr() *syscall.SysProcAttr { return nil }
