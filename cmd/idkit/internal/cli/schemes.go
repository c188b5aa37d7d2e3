package cli

import (
	"flag"
	"slices"
	"strings"
)

// A scheme is one kind of ID: "idkit new" makes them and "idkit inspect"
// explains them. Each half defines its own flags on the flag set it is given
// and returns the function that does the work once the flags are parsed.
type scheme struct {
	name string
	// aliases are other spellings of name that commands accept: the
	// names of earlier releases.
	aliases []string
	// newFlags defines the flags of "idkit new NAME" and returns start,
	// which makes the generator.
	newFlags func(c *Console, fs *flag.FlagSet) (start func() (next func() (string, error), err error))
	// inspectFlags defines the flags of "idkit inspect NAME" and returns
	// explain, which reads one ID.
	inspectFlags func(c *Console, fs *flag.FlagSet) (explain func(id string) (*report, error))
}

// schemes is the table of schemes, in the order help lists them.
var schemes = []scheme{
	{name: "traceid", newFlags: newTraceID, inspectFlags: inspectTraceID},
	{name: "decimalid", newFlags: newDecimalID, inspectFlags: inspectDecimalID},
	{name: "snowflake", newFlags: newSnowflake, inspectFlags: inspectSnowflake},
	{name: "objectid", newFlags: newObjectID, inspectFlags: inspectObjectID},
	{name: "flake128", newFlags: newFlake128, inspectFlags: inspectFlake128},
	{name: "ulid", newFlags: newULID, inspectFlags: inspectULID},
	{name: "uuidv4", aliases: []string{"uuid4"}, newFlags: newUUID4, inspectFlags: inspectUUID4},
	{name: "uuidv7", aliases: []string{"uuid7"}, newFlags: newUUID7, inspectFlags: inspectUUID7},
	{name: "xid", newFlags: newXID, inspectFlags: inspectXID},
	{name: "ksuid", newFlags: newKSUID, inspectFlags: inspectKSUID},
}

// lookupScheme finds the scheme called name or one of its aliases. The
// names are compare's too (compare.Lookup takes the same aliases).
func lookupScheme(name string) (scheme, bool) {
	for _, s := range schemes {
		if s.name == name || slices.Contains(s.aliases, name) {
			return s, true
		}
	}
	return scheme{}, false
}

// SchemeNames are the names of the schemes that new and inspect take, in
// the order help lists them.
func SchemeNames() []string {
	names := make([]string, len(schemes))
	for i, s := range schemes {
		names[i] = s.name
	}
	return names
}

func schemeNames() string { return strings.Join(SchemeNames(), ", ") }

// schemeArg checks that args start with a scheme name and returns it: the
// shared start of "idkit new" and "idkit inspect".
func schemeArg(args []string) (scheme, error) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && isHelpFlag(args[0]) {
			return scheme{}, flag.ErrHelp
		}
		return scheme{}, Usagef("missing SCHEME (one of %s)", schemeNames())
	}
	s, ok := lookupScheme(args[0])
	if !ok {
		var names []string
		for _, s := range schemes {
			names = append(names, append([]string{s.name}, s.aliases...)...)
		}
		if near := nearest(args[0], names); near != "" {
			return scheme{}, Usagef("unknown scheme %q; did you mean %s? (want one of %s)", args[0], near, schemeNames())
		}
		return scheme{}, Usagef("unknown scheme %q (want one of %s)", args[0], schemeNames())
	}
	return s, nil
}
