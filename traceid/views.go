package traceid

import (
	"slices"
	"sync"
	"weak"
)

// views holds a generator's PerCores and Shards, weakly, so that Close can
// end the runs and chunks they issue from, which their fast paths read
// anyway, without a check of their own there and without keeping them
// alive.
type views struct {
	mu       sync.Mutex
	closed   bool
	perCores []weak.Pointer[PerCore]
	shards   []weak.Pointer[Shard]
}

// addPerCore adds p, or stops it at once if the generator is closed.
func (v *views) addPerCore(p *PerCore) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		p.stop()
		return
	}
	v.perCores = addWeak(v.perCores, p)
}

// addShard adds s, or stops it at once if the generator is closed.
func (v *views) addShard(s *Shard) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		s.stop()
		return
	}
	v.shards = addWeak(v.shards, s)
}

// close stops every PerCore and Shard, and those added later.
func (v *views) close() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.closed = true
	for _, w := range v.perCores {
		if p := w.Value(); p != nil {
			p.stop()
		}
	}
	for _, w := range v.shards {
		if s := w.Value(); s != nil {
			s.stop()
		}
	}
	v.perCores, v.shards = nil, nil
}

// addWeak appends a weak pointer to p to ps. When ps is full it first drops
// the pointers whose values are gone, so that ps grows with the values
// alive, not with every value ever added.
func addWeak[T any](ps []weak.Pointer[T], p *T) []weak.Pointer[T] {
	if len(ps) == cap(ps) {
		ps = slices.DeleteFunc(ps, func(w weak.Pointer[T]) bool { return w.Value() == nil })
	}
	return append(ps, weak.Make(p))
}
