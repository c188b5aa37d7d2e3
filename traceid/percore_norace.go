//go:build !race

package traceid

// advance returns r's next low value and moves it on: a plain increment,
// since only the goroutine pinned to r's processor touches it.
func (r *run) advance() uint64 {
	n := r.n
	r.n++
	return n
}
