package launchlog

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"

	"github.com/idkit/idkit/internal/boltcheck"
	idstore "github.com/idkit/idkit/store"
)

// TestVerifyBigLog checks that the structure check (package boltcheck,
// whose own tests hold it to bbolt's format) accepts what bbolt
// writes for a big log: branch pages, overflow pages (long notes), a busy
// freelist, many counters and marks.
func TestVerifyBigLog(t *testing.T) {
	t.Parallel()
	l := newLog(t)
	for i := range 60 {
		_, err := l.Begin(context.Background(), idstore.Info{Ticket: fmt.Sprint("REL-", i), Note: strings.Repeat("n", i*300)})
		require.NoError(t, err)
		_, err = l.NextGenerator(context.Background(), i%7)
		require.NoError(t, err)
		_, err = l.AdvanceHighWater(context.Background(), fmt.Sprint("key-", i%5), epoch)
		require.NoError(t, err)
	}
	// Many more records in one transaction each, as Begin, NextGenerator
	// and AdvanceHighWater would store them.
	const bulk = 5000
	require.NoError(t, l.update(func(tx *bbolt.Tx) error {
		launches, err := createBucket(tx, launchesBucket)
		if err != nil {
			return err
		}
		gens, err := createBucket(tx, generatorsBucket)
		if err != nil {
			return err
		}
		marks, err := createBucket(tx, highWaterBucket)
		if err != nil {
			return err
		}
		first := int(launches.Sequence()) + 1
		for id := first; id < first+bulk; id++ {
			v, err := json.Marshal(idstore.Launch{ID: id, StartedAt: epoch, Note: strings.Repeat("x", id%500)})
			if err != nil {
				return err
			}
			if err := launches.Put(idKey(id), v); err != nil {
				return err
			}
			if err := putSealed(gens, idKey(id), []byte{0, 0, 0, 1}); err != nil {
				return err
			}
			if err := putSealed(marks, []byte(fmt.Sprint("mark-", id)), make([]byte, 8)); err != nil {
				return err
			}
		}
		return launches.SetSequence(uint64(first + bulk - 1))
	}))

	data, err := os.ReadFile(l.path)
	require.NoError(t, err)
	require.NoError(t, boltcheck.Bytes(data))
	requireBoltCheck(t, l.path)
	t.Logf("%d bytes", len(data))

	for _, op := range ops(l) {
		assert.NoError(t, op.call(), op.name)
	}
	list, err := l.List(context.Background())
	require.NoError(t, err)
	assert.Len(t, list, 60+bulk+1) // and the one Begin of ops
	got, err := l.NextGenerator(context.Background(), 60+bulk)
	require.NoError(t, err)
	assert.Equal(t, 1, got)
}
