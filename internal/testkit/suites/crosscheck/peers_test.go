package crosscheck

import (
	"testing"

	bwsnowflake "github.com/bwmarrin/snowflake"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	"github.com/rs/xid"
	"github.com/segmentio/ksuid"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// peers lists, by benchmark name, functions that make one new ID of a peer
// library and discard it. sony/sonyflake is left out: it issues at
// most 25,600 IDs a second by design, so it measures its sleep, not its
// cost (idkit compare reports it).
func peers(b *testing.B) []peer {
	node, err := bwsnowflake.NewNode(1)
	if err != nil {
		b.Fatal(err)
	}
	return []peer{
		{"uuid-v4", func() { _ = uuid.New() }},
		{"uuid-v7", func() { _ = uuid.Must(uuid.NewV7()) }},
		{"ulid-monotonic", func() { _ = ulid.Make() }},
		{"xid", func() { _ = xid.New() }},
		{"ksuid", func() { _ = ksuid.New() }},
		{"bwmarrin-snowflake", func() { _ = node.Generate() }},
		{"mongo-objectid", func() { _ = bson.NewObjectID() }},
	}
}

type peer struct {
	name string
	next func()
}

func BenchmarkPeerNext(b *testing.B) {
	for _, p := range peers(b) {
		b.Run(p.name+"/serial", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p.next()
			}
		})
		b.Run(p.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					p.next()
				}
			})
		})
	}
}
