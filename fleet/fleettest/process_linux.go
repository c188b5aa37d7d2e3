package fleettest

import "syscall"

// sysProcAttr makes a member die with the test process: a test binary
// killed at its deadline leaves no etcd behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
