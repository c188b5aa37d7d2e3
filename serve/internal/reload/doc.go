// Package reload watches the files serve reloads (tokens, client lists,
// certificates): it notices a change by its stamp (size, time, inode and
// a hash of small files), keeps the last valid contents when a new one is
// not valid, and reports both as metrics. It imports nothing of serve.
package reload
