package launchlog

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"go.etcd.io/bbolt"
)

// Limits of the ids the log hands out.
const (
	MaxLaunch    = 99_999 // the last launch id; the first is 1
	MaxGenerator = 99_999 // the last generator id of a launch; the first is 0
)

// Bucket names. Each bucket's records are described where they are used.
var (
	launchesBucket   = []byte("launches")
	generatorsBucket = []byte("generators")
	highWaterBucket  = []byte("highwater")
	blocksBucket     = []byte("blocks")
	holdsBucket      = []byte("holds")
	logBucket        = []byte("log")
)

// bucket returns the named bucket of a read transaction, or nil if tx is
// nil (an empty log) or the bucket does not exist yet.
func bucket(tx *bbolt.Tx, name []byte) *bbolt.Bucket {
	if tx == nil {
		return nil
	}
	return tx.Bucket(name)
}

// createBucket returns the named bucket of a write transaction, creating
// it if needed.
func createBucket(tx *bbolt.Tx, name []byte) (*bbolt.Bucket, error) {
	b, err := tx.CreateBucketIfNotExists(name)
	if err != nil {
		return nil, fmt.Errorf("%w: bucket %q: %w", ErrCorrupt, name, err)
	}
	return b, nil
}

// idKey is the key of a launch id: 4 bytes big-endian, so that keys sort
// as numbers.
func idKey(id int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(id)) }

func checkLaunch(field string, id, lo int) error {
	if id < lo || id > MaxLaunch {
		return fmt.Errorf("%w: %s = %d, want %d..=%d", ErrInvalid, field, id, lo, MaxLaunch)
	}
	return nil
}

// get returns the value stored under key in b, or nil, and whether key
// names a nested bucket instead of a value (which this package never
// writes).
func get(b *bbolt.Bucket, key []byte) (v []byte, isBucket bool) {
	k, v := b.Cursor().Seek(key)
	if !bytes.Equal(k, key) {
		return nil, false
	}
	return v, v == nil
}

// Generator counters and marks carry a CRC-32C of their key and value,
// and the sequence of their bucket holds the XOR of those checksums, so
// that damage which turns a counter back, moves a record to another key or
// drops records does not go unnoticed; see sealedBucket.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// seal returns payload followed by the checksum of key and payload.
func seal(key, payload []byte) []byte {
	return binary.BigEndian.AppendUint32(payload, checksum(key, payload))
}

func checksum(key, payload []byte) uint32 {
	return crc32.Update(crc32.Checksum(key, castagnoli), castagnoli, payload)
}

// sum returns the checksum at the end of sealed value v.
func sum(v []byte) uint64 { return uint64(binary.BigEndian.Uint32(v[len(v)-4:])) }

// putSealed stores payload under key in b, sealed, and keeps the bucket's
// digest.
func putSealed(b *bbolt.Bucket, key, payload []byte) error {
	digest := b.Sequence()
	if old := b.Get(key); old != nil {
		digest ^= sum(old)
	}
	v := seal(key, payload)
	if err := b.Put(key, v); err != nil {
		return err
	}
	return b.SetSequence(digest ^ sum(v))
}

// sealedBucket checks every record of b, each payload bytes (at least
// -size bytes where size is negative) and its checksum, and the bucket's
// digest. A record whose key was damaged fails
// here, and so does a record lost, so a lookup that finds nothing can trust
// that nothing was stored.
func (l *Log) sealedBucket(b *bbolt.Bucket, what string, size int) error {
	if b == nil {
		return nil
	}
	var digest uint64
	err := b.ForEach(func(k, v []byte) error {
		if n := len(v) - 4; n < 0 || (size >= 0 && n != size) || n < -size || uint64(checksum(k, v[:n])) != sum(v) {
			want := fmt.Sprintf("%d bytes", size+4)
			if size < 0 {
				want = fmt.Sprintf("at least %d bytes", -size+4)
			}
			return fmt.Errorf("%w: %s: %s %x: bad record %x, want %s with a valid checksum", ErrCorrupt, l.path, what, k, v, want)
		}
		digest ^= sum(v)
		return nil
	})
	if err == nil && digest != b.Sequence() {
		err = fmt.Errorf("%w: %s: %s records do not match their digest: records lost or damaged", ErrCorrupt, l.path, what)
	}
	return err
}

// checkRoot checks that the file holds no bucket but the log's own: a
// damaged bucket name would otherwise read as an empty bucket.
func (l *Log) checkRoot(tx *bbolt.Tx) error {
	return tx.ForEach(func(name []byte, _ *bbolt.Bucket) error {
		for _, known := range [][]byte{launchesBucket, generatorsBucket, highWaterBucket, blocksBucket, holdsBucket, logBucket} {
			if bytes.Equal(name, known) {
				return nil
			}
		}
		return fmt.Errorf("%w: %s: unknown bucket %q", ErrCorrupt, l.path, name)
	})
}
