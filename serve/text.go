package serve

import (
	"encoding/hex"
	"slices"
	"strconv"
)

// digits writes a run of increasing integers in decimal. It keeps the text
// of the last one, so that the next, when it is the last plus a power of
// ten (1 for traceid and snowflake within a second or tick, 10^10 for
// decimalid), costs a copy and a carry instead of a conversion.
type digits struct {
	v    int64
	text [20]byte
	n    int   // length of text; 0 before the first value
	step int64 // the last power of ten seen between two values
	pos  int   // its exponent
}

// pow10 are the powers of ten that fit an int64.
var pow10 = func() (p [19]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// exponent returns k if d is 10^k, or -1.
func (w *digits) exponent(d int64) int {
	switch d {
	case 1:
		return 0
	case w.step:
		return w.pos
	}
	for k, p := range pow10 {
		if p == d {
			w.step, w.pos = d, k
			return k
		}
	}
	return -1
}

// next sets the text to v's (v >= 0).
func (w *digits) next(v int64) {
	if w.n > 0 && v > w.v {
		if k := w.exponent(v - w.v); k >= 0 && k < w.n {
			for i := w.n - 1 - k; i >= 0; i-- {
				if w.text[i] < '9' {
					w.text[i]++
					w.v = v
					return
				}
				w.text[i] = '0'
			}
			// The carry ran off the front: one digit more.
		}
	}
	w.v = v
	w.n = len(strconv.AppendInt(w.text[:0], v, 10))
}

// appendDigits appends w's text as one ID: quoted and followed by a comma
// for JSON, followed by a newline for text. dst must have room for
// len(w.text)+3 more bytes, beyond the ID's own: it copies whole arrays, which
// compile to a few moves instead of a call to memmove.
func appendDigits(dst []byte, w *digits, asText bool) []byte {
	i := len(dst)
	d := dst[i : i+len(w.text)+3]
	if asText {
		*(*[len(w.text)]byte)(d) = w.text
		d[w.n] = '\n'
		return dst[:i+w.n+1]
	}
	d[0] = '"'
	*(*[len(w.text)]byte)(d[1:]) = w.text
	d[w.n+1] = '"'
	d[w.n+2] = ','
	return dst[:i+w.n+3]
}

// appendHex appends h's text as appendDigits does.
func appendHex(dst []byte, h *oidHex, asText bool) []byte {
	i := len(dst)
	d := dst[i : i+len(h.text)+3]
	if asText {
		*(*[len(h.text)]byte)(d) = h.text
		d[len(h.text)] = '\n'
		return dst[:i+len(h.text)+1]
	}
	d[0] = '"'
	*(*[len(h.text)]byte)(d[1:]) = h.text
	d[len(h.text)+1] = '"'
	d[len(h.text)+2] = ','
	return dst[:i+len(h.text)+3]
}

// grow returns dst with room for n more bytes.
func grow(dst []byte, n int) []byte { return slices.Grow(dst, n) }

// oidHex writes ObjectIDs in hex. IDs of one run share their first 9
// bytes (time and process), whose text it keeps.
type oidHex struct {
	prefix [9]byte
	text   [24]byte
	valid  bool
}

// next sets the text to id's.
func (h *oidHex) next(id *[12]byte) {
	if !h.valid || [9]byte(id[:9]) != h.prefix {
		h.prefix = [9]byte(id[:9])
		hex.Encode(h.text[:18], id[:9])
		h.valid = true
	}
	const digits = "0123456789abcdef"
	for i, b := range id[9:] {
		h.text[18+2*i] = digits[b>>4]
		h.text[19+2*i] = digits[b&15]
	}
}
