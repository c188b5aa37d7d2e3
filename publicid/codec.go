package publicid

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
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
// character and the construction and public number in base 32.
func (d Domain) TextLen() int { return 1 + (int(d)+4)/5 }

// topBits returns how many bits of the public number the text's first
// base-32 character holds; its other 5-topBits bits name the construction.
func (d Domain) topBits() uint { return uint(d) - 5*uint(d.TextLen()-2) }

// construction is the version of the permutation that the text names in
// the top bits of its first base-32 character: 1 is FF1. Version 0 was
// publicid's own AES Feistel network, before FF1; 2 and 3 are free.
const construction = 1

// Alphabet is Crockford's base 32: digits and capital letters without I,
// L, O and U. Decoding ignores case and reads I and L as 1, O as 0.
const Alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// MaxKeyID is the largest key id: a key id is one character of Alphabet.
const MaxKeyID = 31

// Key is one secret of a Codec.
//
// Printing a Key shows its id only: String, GoString, every fmt verb
// (%v, %+v, %#v, %s, %q, %x, %d, ...), alone or in a struct or slice,
// log/slog (LogValue) and encoding/json (MarshalJSON) leave the secret
// out. KeyLine is the one method
// that writes the secret, for the key file.
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

// idChar returns the key's id character, or '?' for an id out of range.
func (k Key) idChar() byte {
	if k.ID >= 0 && k.ID <= MaxKeyID {
		return Alphabet[k.ID]
	}
	return '?'
}

// String names the key by its id, as publicid key "B", without the
// secret. A key id out of range shows as publicid key id 40 (invalid).
func (k Key) String() string {
	if k.ID < 0 || k.ID > MaxKeyID {
		return "publicid key id " + strconv.Itoa(k.ID) + " (invalid)"
	}
	return `publicid key "` + string(Alphabet[k.ID]) + `"`
}

// GoString returns the key in Go syntax, for %#v, with the secret left
// out: publicid.Key{ID:11, Secret:[]byte{ /* 16 bytes, hidden */ }}.
func (k Key) GoString() string {
	return "publicid.Key{ID:" + strconv.Itoa(k.ID) + ", Secret:[]byte{ /* " + strconv.Itoa(len(k.Secret)) + " bytes, hidden */ }}"
}

// Format implements fmt.Formatter so that no verb prints the secret: %#v
// prints GoString, %q the quoted String, and every other verb String.
func (k Key) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		io.WriteString(f, k.GoString())
	case verb == 'q':
		fmt.Fprintf(f, fmt.FormatString(f, 'q'), k.String())
	default:
		fmt.Fprintf(f, fmt.FormatString(f, 's'), k.String())
	}
}

// LogValue implements slog.LogValuer: a logged key is its String, without
// the secret.
func (k Key) LogValue() slog.Value { return slog.StringValue(k.String()) }

// MarshalJSON implements json.Marshaler: a key in JSON is its String, a
// JSON string without the secret, so that a struct or slice of keys
// logged or served as JSON does not carry them. Store keys with KeyLine.
func (k Key) MarshalJSON() ([]byte, error) { return strconv.AppendQuote(nil, k.String()), nil }

// KeyLine returns the key as a line of a key file, without the newline:
// its id character, a space and the secret in hexadecimal. It returns the
// secret: write it to a private key file (mode 0600) only, never to a log
// or an error. ParseKeys reads it back.
func (k Key) KeyLine() string {
	return string(k.idChar()) + " " + hex.EncodeToString(k.Secret)
}

