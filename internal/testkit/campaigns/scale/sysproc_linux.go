package main

import "syscall"

// childAttr ties a child process's life to the harness's: it is killed
// when the harness dies, however it dies. Its own process group keeps a
// terminal's Ctrl-C from reaching it before the harness can stop it in
// order.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
