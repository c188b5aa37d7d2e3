//go:build !unix

package safefile

import "os"

// Check accepts every file: this system has no Unix owners and modes.
func Check(*os.File) error { return nil }

// resolve returns name: this system's links are not checked.
func resolve(name string) (string, error) { return name, nil }

func openNoLinks(path, name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag, perm)
}
