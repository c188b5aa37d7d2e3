package cli

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/idkit/idkit/internal/safefile"
	"github.com/idkit/idkit/publicid"
)

var cmdPublicID = &Command{
	Name:  "publicid",
	Usage: "publicid keygen|encode|decode [--id K] [--out FILE [--first]] [--key-file FILE] [--domain 63|53] [--number] [ID...]",
	Short: "map ordered IDs to public IDs that cannot be counted, and back",
	Long: `
Publicid maps IDs (any positive int64: TraceIds, Snowflakes, DecimalIds,
database keys) to public IDs under a secret key, and back, with FF1 (NIST
SP 800-38G). A public ID is 14 characters for the 63-bit domain and 12 for
the 53-bit one: a key character, then the construction and the permuted
number in Crockford's base 32; the second character, 8 to F, marks FF1.
Decoding ignores case and reads I and L as 1, O as 0. Public IDs made
before FF1 (second character 0 to 7) no longer decode.

	keygen --id K        print a new key line (key id K, 0 to 31, default 1)
	                     to append to a key file; keep the file secret
	  --out FILE         append the key line to FILE instead, creating it
	                     with mode 0600; a FILE that others may read or
	                     write is refused (chmod 600 it), and so is a key
	                     id FILE already holds
	  --first            put the new key first in FILE, where it encodes:
	                     a rotation; the old keys stay and still decode
	encode ID...         print the public ID of each ID
	decode PUBLIC...     print the ID of each public ID

	--key-file FILE      the keys, one a line: "ID SECRET-HEX"; the first
	                     encodes, every one decodes (keep old keys after a
	                     rotation, so that their public IDs still decode)
	--domain 63|53       63: IDs 1 to 2^63-1 (default); 53: 1 to 2^53-1,
	                     public numbers that a JavaScript number holds
	--number             encode to, or decode from, the public number
	                     instead of the text (no key id: decode uses
	                     --key-id, default the first key's)
	--key-id K           the key of --number decoding

With no ID arguments, or "-", the IDs are read from standard input, one a
line. An input that is not an ID or public ID of the domain is a bad
argument (exit status 2); a public ID of a key the file does not hold, or
of another construction, fails with exit status 1.

Examples:

	idkit publicid keygen --id 1 --out keys.txt
	idkit publicid keygen --id 2 --out keys.txt --first    # rotate to key 2
	idkit publicid encode --key-file keys.txt 4649612572545253377
	idkit new traceid --node 7 -n 3 | idkit publicid encode --key-file keys.txt
	idkit publicid decode --key-file keys.txt 1A1EG5RH5T6119
`,
	Run: runPublicID,
}

