package publicid

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
)

// Domain is the set of IDs a Codec maps: 1 to Max, onto itself.
type Domain int

// The domains.
const (
	// Domain63 is every positive int64, 1 to 2^63-1: TraceIds, Snowflakes,
	// DecimalIds, BIGINT keys.
	Domain63 Domain = 63
	// Domain53 is 1 to 2^53-1, the integers a JavaScript number holds
	// exactly (Number.MAX_SAFE_INTEGER), for public IDs sent as JSON
	// numbers.
	Domain53 Domain = 53
)

// Max returns the largest ID of the domain.
func (d Domain) Max() int64 { return 1<<int(d) - 1 }

// TextLen returns the length of the domain's text form: one key
// character and the value in base 32.
func (d Domain) TextLen() int { return 1 + (int(d)+4)/5 }

// Alphabet is Crockford's base 32: digits and capital letters without I,
// L, O and U. Decoding ignores case and reads I and L as 1, O as 0.
const Alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// MaxKeyID is the largest key id: a key id is one character of Alphabet.
const MaxKeyID = 31

// Key is one secret of a Codec.
type Key struct {
	// ID names the key in the text form, 0 to MaxKeyID: its first
	// character is Alphabet[ID].
	ID int
	// Secret is an AES key, 16, 24 or 32 random bytes. 16 bytes (AES-128)
	// are enough; see the package documentation.
	Secret []byte
}

// NewKey returns a key with id and 16 bytes from crypto/rand.
func NewKey(id int) (Key, error) {
	if id < 0 || id > MaxKeyID {
		return Key{}, fmt.Errorf("%w: key id %d, want 0 to %d", ErrInvalid, id, MaxKeyID)
	}
	k := Key{ID: id, Secret: make([]byte, 16)}
	rand.Read(k.Secret) // never fails; see crypto/rand.Read
	return k, nil
}

// String returns the key as a line of a key file: its id character, a
// space and the secret in hexadecimal.
func (k Key) String() string {
	c := byte('?')
	if k.ID >= 0 && k.ID <= MaxKeyID {
		c = Alphabet[k.ID]
	}
	return string(c) + " " + hex.EncodeToString(k.Secret)
}

// ParseKeys reads a key file: one key a line, its id character (or the
// id as a number) and its secret in hexadecimal, separated by spaces;
// blank lines and lines starting with # are skipped. The first key is the
// one a Codec encodes with.
func ParseKeys(text []byte) ([]Key, error) {
	var keys []Key
	sc := bufio.NewScanner(bytes.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("%w: key file line %d: want \"ID SECRET-HEX\", got %d fields", ErrInvalid, n, len(f))
		}
		id, ok := keyID(f[0])
		if !ok {
			return nil, fmt.Errorf("%w: key file line %d: key id %q, want one character of %s or a number 0 to %d", ErrInvalid, n, f[0], Alphabet, MaxKeyID)
		}
		secret, err := hex.DecodeString(f[1])
		if err != nil {
			return nil, fmt.Errorf("%w: key file line %d: secret is not hexadecimal: %w", ErrInvalid, n, err)
		}
		keys = append(keys, Key{ID: id, Secret: secret})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: key file: %w", ErrInvalid, err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: key file holds no key", ErrInvalid)
	}
	return keys, nil
}

func keyID(s string) (int, bool) {
	if len(s) == 1 {
		if d, ok := digit(s[0]); ok {
			return int(d), true
		}
	}
	var id int
	if _, err := fmt.Sscanf(s, "%d", &id); err == nil && fmt.Sprint(id) == s && id >= 0 && id <= MaxKeyID {
		return id, true
	}
	return 0, false
}

// Codec maps the IDs of a Domain to public IDs and back. It is safe for
// concurrent use.
type Codec struct {
	domain  Domain
	current *perm
	curID   int
	perms   [MaxKeyID + 1]*perm
}

// New returns a codec for domain under keys: the first encodes, and every
// one decodes the public IDs made under it. Key ids must be distinct.
func New(domain Domain, keys ...Key) (*Codec, error) {
	if domain != Domain63 && domain != Domain53 {
		return nil, fmt.Errorf("%w: domain %d, want Domain63 or Domain53", ErrInvalid, int(domain))
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: no key, want at least one", ErrInvalid)
	}
	c := &Codec{domain: domain, curID: keys[0].ID}
	for _, k := range keys {
		if k.ID < 0 || k.ID > MaxKeyID {
			return nil, fmt.Errorf("%w: key id %d, want 0 to %d", ErrInvalid, k.ID, MaxKeyID)
		}
		if c.perms[k.ID] != nil {
			return nil, fmt.Errorf("%w: key id %d (%c) appears twice", ErrInvalid, k.ID, Alphabet[k.ID])
		}
		if n := len(k.Secret); n != 16 && n != 24 && n != 32 {
			return nil, fmt.Errorf("%w: key %d (%c): secret of %d bytes, want 16, 24 or 32", ErrInvalid, k.ID, Alphabet[k.ID], n)
		}
		p, err := newPerm(k.Secret, uint64(domain.Max()))
		if err != nil {
			return nil, fmt.Errorf("%w: key %d: %w", ErrInvalid, k.ID, err)
		}
		c.perms[k.ID] = p
	}
	c.current = c.perms[c.curID]
	return c, nil
}

