//go:build !linux

package launchlog

import "os"

// placeOf is not known outside Linux: a copy of a log is not told from
// the log there.
func placeOf(*os.File) (place, bool) { return place{}, false }

// readStamp finds no stamp outside Linux.
func readStamp(*os.File) (stamp, bool) { return stamp{}, false }

// writeStamp keeps no stamp outside Linux.
func writeStamp(*os.File, stamp) error { return errNoStamp }
