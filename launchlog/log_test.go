package launchlog

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/idkit/idkit/clock"
	idstore "github.com/idkit/idkit/store"
)

var epoch = time.Date(2025, 11, 21, 9, 30, 0, 123456789, time.UTC)

// newLog returns a Log on a fresh file in a temporary directory, on a fake
// clock reading epoch.
func newLog(t testing.TB) *Log {
	t.Helper()
	l, err := New(Options{Path: filepath.Join(t.TempDir(), "launch.db"), Clock: clock.NewFake(epoch)})
	require.NoError(t, err)
	return l
}

// reopen returns a second handle on l's file, as another run would.
func reopen(t testing.TB, l *Log) *Log {
	t.Helper()
	l2, err := New(Options{Path: l.path, Clock: l.clock})
	require.NoError(t, err)
	return l2
}

func TestNewOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		o    Options
		want string // substring of the error; empty for success
	}{
		{"ok", Options{Path: "x.db"}, ""},
		{"empty path", Options{}, "Options.Path is empty"},
		{"negative timeout", Options{Path: "x.db", Timeout: -time.Second}, "Options.Timeout = -1s, want > 0"},
		{"mode with type bits", Options{Path: "x.db", Mode: fs.ModeDir | 0o700}, "Options.Mode = drwx------, want permission bits only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l, err := New(tt.o)
			if tt.want == "" {
				require.NoError(t, err)
				assert.Equal(t, DefaultTimeout, l.timeout)
				assert.Equal(t, DefaultMode, l.mode)
				assert.NotNil(t, l.clock)
				assert.Equal(t, tt.o.Path, l.Path())
				return
			}
			assert.ErrorIs(t, err, ErrInvalid)
			assert.ErrorContains(t, err, tt.want)
			assert.Nil(t, l)
		})
	}
}

func TestNewFileMode(t *testing.T) {
	t.Parallel()
	for _, mode := range []fs.FileMode{0, 0o640} {
		path := filepath.Join(t.TempDir(), "launch.db")
		l, err := New(Options{Path: path, Mode: mode})
		require.NoError(t, err)
		_, err = l.NextGenerator(context.Background(), 1)
		require.NoError(t, err)
		fi, err := os.Stat(path)
		require.NoError(t, err)
		want := mode
		if want == 0 {
			want = DefaultMode
		}
		assert.Equal(t, want&^umask(t), fi.Mode().Perm(), "mode %v", mode)
	}
}

// umask returns the bits the process umask clears.
func umask(t *testing.T) fs.FileMode {
	path := filepath.Join(t.TempDir(), "probe")
	require.NoError(t, os.WriteFile(path, nil, 0o777))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return 0o777 &^ fi.Mode().Perm()
}

func TestLaunches(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(epoch)
	path := filepath.Join(t.TempDir(), "launch.db")
	l, err := New(Options{Path: path, Clock: fake})
	require.NoError(t, err)

	_, err = l.Current(context.Background())
	assert.ErrorIs(t, err, ErrNoLaunch, "empty log")
	list, err := l.List(context.Background())
	require.NoError(t, err)
	assert.Empty(t, list)
	_, err = os.Stat(path)
	assert.ErrorIs(t, err, fs.ErrNotExist, "reads must not create the file")

	infos := []idstore.Info{
		{Ticket: "REL-1", By: "ann", Note: "first"},
		{Ticket: "REL-2", By: "bob"},
		{Note: "hotfix \"quoted\" ✓"},
	}
	var want []idstore.Launch
	for i, info := range infos {
		got, err := l.Begin(context.Background(), info)
		require.NoError(t, err)
		w := idstore.Launch{ID: i + 1, StartedAt: fake.Now(), Ticket: info.Ticket, By: info.By, Note: info.Note}
		assert.Equal(t, w, got)
		want = append(want, w)
		fake.Advance(time.Hour)
	}

	// A second handle, as another process or a later run, sees the same.
	l2 := reopen(t, l)
	list, err = l2.List(context.Background())
	require.NoError(t, err)
	assert.Equal(t, want, list)
	cur, err := l2.Current(context.Background())
	require.NoError(t, err)
	assert.Equal(t, want[2], cur)
	for _, w := range want {
		got, err := l2.Get(context.Background(), w.ID)
		require.NoError(t, err)
		assert.Equal(t, w, got)
		assert.Equal(t, time.UTC, got.StartedAt.Location())
	}

	_, err = l2.Get(context.Background(), 4)
	assert.ErrorIs(t, err, ErrNoLaunch)
	assert.ErrorContains(t, err, "4")
	for _, id := range []int{0, -1, MaxLaunch + 1} {
		_, err = l2.Get(context.Background(), id)
		assert.ErrorIs(t, err, ErrInvalid, "Get(%d)", id)
		assert.ErrorContains(t, err, "want 1..=99999")
	}
}

