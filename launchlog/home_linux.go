package launchlog

import (
	"os"

	"golang.org/x/sys/unix"
)

// stampAttr is the extended attribute that stamps a log file with the
// identity of its log and its count of writes.
const stampAttr = "user.idkit.log"

// placeOf names the file f is open on by its file system's type and id
// and its inode. The id is the one statfs gives, which most file systems
// derive from their UUID (ext4, btrfs), so that it survives a reboot that
// numbers the devices anew. FUSE file systems give none (0), and the
// device number of a mount changes with each mount, so there the type
// and the inode alone name the file.
func placeOf(f *os.File) (place, bool) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return place{}, false
	}
	var fs unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &fs); err != nil {
		return place{}, false
	}
	id := uint64(uint32(fs.Fsid.Val[0]))<<32 | uint64(uint32(fs.Fsid.Val[1]))
	return place{FSType: uint64(fs.Type), FSID: id, Inode: st.Ino}, true
}

// readStamp reads f's stamp, if it has one.
func readStamp(f *os.File) (stamp, bool) {
	buf := make([]byte, 64)
	n, err := unix.Fgetxattr(int(f.Fd()), stampAttr, buf)
	if err != nil {
		return stamp{}, false
	}
	return decodeStamp(buf[:n])
}

// writeStamp stamps f with s. A file system without extended attributes
// keeps no stamp: errNoStamp, which the caller passes over.
func writeStamp(f *os.File, s stamp) error {
	err := unix.Fsetxattr(int(f.Fd()), stampAttr, s.encode(), 0)
	if err == unix.ENOTSUP || err == unix.EOPNOTSUPP {
		return errNoStamp
	}
	return err
}
