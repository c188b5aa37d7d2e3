package traceid

import "fmt"

// Parts are the fields of a TraceId.
type Parts struct {
	Second  int // Unix seconds modulo 2^25: 0 to 33554431
	Node    int // 0 to 65535
	Thread  int // 0 to 2^T-1
	Counter int // 1 to 2^(22-T)-1
}

// Compose builds the ID with parts p for T = threadBits thread bits. Each
// field out of its range is an error that names it and the range.
func Compose(p Parts, threadBits int) (ID, error) {
	if err := checkThreadBits("threadBits", threadBits); err != nil {
		return 0, err
	}
	counterBits := LowBits - threadBits
	for _, f := range []struct {
		name   string
		v, min int
		max    int
	}{
		{"Second", p.Second, 0, secondMask},
		{"Node", p.Node, 0, MaxNode},
		{"Thread", p.Thread, 0, 1<<threadBits - 1},
		{"Counter", p.Counter, 1, 1<<counterBits - 1},
	} {
		if f.v < f.min || f.v > f.max {
			return 0, fmt.Errorf("%w: %s = %d, want %d to %d (with %d thread bits)", ErrInvalid, f.name, f.v, f.min, f.max, threadBits)
		}
	}
	return ID(p.Second)<<secondShift | ID(p.Node)<<LowBits | ID(p.Thread)<<counterBits | ID(p.Counter), nil
}

// Decode splits id into its parts for T = threadBits thread bits. It fails
// for an ID outside 1 to 2^63-1 and for one whose counter is 0, which no
// generator with that T issues.
func Decode(id ID, threadBits int) (Parts, error) {
	if err := checkThreadBits("threadBits", threadBits); err != nil {
		return Parts{}, err
	}
	if id <= 0 {
		return Parts{}, fmt.Errorf("%w: %d, want 1 to 9223372036854775807", ErrRange, int64(id))
	}
	counterBits := LowBits - threadBits
	p := Parts{
		Second:  id.Second(),
		Node:    id.Node(),
		Thread:  id.Thread(threadBits),
		Counter: id.Counter(threadBits),
	}
	if p.Counter == 0 {
		return Parts{}, fmt.Errorf("%w: %d: counter is 0, want 1 to %d (with %d thread bits)", ErrRange, int64(id), 1<<counterBits-1, threadBits)
	}
	return p, nil
}

func checkThreadBits(name string, t int) error {
	if t < 0 || t > MaxThreadBits {
		return fmt.Errorf("%w: %s = %d, want 0 to %d", ErrInvalid, name, t, MaxThreadBits)
	}
	return nil
}
