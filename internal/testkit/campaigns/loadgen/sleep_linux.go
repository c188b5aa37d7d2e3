package loadgen

import (
	"time"

	"golang.org/x/sys/unix"
)

// sleep pauses the calling goroutine's thread for d. On Linux the
// runtime's poller waits in whole milliseconds, so time.Sleep of less than
// a millisecond lasts about a millisecond when the process is otherwise
// idle; a paced request would then leave up to 1 ms late, and that delay
// would count as the server's latency. nanosleep blocks only this thread
// (the runtime hands its P to others) and wakes within about 0.1 ms.
func sleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}