// Domain returns the codec's domain.
func (c *Codec) Domain() Domain { return c.domain }

// KeyID returns the id of the key the codec encodes with.
func (c *Codec) KeyID() int { return c.curID }

func (c *Codec) check(v int64, what string) error {
	if v < 1 || v > c.domain.Max() {
		return fmt.Errorf("%w: %s %d, want 1 to %d", ErrRange, what, v, c.domain.Max())
	}
	return nil
}

// Permute returns the public number of id under the current key: another
// number of the domain, 1 to Max. The number carries no key id: decode it
// with Unpermute while the key is current, or with UnpermuteWith after a
// rotation; the text form (Encode) carries the key id.
func (c *Codec) Permute(id int64) (int64, error) {
	if err := c.check(id, "ID"); err != nil {
		return 0, err
	}
	return int64(c.current.encrypt(uint64(id-1))) + 1, nil
}

// Unpermute returns the ID whose public number under the current key is v.
func (c *Codec) Unpermute(v int64) (int64, error) { return c.UnpermuteWith(c.curID, v) }

// UnpermuteWith returns the ID whose public number under key keyID is v.
func (c *Codec) UnpermuteWith(keyID int, v int64) (int64, error) {
	if err := c.check(v, "public number"); err != nil {
		return 0, err
	}
	if keyID < 0 || keyID > MaxKeyID || c.perms[keyID] == nil {
		return 0, fmt.Errorf("%w: key id %d is not among the codec's keys %s", ErrUnknownKey, keyID, c.keyList())
	}
	return int64(c.perms[keyID].decrypt(uint64(v-1))) + 1, nil
}

func (c *Codec) keyList() string {
	var b strings.Builder
	for id, p := range c.perms {
		if p != nil {
			b.WriteByte(Alphabet[id])
		}
	}
	return b.String()
}

// Encode returns the public ID of id: the current key's id character and
// the public number in base 32, TextLen characters, zero-padded.
func (c *Codec) Encode(id int64) (string, error) {
	b, err := c.AppendEncode(make([]byte, 0, c.domain.TextLen()), id)
	return string(b), err
}

// AppendEncode appends the public ID of id to b.
func (c *Codec) AppendEncode(b []byte, id int64) ([]byte, error) {
	v, err := c.Permute(id)
	if err != nil {
		return b, err
	}
	n := c.domain.TextLen()
	b = append(b, Alphabet[c.curID])
	start := len(b)
	for range n - 1 {
		b = append(b, 0)
	}
	for i := len(b) - 1; i >= start; i-- {
		b[i] = Alphabet[v&31]
		v >>= 5
	}
	return b, nil
}

// Decode returns the ID of a public ID, under the key its first character
// names. It reads lowercase as uppercase, I and L as 1 and O as 0.
func (c *Codec) Decode(s string) (int64, error) {
	n := c.domain.TextLen()
	if len(s) != n {
		return 0, fmt.Errorf("%w: %q has %d characters, want %d", ErrSyntax, s, len(s), n)
	}
	var v uint64
	for i := 1; i < n; i++ {
		d, ok := digit(s[i])
		if !ok {
			return 0, fmt.Errorf("%w: %q: character %d is %q, want one of %s", ErrSyntax, s, i+1, s[i], Alphabet)
		}
		v = v<<5 | uint64(d)
		if i == 1 && int(d) >= 1<<(int(c.domain)-5*(n-2)) {
			return 0, fmt.Errorf("%w: %q is not a public ID: its number is above %d", ErrSyntax, s, c.domain.Max())
		}
	}
	k, ok := digit(s[0])
	if !ok {
		return 0, fmt.Errorf("%w: %q: key character %q, want one of %s", ErrSyntax, s, s[0], Alphabet)
	}
	if v < 1 || v > uint64(c.domain.Max()) {
		return 0, fmt.Errorf("%w: %q is not a public ID: its number %d is outside 1 to %d", ErrSyntax, s, v, c.domain.Max())
	}
	if c.perms[k] == nil {
		return 0, fmt.Errorf("%w: %q was made under key %c, and the codec holds keys %s", ErrUnknownKey, s, Alphabet[k], c.keyList())
	}
	return int64(c.perms[k].decrypt(v-1)) + 1, nil
}

// digit returns the value of a base-32 character, with Crockford's
// readings of confusable ones.
func digit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'z':
		c -= 'a' - 'A'
	}
	switch c {
	case 'O':
		return 0, true
	case 'I', 'L':
		return 1, true
	case 'U':
		return 0, false
	}
	if i := strings.IndexByte(Alphabet, c); i >= 10 {
		return byte(i), true
	}
	return 0, false
}
