package publicid

import "github.com/idkit/idkit/publicid/internal/ff1"

// perm is a keyed permutation of the IDs 1 to 2^n-1: FF1 with radix 2 and
// an empty tweak on strings of n bits, which permutes 0 to 2^n-1, with
// 0 walked past.
//
// 0 is not an ID, and FF1 maps exactly one ID x0 to it. encrypt walks on
// along x0's cycle (Black and Rogaway's cycle walking): x0 maps to the
// image of 0, FF1(0), which is not 0 because FF1(x0) is. Every other ID x
// maps to FF1(x). decrypt undoes it the same way, so the walk restricts FF1
// to exactly the IDs, and costs one more FF1 call for one ID of 2^n-1.
type perm struct {
	ff1 *ff1.Binary
}

func newPerm(secret []byte, bits int) (*perm, error) {
	f, err := ff1.NewBinary(secret, bits)
	if err != nil {
		return nil, err
	}
	return &perm{ff1: f}, nil
}

// encrypt returns the public number of the ID x, 1 <= x < 2^n.
func (p *perm) encrypt(x uint64) (uint64, error) {
	y, err := p.ff1.Encrypt(x)
	for err == nil && y == 0 {
		y, err = p.ff1.Encrypt(y)
	}
	return y, err
}

// decrypt returns the ID whose public number is y, 1 <= y < 2^n.
func (p *perm) decrypt(y uint64) (uint64, error) {
	x, err := p.ff1.Decrypt(y)
	for err == nil && x == 0 {
		x, err = p.ff1.Decrypt(x)
	}
	return x, err
}
