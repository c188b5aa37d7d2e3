//go:build !unix

package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
)

func exeSuffix() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}

// execFull runs idkit-full as a child with this process's streams and
// returns its exit status. Interrupts reach it from the console; this
// process ignores them meanwhile and waits for it.
func execFull(path string, args []string, stderr io.Writer) int {
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	signal.Ignore(os.Interrupt)
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		fmt.Fprintf(stderr, "idkit %s: run %s: %v\n", args[0], path, err)
		return 1
	}
	return 0
}
