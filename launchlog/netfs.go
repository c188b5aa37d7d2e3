package launchlog

import (
	"fmt"
	"path/filepath"
	"strings"
)

// networkFS lists file system types, as /proc/self/mountinfo names them,
// whose file locks do not reliably reach other hosts or may be lost
// (NFS, SMB and the cluster and FUSE network file systems), or that mean
// the log may be shared by hosts that cannot see each other's locks.
var networkFS = map[string]bool{
	"nfs": true, "nfs4": true, "cifs": true, "smb3": true, "smbfs": true, "ncpfs": true,
	"afs": true, "coda": true, "ceph": true, "glusterfs": true, "lustre": true, "gpfs": true,
	"beegfs": true, "orangefs": true, "pvfs2": true, "davfs": true,
	"fuse.sshfs": true, "fuse.glusterfs": true, "fuse.ceph-fuse": true, "fuse.s3fs": true,
	"fuse.gcsfuse": true, "fuse.rclone": true, "fuse.juicefs": true, "fuse.mfs": true,
	"fuse.lizardfs": true, "fuse.seaweedfs": true, "fuse.goofys": true, "fuse.davfs": true,
	"fuse.smbnetfs": true, "fuse.curlftpfs": true, "fuse.gvfsd-fuse": true,
}

// checkLocalFS refuses a log whose directory is on a network file system,
// with ErrNetworkFS naming the type.
func checkLocalFS(path string) error {
	dir := filepath.Dir(path)
	typ, err := fsType(dir)
	if err != nil || !isNetworkFS(typ) {
		return nil // an unknown type is taken for a local one
	}
	return fmt.Errorf("%w: %s is on %s, where a file lock may not reach the other hosts that share the file, so a node could be held twice; keep the launch log on a local disk, or claim nodes in etcd", ErrNetworkFS, path, typ)
}

func isNetworkFS(typ string) bool {
	return networkFS[typ] || strings.HasPrefix(typ, "nfs")
}
