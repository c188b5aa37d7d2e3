package launchlog

// NewWithoutOSLocks is New for a Log whose holds take no OS lock, so that
// a second holder of a key takes it from the first: only the log's
// fencing then keeps them from issuing the same IDs.
func NewWithoutOSLocks(o Options) (*Log, error) {
	l, err := New(o)
	if err == nil {
		l.noOSLocks = true
	}
	return l, err
}