// ParseKeys reads a key file: one key a line, its id character (or the
// id as a number) and its secret in hexadecimal, 32, 48 or 64 digits (16,
// 24 or 32 bytes), separated by spaces; blank lines and lines starting
// with # are skipped. The first key is the one a Codec encodes with. Two
// lines of one key id are refused, naming both.
//
// An error names the line and what is wrong with it, and never repeats a
// secret: not the secret's text, nor a key id column longer than a key id
// (which may be a secret in the wrong column).
func ParseKeys(text []byte) ([]Key, error) {
	var keys []Key
	lineOf := map[int]int{} // key id -> the line that holds it
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
		k, err := parseKeyLine(f[0], f[1])
		if err != nil {
			return nil, fmt.Errorf("%w: key file line %d: %w", ErrInvalid, n, err)
		}
		if first, ok := lineOf[k.ID]; ok {
			return nil, fmt.Errorf("%w: key file lines %d and %d both hold key id %c: a key id names one key; keep the line of the key your public IDs were made with", ErrInvalid, first, n, k.idChar())
		}
		lineOf[k.ID] = n
		keys = append(keys, k)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: key file: %w", ErrInvalid, err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: key file holds no key", ErrInvalid)
	}
	return keys, nil
}

// maxKeyIDLen is the length of the longest key id text, "31".
const maxKeyIDLen = 2

// parseKeyLine parses the two columns of a key file line. Its errors
// quote neither column, except a key id of at most maxKeyIDLen
// characters, since either may be a secret.
func parseKeyLine(idText, secretText string) (Key, error) {
	id, ok := keyID(idText)
	if !ok {
		want := fmt.Sprintf("want one character of %s or a number 0 to %d", Alphabet, MaxKeyID)
		_, secondIsID := keyID(secretText)
		switch {
		case secondIsID && len(idText) > maxKeyIDLen && hexIndex(idText) < 0:
			return Key{}, errors.New("the columns look swapped: want the key id first, then the secret")
		case len(idText) <= maxKeyIDLen:
			return Key{}, fmt.Errorf("key id %q, %s", idText, want)
		default:
			return Key{}, fmt.Errorf("key id of %d characters, %s", len(idText), want)
		}
	}
	if i := hexIndex(secretText); i >= 0 {
		return Key{}, fmt.Errorf("secret is not hexadecimal: its character %d is not 0-9, a-f or A-F", i+1)
	}
	if n := len(secretText); n != 32 && n != 48 && n != 64 {
		return Key{}, fmt.Errorf("secret of %d hexadecimal digits, want 32, 48 or 64 (16, 24 or 32 bytes)", n)
	}
	secret, _ := hex.DecodeString(secretText) // cannot fail: checked above
	return Key{ID: id, Secret: secret}, nil
}

