//go:build unix && !linux

package safefile

import "os"

// openNoLinks opens path, which holds no symbolic link, without following
// one in its last part. The file's name is name, for messages.
func openNoLinks(path, name string, flag int, perm os.FileMode) (*os.File, error) {
	return openNoFollow(path, name, flag, perm)
}
