//go:build !race

package traceid

// advance returns r's next low value and moves it on: a plain increment,
// since only the goroutine pinned to r's processor touches it.
func (r *run) advance() uint64 {
	n := r.n
	r.n++
	return n
}

// put makes r the slot's run, written over the run the slot had, which
// only goroutines pinned to the slot's processor touch, one at a time: so
// that taking runs allocates nothing.
func (s *coreSlot) put(r run) {
	if cur := s.run.Load(); cur != nil {
		*cur = r
		return
	}
	cur := new(run)
	*cur = r
	s.run.Store(cur)
}
