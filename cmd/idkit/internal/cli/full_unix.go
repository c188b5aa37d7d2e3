//go:build unix

package cli

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

func exeSuffix() string { return "" }

// execFull replaces this process with idkit-full: it keeps the pid, the
// terminal and the signals, and its exit status is the command's.
func execFull(path string, args []string, stderr io.Writer) int {
	err := syscall.Exec(path, append([]string{path}, args...), os.Environ())
	fmt.Fprintf(stderr, "idkit %s: run %s: %v\n", args[0], path, err)
	return 1
}