func TestBeginExhausted(t *testing.T) {
	t.Parallel()
	l := newLog(t)
	_, err := l.Begin(context.Background(), idstore.Info{Note: "one"})
	require.NoError(t, err)
	setSequence(t, l, MaxLaunch-1)

	got, err := l.Begin(context.Background(), idstore.Info{Note: "last"})
	require.NoError(t, err)
	assert.Equal(t, MaxLaunch, got.ID)
	for range 2 {
		_, err = l.Begin(context.Background(), idstore.Info{Note: "too many"})
		assert.ErrorIs(t, err, ErrLaunchesExhausted)
	}
	list, err := l.List(context.Background())
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, []int{1, MaxLaunch}, []int{list[0].ID, list[1].ID})
}

// setSequence sets the last launch id handed out, as if that many launches
// had begun.
func setSequence(t *testing.T, l *Log, seq uint64) {
	t.Helper()
	require.NoError(t, l.update(func(tx *bbolt.Tx) error {
		b, err := createBucket(tx, launchesBucket)
		if err != nil {
			return err
		}
		return b.SetSequence(seq)
	}))
}

func TestNextGenerator(t *testing.T) {
	t.Parallel()
	l := newLog(t)
	steps := []struct {
		launch, want int
	}{
		{1, 0}, {1, 1}, {2, 0}, {1, 2}, {0, 0}, {MaxLaunch, 0}, {2, 1}, {0, 1},
	}
	for _, s := range steps {
		got, err := l.NextGenerator(context.Background(), s.launch)
		require.NoError(t, err)
		assert.Equal(t, s.want, got, "launch %d", s.launch)
	}
	// Another handle continues where this one stopped.
	got, err := reopen(t, l).NextGenerator(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, 3, got)

	for _, launch := range []int{-1, MaxLaunch + 1} {
		_, err := l.NextGenerator(context.Background(), launch)
		assert.ErrorIs(t, err, ErrInvalid, "launch %d", launch)
		assert.ErrorContains(t, err, "want 0..=99999")
	}
}

func TestNextGeneratorExhausted(t *testing.T) {
	t.Parallel()
	l := newLog(t)
	setGenerator(t, l, 7, []byte{0, 1, 0x86, 0x9f}) // 99_999
	got, err := l.NextGenerator(context.Background(), 7)
	require.NoError(t, err)
	assert.Equal(t, MaxGenerator, got)
	for range 2 {
		_, err = l.NextGenerator(context.Background(), 7)
		assert.ErrorIs(t, err, ErrGeneratorsExhausted)
		assert.ErrorContains(t, err, "launch 7")
	}
	got, err = l.NextGenerator(context.Background(), 8)
	require.NoError(t, err, "other launches are not affected")
	assert.Equal(t, 0, got)
}

// setGenerator stores v as the next generator id of launch.
func setGenerator(t *testing.T, l *Log, launch int, v []byte) {
	t.Helper()
	require.NoError(t, l.update(func(tx *bbolt.Tx) error {
		b, err := createBucket(tx, generatorsBucket)
		if err != nil {
			return err
		}
		return putSealed(b, idKey(launch), v)
	}))
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))
	tests := []struct {
		name   string
		path   string
		target error
		want   string
	}{
		{"missing directory", filepath.Join(dir, "nope", "launch.db"), fs.ErrNotExist, "directory " + filepath.Join(dir, "nope")},
		{"path is a directory", dir, nil, "is a directory"},
		{"parent is a file", filepath.Join(file, "launch.db"), nil, "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l, err := New(Options{Path: tt.path})
			require.NoError(t, err)
			for _, op := range ops(l) {
				err := op.call()
				assert.ErrorIs(t, err, ErrOpen, op.name)
				if tt.target != nil {
					assert.ErrorIs(t, err, tt.target, op.name)
				}
				assert.ErrorContains(t, err, tt.path, op.name)
				assert.ErrorContains(t, err, tt.want, op.name)
			}
		})
	}
}

