package engine

import "encoding/binary"

// KeySet is a set of fixed-length keys in generation order, stored flat.
type KeySet struct {
	Len  int    // bytes per key
	Data []byte // key i is Data[i*Len : (i+1)*Len]
}

// N returns the number of keys.
func (k KeySet) N() int {
	if k.Len == 0 {
		return 0
	}
	return len(k.Data) / k.Len
}

// At returns key i.
func (k KeySet) At(i int) []byte { return k.Data[i*k.Len : (i+1)*k.Len : (i+1)*k.Len] }

// Uint64Keys returns the key set of vs, each an 8-byte big-endian key, in
// the order given.
func Uint64Keys(vs ...uint64) KeySet {
	k := KeySet{Len: 8}
	for _, v := range vs {
		k.Data = binary.BigEndian.AppendUint64(k.Data, v)
	}
	return k
}
