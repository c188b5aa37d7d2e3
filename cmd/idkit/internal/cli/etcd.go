package cli

import (
	"flag"
	"strings"
	"time"
)

// The environment variables that stand for the etcd flags, named as
// etcdctl's ETCDCTL_* are. A flag given on the command line wins over its
// variable. The password has a variable and a file, never a flag: a
// command line is visible to every user of the host.
const (
	EnvEtcdEndpoints   = "IDKIT_ETCD_ENDPOINTS"
	EnvEtcdCACert      = "IDKIT_ETCD_CACERT"
	EnvEtcdCert        = "IDKIT_ETCD_CERT"
	EnvEtcdKey         = "IDKIT_ETCD_KEY"
	EnvEtcdUser        = "IDKIT_ETCD_USER"
	EnvEtcdPassword    = "IDKIT_ETCD_PASSWORD"
	EnvEtcdDialTimeout = "IDKIT_ETCD_DIAL_TIMEOUT"
)

// etcdHelp is the help of the flags that say how to reach etcd, which
// every command that takes --etcd prints before its examples.
const etcdHelp = `
Reaching a protected etcd, with --etcd: each flag falls back on the
variable after it, and wins over it.

	--etcd ENDPOINTS           $IDKIT_ETCD_ENDPOINTS (https://host:port for TLS)
	--etcd-cacert FILE         $IDKIT_ETCD_CACERT: PEM CAs of etcd's certificate
	--etcd-cert FILE           $IDKIT_ETCD_CERT: PEM client certificate
	--etcd-key FILE            $IDKIT_ETCD_KEY: its PEM private key
	--etcd-user NAME           $IDKIT_ETCD_USER: the etcd user
	--etcd-password-file FILE  the user's password, the file's first line, or
	                           $IDKIT_ETCD_PASSWORD (never a flag's value)
	--etcd-dial-timeout D      $IDKIT_ETCD_DIAL_TIMEOUT: how long to wait for
	                           etcd's first answer (default 5s)

A wrong CA, a missing or refused client certificate or a bad password ends
the command within the dial timeout, with one line that names the problem.
`

// etcdCommands are the commands that take --etcd and print etcdHelp.
func etcdCommands() []*Command {
	return []*Command{cmdNew, cmdInspect, cmdLaunch, cmdNodes, cmdServe}
}

func init() {
	for _, cmd := range etcdCommands() {
		cmd.Long = withEtcdHelp(cmd.Long)
	}
}

// withEtcdHelp returns the help text long with etcdHelp before its
// examples.
func withEtcdHelp(long string) string {
	const examples = "\nExamples:\n"
	if i := strings.LastIndex(long, examples); i >= 0 {
		return long[:i] + etcdHelp + long[i:]
	}
	return long + etcdHelp
}

// etcdFlags are the flags that say how to reach etcd: its CAs, a client
// certificate, a user and the dial timeout. Each falls back on its
// environment variable.
type EtcdFlags struct {
	FS                                    *flag.FlagSet
	CACert, Cert, Key, User, PasswordFile *string
	DialTimeout                           *time.Duration
}

// AddEtcdFlags defines the flags that say how to reach etcd on fs.
func AddEtcdFlags(fs *flag.FlagSet) *EtcdFlags {
	return &EtcdFlags{
		FS:           fs,
		CACert:       fs.String("etcd-cacert", "", "PEM CA certificates that sign etcd's certificate (or $"+EnvEtcdCACert+")"),
		Cert:         fs.String("etcd-cert", "", "PEM client certificate for etcd (or $"+EnvEtcdCert+")"),
		Key:          fs.String("etcd-key", "", "PEM private key of --etcd-cert (or $"+EnvEtcdKey+")"),
		User:         fs.String("etcd-user", "", "etcd user name (or $"+EnvEtcdUser+")"),
		PasswordFile: fs.String("etcd-password-file", "", "file whose first line is the etcd user's password (or $"+EnvEtcdPassword+" holds it)"),
		DialTimeout:  fs.Duration("etcd-dial-timeout", EtcdTimeout, "how long to wait for etcd to answer (or $"+EnvEtcdDialTimeout+")"),
	}
}

// DefaultEtcdPrefix is the default of --etcd-prefix: fleet.DefaultPrefix,
// which idkit does not link.
const DefaultEtcdPrefix = "idkit/"
