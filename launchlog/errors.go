package launchlog

import (
	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"
)

var (
	// ErrLaunchesExhausted reports that the log already holds launch 99999,
	// the last launch id.
	ErrLaunchesExhausted = errkind.New(idkit.ErrExhausted, "launchlog: launch ids exhausted (1..=99999 all used)")
	// ErrGeneratorsExhausted reports that a launch has handed out generator
	// id 99999, the last one.
	ErrGeneratorsExhausted = errkind.New(idkit.ErrExhausted, "launchlog: generator ids exhausted for the launch (0..=99999 all used)")
	// ErrNoLaunch reports a launch that is not in the log.
	ErrNoLaunch = errkind.New(idkit.ErrInvalid, "launchlog: no such launch")
	// ErrInvalid reports an argument or option outside its allowed range.
	ErrInvalid = errkind.New(idkit.ErrInvalid, "launchlog: invalid")
	// ErrLocked reports that another process held the file past the lock
	// timeout. Errors with it also wrap bbolt's ErrTimeout.
	ErrLocked = errkind.New(idkit.ErrUnavailable, "launchlog: file locked by another process")
	// ErrCorrupt reports a file that is not a valid launch log: not a bbolt
	// file, damaged, or holding records this package did not write.
	ErrCorrupt = errkind.New(idkit.ErrCorrupt, "launchlog: corrupt file")
	// ErrHeld reports a key that another live holder holds (Log.Hold);
	// the error is a *HeldError that names it.
	ErrHeld = errkind.New(idkit.ErrHeld, "launchlog: key held by another process")
	// ErrNodeLost reports a hold that another holder has taken over past
	// the OS locks, or whose file was replaced under it: its writes fail,
	// and its generator issues no more than the marks it wrote.
	ErrNodeLost = errkind.New(idkit.ErrNodeLost, "launchlog: hold lost")
	// ErrDisplaced reports a log file that the log was not last written
	// through (a copy, a restore, a move to another file system), or whose
	// contents were written back from an older copy: the error is a
	// *DisplacedError, and every write is refused until Log.Adopt.
	ErrDisplaced = errkind.New(idkit.ErrRefused, "launchlog: log displaced")
	// ErrNetworkFS reports a log on a network file system, where a hold
	// could not keep other hosts out (Log.Hold).
	ErrNetworkFS = errkind.New(idkit.ErrInvalid, "launchlog: on a network file system")
	// ErrOpen reports a file that cannot be opened: its directory is missing
	// or the path is not writable. Errors with it also wrap the os error,
	// such as fs.ErrNotExist or fs.ErrPermission.
	ErrOpen = errkind.New(idkit.ErrUnavailable, "launchlog: cannot open file")
	// ErrWrite reports a change that the disk did not make durable: a write
	// or an fsync failed, for example with ENOSPC (the disk is full) or EIO.
	// The change handed nothing out, and the next operation opens the file
	// again and reads its last durable state. Errors with it also wrap the
	// os error.
	ErrWrite = errkind.New(idkit.ErrUnavailable, "launchlog: cannot write file")
)
