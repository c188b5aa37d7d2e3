package intid

// FillStep fills out with id, id+step, id+2*step, ...: the IDs of one run
// of a Fill, whose IDs differ by a fixed step. It writes four a pass, which
// keeps the loop's cost per ID low wherever the compiler places it.
func FillStep[T ~int64](out []T, id, step T) {
	for len(out) >= 4 {
		out[0], out[1], out[2], out[3] = id, id+step, id+2*step, id+3*step
		id += 4 * step
		out = out[4:]
	}
	for i := range out {
		out[i] = id
		id += step
	}
}