func TestUnwritable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	require.NoError(t, os.Mkdir(ro, 0o500))
	t.Cleanup(func() { _ = os.Chmod(ro, 0o700) })
	roFile := filepath.Join(dir, "ro.db")
	l, err := New(Options{Path: roFile})
	require.NoError(t, err)
	_, err = l.NextGenerator(context.Background(), 1)
	require.NoError(t, err)
	require.NoError(t, os.Chmod(roFile, 0o400))

	tests := []struct {
		name string
		path string
		skip string // why the case cannot run here, if it cannot
	}{
		{"read-only directory", filepath.Join(ro, "launch.db"), rootSkip()},
		{"read-only file", roFile, rootSkip()},
		// sysfs refuses new files even to root.
		{"sysfs", "/sys/idkit-launch.db", linuxSkip()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.skip != "" {
				t.Skip(tt.skip)
			}
			l, err := New(Options{Path: tt.path})
			require.NoError(t, err)
			_, err = l.NextGenerator(context.Background(), 1)
			assert.ErrorIs(t, err, ErrOpen)
			assert.ErrorIs(t, err, fs.ErrPermission)
			assert.ErrorContains(t, err, tt.path)
		})
	}
}

func rootSkip() string {
	if os.Geteuid() == 0 {
		return "root ignores file permissions"
	}
	return ""
}

func linuxSkip() string {
	if fi, err := os.Stat("/sys/kernel"); runtime.GOOS != "linux" || err != nil || !fi.IsDir() {
		return "needs Linux sysfs at /sys"
	}
	return ""
}

// op is one method of a Log, for tests that call them all.
type op struct {
	name  string
	write bool
	call  func() error
}

func ops(l *Log) []op {
	return []op{
		{"Begin", true, func() error { _, err := l.Begin(context.Background(), idstore.Info{}); return err }},
		{"NextGenerator", true, func() error { _, err := l.NextGenerator(context.Background(), 1); return err }},
		{"AdvanceHighWater", true, func() error { _, err := l.AdvanceHighWater(context.Background(), "k", epoch); return err }},
		{"ReserveBlock", true, func() error { _, err := l.ReserveBlock(context.Background(), "k", 10); return err }},
		{"Current", false, func() error { _, err := l.Current(context.Background()); return err }},
		{"Get", false, func() error { _, err := l.Get(context.Background(), 1); return err }},
		{"List", false, func() error { _, err := l.List(context.Background()); return err }},
		{"HighWater", false, func() error { _, err := l.HighWater(context.Background(), "k"); return err }},
	}
}

func TestInProcessTurns(t *testing.T) {
	t.Parallel()
	// Two handles on one path share the process's turn, so that neither
	// polls the file lock; goroutines on both finish with distinct values.
	l := newLog(t)
	l2 := reopen(t, l)
	const workers, calls = 8, 10
	got := make(chan int, workers*calls)
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			h := l
			if w%2 == 1 {
				h = l2
			}
			for range calls {
				v, err := h.NextGenerator(context.Background(), 3)
				if err != nil {
					errs <- err
					return
				}
				got <- v
			}
			errs <- nil
		}()
	}
	for range workers {
		require.NoError(t, <-errs)
	}
	close(got)
	seen := make(map[int]bool)
	for v := range got {
		assert.False(t, seen[v], "value %d handed out twice", v)
		seen[v] = true
	}
	assert.Len(t, seen, workers*calls)
	for v := range workers * calls {
		assert.True(t, seen[v], "value %d missing", v)
	}
}

func TestGateTimeout(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "launch.db")
	l, err := New(Options{Path: path, Timeout: 20 * time.Millisecond})
	require.NoError(t, err)
	l.gate <- struct{}{} // another operation of this process holds the turn
	defer func() { <-l.gate }()
	_, err = l.NextGenerator(context.Background(), 1)
	assert.ErrorIs(t, err, ErrLocked)
	assert.ErrorIs(t, err, berrors.ErrTimeout)
}

func TestPanicRecovered(t *testing.T) {
	t.Parallel()
	l := newLog(t)
	_, err := l.NextGenerator(context.Background(), 1)
	require.NoError(t, err)
	for _, write := range []bool{true, false} {
		err := l.runOn(write, nil, func(*bbolt.Tx) error { panic("damaged page") })
		assert.ErrorIs(t, err, ErrCorrupt)
		assert.ErrorContains(t, err, "panic while reading it: damaged page")
	}
	// The file was closed and unlocked: another handle works at once.
	l2, err := New(Options{Path: l.path, Timeout: 50 * time.Millisecond})
	require.NoError(t, err)
	got, err := l2.NextGenerator(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, 1, got)
}