func runPublicID(c *Console, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && isHelpFlag(args[0]) {
			return flag.ErrHelp
		}
		return Usagef("missing keygen, encode or decode")
	}
	action := args[0]
	fs := NewFlags("publicid " + action)
	switch action {
	case "keygen":
		id := fs.Int("id", 1, "key id, 0 to 31")
		out := fs.String("out", "", "append the key line to FILE (mode 0600) instead of printing it")
		first := fs.Bool("first", false, "with --out, put the key first, where it encodes: a key rotation")
		rest, err := parseArgs(fs, args[1:])
		if err != nil {
			return err
		}
		if len(rest) > 0 {
			return Usagef("unexpected argument %q", rest[0])
		}
		k, err := publicid.NewKey(*id)
		if err != nil {
			return usageError{err.Error()}
		}
		if *first && *out == "" {
			return Usagef("--first applies to --out FILE only")
		}
		if *out != "" {
			return addKey(*out, k, *first)
		}
		_, err = fmt.Fprintln(c.Stdout, k.KeyLine())
		return err
	case "encode", "decode":
	default:
		return Usagef("unknown publicid action %q, want keygen, encode or decode", action)
	}
	keyFile := fs.String("key-file", "", "file of keys, one a line: ID SECRET-HEX")
	domain := fs.Int("domain", 63, "63 or 53")
	number := fs.Bool("number", false, "the public number instead of the text")
	keyID := fs.Int("key-id", -1, "key id of --number decoding (default the first key's)")
	rest, err := parseArgs(fs, args[1:])
	if err != nil {
		return err
	}
	if *keyFile == "" {
		return Usagef("missing --key-file (make one with 'idkit publicid keygen')")
	}
	if *domain != 63 && *domain != 53 {
		return Usagef("--domain %d, want 63 or 53", *domain)
	}
	if IsSet(fs, "key-id") && (action != "decode" || !*number) {
		return Usagef("--key-id applies to decode --number only")
	}
	text, err := safefile.ReadFile(*keyFile) // no link, no other user's file
	if err != nil {
		return fmt.Errorf("key file: %w", err)
	}
	if st, err := os.Stat(*keyFile); err == nil && st.Mode().Perm()&0o077 != 0 {
		fmt.Fprintf(c.Stderr, "idkit publicid: warning: key file %s is readable by others (mode %04o); its keys decode every public ID: chmod 600 it\n",
			*keyFile, st.Mode().Perm())
	}
	keys, err := publicid.ParseKeys(text)
	if err != nil {
		return fmt.Errorf("%s: %w", *keyFile, err)
	}
	codec, err := publicid.New(publicid.Domain(*domain), keys...)
	if err != nil {
		return fmt.Errorf("%s: %w", *keyFile, err)
	}
	if *keyID < 0 {
		*keyID = codec.KeyID()
	}
	convert := func(s string) (string, error) {
		switch {
		case action == "encode":
			id, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return "", fmt.Errorf("%w: %q is not a decimal ID", publicid.ErrRange, s)
			}
			if *number {
				v, err := codec.Permute(id)
				return strconv.FormatInt(v, 10), err
			}
			return codec.Encode(id)
		case *number:
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return "", fmt.Errorf("%w: %q is not a decimal public number", publicid.ErrRange, s)
			}
			id, err := codec.UnpermuteWith(*keyID, v)
			return strconv.FormatInt(id, 10), err
		default:
			id, err := codec.Decode(s)
			return strconv.FormatInt(id, 10), err
		}
	}
	w := bufio.NewWriter(c.Stdout)
	defer w.Flush()
	if len(rest) == 0 || len(rest) == 1 && rest[0] == "-" {
		sc := bufio.NewScanner(c.stdin())
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" {
				continue
			}
			if err := publicLine(w, convert, line); err != nil {
				return err
			}
		}
		return sc.Err()
	}
	for _, s := range rest {
		if err := publicLine(w, convert, s); err != nil {
			return err
		}
	}
	return nil
}

// addKey adds the key line of k to the key file path, which it creates
// with mode 0600: at the end, or first (where it encodes) when first is
// set, by writing the whole file anew and renaming it into place. It
// refuses a file that others may read or write, and a key id the file
// already holds, naming its line, and leaves the file unchanged then.
func addKey(path string, k publicid.Key, first bool) (err error) {
	f, err := safefile.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600) // no link, no other user's file
	if err != nil {
		return fmt.Errorf("key file: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("key file: %w", cerr)
		}
	}()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("key file: %w", err)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("key file %s may be read or written by others (mode %04o), so no key was added to it: chmod 600 %s", path, perm, path)
	}
	old, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("key file: %w", err)
	}
	for n, line := range strings.Split(string(old), "\n") {
		if line = strings.TrimSpace(line); line == "" || line[0] == '#' {
			continue
		}
		if held, err := publicid.ParseKeys([]byte(line)); err == nil && held[0].ID == k.ID {
			return fmt.Errorf("key file %s already holds key id %d, on line %d, so no key was added to it: a key id names one key; choose another with --id", path, k.ID, n+1)
		}
	}
	line := k.KeyLine() + "\n"
	if len(old) > 0 && old[len(old)-1] != '\n' {
		old = append(old, '\n')
		if !first {
			line = "\n" + line
		}
	}
	if !first {
		if _, err := f.Write([]byte(line)); err != nil {
			return fmt.Errorf("key file: %w", err)
		}
		return f.Sync()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("key file: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, there is nothing to remove
	if _, err := tmp.Write(append([]byte(line), old...)); err != nil {
		tmp.Close()
		return fmt.Errorf("key file: %w", err)
	}
	if err := errors.Join(tmp.Sync(), tmp.Close()); err != nil {
		return fmt.Errorf("key file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("key file: %w", err)
	}
	return nil
}

// publicLine writes the conversion of s; an input that is not an ID is a
// usage error, other errors (an unknown key or construction) are not.
func publicLine(w *bufio.Writer, convert func(string) (string, error), s string) error {
	out, err := convert(s)
	if err != nil {
		w.Flush()
		if errors.Is(err, publicid.ErrUnknownKey) || errors.Is(err, publicid.ErrUnknownConstruction) {
			return err
		}
		return usageError{err.Error()}
	}
	w.WriteString(out)
	return w.WriteByte('\n')
}
