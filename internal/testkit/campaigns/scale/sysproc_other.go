//go:build !linux

package main

import "syscall"

// childAttr is nil off Linux, where the harness refuses to run.
func childAttr() *syscall.SysProcAttr { return nil }
