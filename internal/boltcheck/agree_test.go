package boltcheck

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAgreesWithBbolt damages the seed files at random (see damage), as
// FuzzVerify does with coverage guidance, and holds the verdicts to bbolt's the same
// way, so that `go test` checks more than the seeds. The seed is logged;
// BOLTCHECK_SEED replays it.
func TestAgreesWithBbolt(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("BOLTCHECK_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
	}
	t.Logf("seed %d (replay with BOLTCHECK_SEED=%[1]d)", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	files := seedFiles(t)
	rounds := 1500
	if testing.Short() {
		rounds = 200
	}
	var accepted, structuralSafe int
	for round := range rounds {
		d := damage(r, files[r.IntN(len(files))].data)
		in := inspect(d)
		switch {
		case len(in.findings) == 0:
			accepted++
			require.NoError(t, boltVerdict(t, d), "round %d: boltcheck accepts the file, bbolt does not", round)
		case in.safe && in.first(structural) != nil:
			structuralSafe++
			require.Error(t, boltVerdict(t, d), "round %d: boltcheck rejects the file as bbolt would, but bbolt accepts it:%v", round, in)
		}
	}
	t.Logf("%d rounds: %d accepted, %d rejected as bbolt would", rounds, accepted, structuralSafe)
}

// damage returns a copy of data, a file bbolt wrote, with one to four
// pieces of damage of the kinds that a byte flip rarely makes: a page
// header's id, flags, count or overflow set to a telling value, one page
// copied over another, a meta page's root, freelist or high water mark
// moved with its checksum kept, the file cut short by a page or two, or
// any byte changed.
func damage(r *rand.Rand, data []byte) []byte {
	d := bytes.Clone(data)
	ps := int(binary.NativeEndian.Uint32(d[24:]))
	pages := len(d) / ps
	for range 1 + r.IntN(4) {
		switch r.IntN(6) {
		case 0: // a header field
			p := r.IntN(pages) * ps
			v := []uint64{0, 1, 2, 3, 0xffff, uint64(r.IntN(64)), r.Uint64()}[r.IntN(7)]
			switch r.IntN(4) {
			case 0:
				binary.NativeEndian.PutUint64(d[p:], v)
			case 1:
				binary.NativeEndian.PutUint16(d[p+8:], uint16(v))
			case 2:
				binary.NativeEndian.PutUint16(d[p+10:], uint16(v))
			case 3:
				binary.NativeEndian.PutUint32(d[p+12:], uint32(v%4))
			}
		case 1: // a page over another, the meta pages left alone
			if a, b := 2+r.IntN(pages), 2+r.IntN(pages); a < pages && b < pages {
				copy(d[a*ps:(a+1)*ps], d[b*ps:(b+1)*ps])
			}
		case 2: // a meta field, its checksum kept
			field := []uint64{metaRoot, metaFreelist, metaHWM}[r.IntN(3)]
			setMeta(d, uint64(ps*r.IntN(2)), field, uint64(r.IntN(pages+2)))
		case 3: // an element's position or size
			binary.NativeEndian.PutUint32(d[r.IntN(len(d)-4):], uint32(r.IntN(4*ps)))
		case 4: // cut short
			if pages > 3 && r.IntN(3) == 0 {
				cut := 1 + r.IntN(2)
				d, pages = d[:(pages-cut)*ps], pages-cut
			}
		default:
			d[r.IntN(len(d))] = byte(r.Uint32())
		}
	}
	return d
}
