package launchlog

import (
	"bufio"
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// fsType returns the type of the file system that holds dir, as
// /proc/self/mountinfo names it ("ext4", "nfs4", "fuse.sshfs"), found by
// the mount id that statx(2) gives; or, on kernels before 5.8, the name
// of its statfs(2) magic number where that is a network file system.
func fsType(dir string) (string, error) {
	var stx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, dir, 0, unix.STATX_MNT_ID, &stx); err == nil && stx.Mask&unix.STATX_MNT_ID != 0 {
		if info, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
			if typ, ok := mountType(info, stx.Mnt_id); ok {
				return typ, nil
			}
		}
	}
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return "", err
	}
	return magicNames[int64(st.Type)], nil
}

// mountType finds the line of mount id in mountinfo and returns its file
// system type, the field after the " - " separator, with its subtype
// ("fuse.sshfs").
func mountType(mountinfo []byte, id uint64) (string, bool) {
	want := strconv.FormatUint(id, 10)
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	for sc.Scan() {
		fields := bytes.Fields(sc.Bytes())
		if len(fields) == 0 || string(fields[0]) != want {
			continue
		}
		for i, f := range fields {
			if string(f) == "-" && i+1 < len(fields) {
				return string(fields[i+1]), true
			}
		}
	}
	return "", false
}

// magicNames names the statfs magic numbers of network file systems.
var magicNames = map[int64]string{
	0x6969:     "nfs",
	0x517b:     "smbfs",
	0xff534d42: "cifs",
	0xfe534d42: "smb3",
	0x564c:     "ncpfs",
	0x5346414f: "afs",
	0x6b414653: "afs",
	0x73757245: "coda",
	0x00c36400: "ceph",
	0x0bd00bd0: "lustre",
	0x47504653: "gpfs",
}
