package publicid

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// secretKey returns key 11 ("B") with a secret whose every form is easy
// to find in a text: bytes 0xa1, 0xb2, ... 0x0f in no ascending run.
func secretKey() Key {
	s := make([]byte, 16)
	for i := range s {
		s[i] = byte(0xa1 + 0x11*i)
	}
	return Key{ID: 11, Secret: s}
}

// secretForms returns the ways fmt, JSON and hex can spell the secret,
// whole and in part, for assertions that a text holds none of them.
func secretForms(secret []byte) []string {
	h := hex.EncodeToString(secret)
	return []string{
		h, strings.ToUpper(h), h[:8], strings.ToUpper(h[:8]),
		fmt.Sprintf("%#v", secret), fmt.Sprintf("%#v", secret[:2])[len("[]byte{"):], // "0xa1, 0xb2"
		fmt.Sprintf("%v", secret), fmt.Sprintf("%d %d", secret[0], secret[1]), // "161 178"
		fmt.Sprintf("% x", secret[:4]), fmt.Sprintf("%q", secret[:4]),
		base64.StdEncoding.EncodeToString(secret), base64.StdEncoding.EncodeToString(secret[:6]),
	}
}

func assertNoSecret(t *testing.T, text string, secret []byte, what string) {
	t.Helper()
	for _, form := range secretForms(secret) {
		assert.NotContains(t, text, form, "%s shows the secret: %s", what, text)
	}
}

func TestKeyPrintsNoSecret(t *testing.T) {
	t.Parallel()
	k := secretKey()
	assert.Equal(t, `publicid key "B"`, k.String())
	assert.Equal(t, `publicid.Key{ID:11, Secret:[]byte{ /* 16 bytes, hidden */ }}`, k.GoString())
	assert.Equal(t, `publicid key id 40 (invalid)`, Key{ID: 40, Secret: k.Secret}.String())

	type holder struct {
		Name string
		Key  Key
	}
	values := map[string]any{
		"Key":          k,
		"*Key":         &k,
		"[]Key":        []Key{k, k},
		"struct":       holder{"svc", k},
		"*struct":      &holder{"svc", k},
		"map":          map[string]Key{"current": k},
		"invalid id":   Key{ID: 40, Secret: k.Secret},
		"[]any of Key": []any{k},
	}
	for name, v := range values {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10.3s", "%T %v"} {
			got := fmt.Sprintf(verb, v)
			assertNoSecret(t, got, k.Secret, name+" in "+verb)
			if verb == "%v" && name != "invalid id" {
				assert.Contains(t, got, `publicid key "B"`, "%s in %s names the key", name, verb)
			}
		}
		assertNoSecret(t, fmt.Sprint(v), k.Secret, name+" in Sprint")
		assertNoSecret(t, fmt.Sprintln(v), k.Secret, name+" in Sprintln")
	}
	assert.Equal(t, `"publicid key \"B\""`, fmt.Sprintf("%q", k))
	assert.Equal(t, `{Name:svc Key:publicid key "B"}`, fmt.Sprintf("%+v", holder{"svc", k}))

	// log/slog: a Key is its LogValue in both handlers; the JSON handler
	// marshals a slice of keys, the text handler prints a struct holding
	// one with %+v.
	var b bytes.Buffer
	slog.New(slog.NewJSONHandler(&b, nil)).Info("rotated", "key", k, "keys", []Key{k})
	slog.New(slog.NewTextHandler(&b, nil)).Info("rotated", "key", k, "holder", holder{"svc", k})
	assertNoSecret(t, b.String(), k.Secret, "slog")
	assert.Contains(t, b.String(), `"key":"publicid key \"B\""`)
	assert.Contains(t, b.String(), `key="publicid key \"B\""`)

	j, err := json.Marshal(holder{"svc", k})
	require.NoError(t, err)
	assert.JSONEq(t, `{"Name":"svc","Key":"publicid key \"B\""}`, string(j))
}

func TestKeyLine(t *testing.T) {
	t.Parallel()
	k := secretKey()
	assert.Equal(t, "B "+hex.EncodeToString(k.Secret), k.KeyLine(), "the key file line holds the secret")
	keys, err := ParseKeys([]byte(k.KeyLine() + "\n"))
	require.NoError(t, err)
	assert.Equal(t, []Key{k}, keys)
	assert.Equal(t, "? 00", Key{ID: 32, Secret: []byte{0}}.KeyLine())
}

// TestParseKeysHidesSecret checks that a bad key file line gives an error
// naming the line and what is wrong, and never the secret on it.
func TestParseKeysHidesSecret(t *testing.T) {
	t.Parallel()
	secret := hex.EncodeToString(secretKey().Secret)
	other := hex.EncodeToString(bytes.Repeat([]byte{0x5c, 0x3e}, 8))
	for _, tt := range []struct {
		name, line, want string
	}{
		{"swapped columns", secret + " B", "the columns look swapped: want the key id first, then the secret"},
		{"swapped columns, number id", secret + "   17", "the columns look swapped"},
		{"not hexadecimal", "B " + secret[:10] + "zz" + secret[12:], "secret is not hexadecimal: its character 11 is not 0-9, a-f or A-F"},
		{"too short", "B " + secret[:24], "secret of 24 hexadecimal digits, want 32, 48 or 64 (16, 24 or 32 bytes)"},
		{"odd length", "B " + secret + "a", "secret of 33 hexadecimal digits"},
		{"bad id character", "U " + secret, `key id "U", want one character of ` + Alphabet + " or a number 0 to 31"},
		{"id out of range", "32 " + secret, `key id "32"`},
		{"two secrets", secret + " " + other, "key id of 32 characters, want one character of"},
		{"one field", secret, `want "ID SECRET-HEX", got 1 fields`},
		{"three fields", "B " + secret + " " + other, `want "ID SECRET-HEX", got 3 fields`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseKeys([]byte("# keys\n" + tt.line + "\nC " + other + "\n"))
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalid)
			assert.ErrorContains(t, err, "key file line 2: "+tt.want)
			assertNoSecret(t, err.Error(), secretKey().Secret, "the error")
			raw, _ := hex.DecodeString(other)
			assertNoSecret(t, err.Error(), raw, "the error")
		})
	}
}
