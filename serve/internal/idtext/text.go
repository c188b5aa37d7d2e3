package idtext

import (
	"encoding/hex"
	"strconv"
)

// digits writes a run of increasing integers in decimal. It keeps the text
// of the last one, so that the next, when it is the last plus a power of
// ten (1 for traceid and snowflake within a second or tick, 10^10 for
// decimalid), costs a copy and a carry instead of a conversion.
type Digits struct {
	v    int64
	Text [20]byte
	N    int   // length of text; 0 before the first value
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
func (w *Digits) exponent(d int64) int {
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
func (w *Digits) Next(v int64) {
	if w.N > 0 && v > w.v {
		if k := w.exponent(v - w.v); k >= 0 && k < w.N {
			for i := w.N - 1 - k; i >= 0; i-- {
				if w.Text[i] < '9' {
					w.Text[i]++
					w.v = v
					return
				}
				w.Text[i] = '0'
			}
			// The carry ran off the front: one digit more.
		}
	}
	w.v = v
	w.N = len(strconv.AppendInt(w.Text[:0], v, 10))
}

// appendDigits appends w's text as one ID: quoted and followed by a comma
// for JSON, followed by a newline for text. dst must have room for
// len(w.text)+3 more bytes, beyond the ID's own: it copies whole arrays, which
// compile to a few moves instead of a call to memmove.
func AppendDigits(dst []byte, w *Digits, asText bool) []byte {
	i := len(dst)
	d := dst[i : i+len(w.Text)+3]
	if asText {
		*(*[len(w.Text)]byte)(d) = w.Text
		d[w.N] = '\n'
		return dst[:i+w.N+1]
	}
	d[0] = '"'
	*(*[len(w.Text)]byte)(d[1:]) = w.Text
	d[w.N+1] = '"'
	d[w.N+2] = ','
	return dst[:i+w.N+3]
}

// appendHex appends h's text as appendDigits does.
func AppendHex(dst []byte, h *OIDHex, asText bool) []byte {
	i := len(dst)
	d := dst[i : i+len(h.Text)+3]
	if asText {
		*(*[len(h.Text)]byte)(d) = h.Text
		d[len(h.Text)] = '\n'
		return dst[:i+len(h.Text)+1]
	}
	d[0] = '"'
	*(*[len(h.Text)]byte)(d[1:]) = h.Text
	d[len(h.Text)+1] = '"'
	d[len(h.Text)+2] = ','
	return dst[:i+len(h.Text)+3]
}

// oidHex writes ObjectIDs in hex. IDs of one run share their first 9
// bytes (time and process), whose text it keeps.
type OIDHex struct {
	prefix [9]byte
	Text   [24]byte
	valid  bool
}

// next sets the text to id's.
func (h *OIDHex) Next(id *[12]byte) {
	if !h.valid || [9]byte(id[:9]) != h.prefix {
		h.prefix = [9]byte(id[:9])
		hex.Encode(h.Text[:18], id[:9])
		h.valid = true
	}
	const digits = "0123456789abcdef"
	for i, b := range id[9:] {
		h.Text[18+2*i] = digits[b>>4]
		h.Text[19+2*i] = digits[b&15]
	}
}
