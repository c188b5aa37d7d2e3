package boltcheck

import (
	"bytes"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAgreesWithBbolt damages the seed files at random, as FuzzVerify
// does with coverage guidance, and holds the verdicts to bbolt's the same
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
		d := bytes.Clone(files[r.IntN(len(files))].data)
		for range 1 + r.IntN(6) {
			d[r.IntN(len(d))] = byte(r.Uint32())
		}
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