// hexIndex returns the index of the first byte of s that is not a
// hexadecimal digit, or -1.
func hexIndex(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return i
		}
	}
	return -1
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
		p, err := newPerm(k.Secret, int(domain))
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
// number of the domain, 1 to Max. The number carries neither the key id
// nor the construction: decode it with Unpermute while the key is
// current, or with UnpermuteWith after a rotation; the text form (Encode)
// carries both.
func (c *Codec) Permute(id int64) (int64, error) {
	if err := c.check(id, "ID"); err != nil {
		return 0, err
	}
	v, err := c.current.encrypt(uint64(id))
	return int64(v), err
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
	id, err := c.perms[keyID].decrypt(uint64(v))
	return int64(id), err
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

// Encode returns the public ID of id: the current key's id character,
// then the construction and the public number in base 32, TextLen
// characters in all.
func (c *Codec) Encode(id int64) (string, error) {
	var buf [16]byte
	b, err := c.AppendEncode(buf[:0], id)
	return string(b), err
}

// AppendEncode appends the public ID of id to b. With room for TextLen
// bytes in b it allocates nothing.
func (c *Codec) AppendEncode(b []byte, id int64) ([]byte, error) {
	v, err := c.Permute(id)
	if err != nil {
		return b, err
	}
	return c.appendText(b, uint64(v)), nil
}

// AppendEncodeAll appends the public IDs of ids to b, TextLen bytes each
// with nothing between them: the one of ids[i] starts i*TextLen bytes
// after the end of the b passed in. It encodes all or, if one of ids is
// not an ID of the domain, none, and then returns b unchanged and an error
// naming the first such ID. With room for len(ids)*TextLen bytes in b it
// allocates nothing.
func (c *Codec) AppendEncodeAll(b []byte, ids []int64) ([]byte, error) {
	if err := c.checkAll(ids); err != nil {
		return b, err
	}
	start := len(b)
	for _, id := range ids {
		v, err := c.current.encrypt(uint64(id))
		if err != nil {
			return b[:start], err
		}
		b = c.appendText(b, v)
	}
	return b, nil
}

// AppendPermuteAll appends the public number of each of ids to dst, as
// Permute gives them. It permutes all or, if one of ids is not an ID of
// the domain, none, and then returns dst unchanged and an error naming
// the first such ID. dst may be ids[:0], which replaces the IDs by their
// public numbers. With room in dst it allocates nothing.
func (c *Codec) AppendPermuteAll(dst, ids []int64) ([]int64, error) {
	if err := c.checkAll(ids); err != nil {
		return dst, err
	}
	start := len(dst)
	for _, id := range ids {
		v, err := c.current.encrypt(uint64(id))
		if err != nil {
			return dst[:start], err
		}
		dst = append(dst, int64(v))
	}
	return dst, nil
}

func (c *Codec) checkAll(ids []int64) error {
	for i, id := range ids {
		if id < 1 || id > c.domain.Max() {
			return fmt.Errorf("%w: ids[%d] is %d, want 1 to %d", ErrRange, i, id, c.domain.Max())
		}
	}
	return nil
}

// appendText appends the text of the public number v under the current
// key: its key character, then construction<<domain | v in base 32,
// TextLen-1 characters, zero-padded.
func (c *Codec) appendText(b []byte, v uint64) []byte {
	n := c.domain.TextLen()
	b = append(b, Alphabet[c.curID])
	b = append(b, make([]byte, n-1)...)
	x := uint64(construction)<<uint(c.domain) | v
	for i := len(b) - 1; i > len(b)-n; i-- {
		b[i] = Alphabet[x&31]
		x >>= 5
	}
	return b
}

// Decode returns the ID of a public ID, under the key its first character
// names. It reads lowercase as uppercase, I and L as 1 and O as 0. A text
// of another construction than this codec's (such as one made before
// publicid used FF1) fails with ErrUnknownConstruction.
func (c *Codec) Decode(s string) (int64, error) {
	n := c.domain.TextLen()
	if len(s) != n {
		return 0, fmt.Errorf("%w: %q has %d characters, want %d", ErrSyntax, s, len(s), n)
	}
	top := c.domain.topBits()
	var v uint64
	var version byte
	for i := 1; i < n; i++ {
		d, ok := digit(s[i])
		if !ok {
			return 0, fmt.Errorf("%w: %q: character %d is %q, want one of %s", ErrSyntax, s, i+1, s[i], Alphabet)
		}
		if i == 1 {
			version, d = d>>top, d&(1<<top-1)
		}
		v = v<<5 | uint64(d)
	}
	k, ok := digit(s[0])
	if !ok {
		return 0, fmt.Errorf("%w: %q: key character %q, want one of %s", ErrSyntax, s, s[0], Alphabet)
	}
	if version != construction {
		return 0, c.constructionError(s, version)
	}
	if v == 0 {
		return 0, fmt.Errorf("%w: %q is not a public ID: its number is 0, want 1 to %d", ErrSyntax, s, c.domain.Max())
	}
	if c.perms[k] == nil {
		return 0, fmt.Errorf("%w: %q was made under key %c, and the codec holds keys %s", ErrUnknownKey, s, Alphabet[k], c.keyList())
	}
	id, err := c.perms[k].decrypt(v)
	return int64(id), err
}

func (c *Codec) constructionError(s string, version byte) error {
	made := fmt.Sprintf("construction %d, which this version of publicid does not know", version)
	if version == 0 {
		made = "construction 0, publicid's AES Feistel network before FF1, no longer supported"
	}
	top := c.domain.topBits()
	return fmt.Errorf("%w: %q was made by %s; this codec reads construction %d (FF1), whose texts have one of %s as second character",
		ErrUnknownConstruction, s, made, construction, Alphabet[construction<<top:(construction+1)<<top])
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
