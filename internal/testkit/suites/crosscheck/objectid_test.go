package crosscheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/objectid"
)

// Our IDs and the MongoDB Go driver's bson.ObjectID are the same 12 bytes
// with the same hex text, timestamp and JSON, both ways.
func TestDriverInterop(t *testing.T) {
	t.Parallel()
	g, err := objectid.New(objectid.Options{Clock: clock.NewFake(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))})
	require.NoError(t, err)
	a, errA := g.Next()
	b, errB := g.Next()
	require.NoError(t, errors.Join(errA, errB))
	ours := []objectid.ID{a, b, objectid.NewID(), objectid.MustParse("507f1f77bcf86cd799439011")}
	theirs := []bson.ObjectID{bson.NewObjectID(), bson.NewObjectIDFromTimestamp(time.Unix(1<<32-1, 0))}

	for _, id := range ours {
		oid := bson.ObjectID(id)
		assert.Equal(t, id.String(), oid.Hex())
		assert.Equal(t, id.Timestamp(), oid.Timestamp())
		fromHex, err := bson.ObjectIDFromHex(id.String())
		require.NoError(t, err)
		assert.Equal(t, oid, fromHex)

		b, err := json.Marshal(id)
		require.NoError(t, err)
		var viaDriver bson.ObjectID
		require.NoError(t, json.Unmarshal(b, &viaDriver))
		assert.Equal(t, oid, viaDriver)
	}
	for _, oid := range theirs {
		id := objectid.ID(oid)
		parsed, err := objectid.Parse(oid.Hex())
		require.NoError(t, err)
		assert.Equal(t, id, parsed)
		assert.Equal(t, oid.Timestamp(), id.Timestamp())

		b, err := json.Marshal(oid)
		require.NoError(t, err)
		var viaOurs objectid.ID
		require.NoError(t, json.Unmarshal(b, &viaOurs))
		assert.Equal(t, id, viaOurs)

		back, err := objectid.FromBytes(oid[:])
		require.NoError(t, err)
		assert.Equal(t, id, back)
	}
	assert.Equal(t, time.Date(2106, 2, 7, 6, 28, 15, 0, time.UTC), objectid.ID(theirs[1]).Timestamp(), "timestamps read as unsigned")
}

// In a BSON document the ID is the 12 bytes of an ObjectId element (type
// 0x07), and it comes back out the same; Extended JSON's {"$oid": ...}
// decodes too.
func TestBSONDocument(t *testing.T) {
	t.Parallel()
	id := objectid.NewID()
	raw, err := bson.Marshal(bson.D{{Key: "_id", Value: bson.ObjectID(id)}})
	require.NoError(t, err)
	assert.True(t, bytes.Contains(raw, append([]byte{0x07, '_', 'i', 'd', 0}, id[:]...)), "element 0x07 \"_id\" then the 12 bytes")
	var doc struct {
		ID bson.ObjectID `bson:"_id"`
	}
	require.NoError(t, bson.Unmarshal(raw, &doc))
	assert.Equal(t, id, objectid.ID(doc.ID))

	ext, err := bson.MarshalExtJSON(bson.D{{Key: "_id", Value: bson.ObjectID(id)}}, true, false)
	require.NoError(t, err)
	var back struct {
		ID objectid.ID `json:"_id"`
	}
	require.NoError(t, json.Unmarshal(ext, &back), "%s", ext)
	assert.Equal(t, id, back.ID)
}

// The driver's own IDs follow the layout we read: one process value per
// process, and a counter that counts up by one.
func TestDriverLayout(t *testing.T) {
	t.Parallel()
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	a := objectid.ID(bson.NewObjectIDFromTimestamp(at))
	b := objectid.ID(bson.NewObjectIDFromTimestamp(at))
	assert.Equal(t, at, a.Timestamp())
	assert.Equal(t, a.Process(), b.Process())
	assert.LessOrEqual(t, (b.Counter()-a.Counter())&objectid.MaxCounter, uint32(100), "counters step up (other tests may draw in between)")
	assert.NotEqual(t, a.Counter(), b.Counter())
}
