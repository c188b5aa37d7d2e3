package reload

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/idkit/idkit/clock"
)

// reloadInterval is how often, at most, the server looks at its TLS and
// token files for changes, on its clock.
const Interval = time.Second

// errNothingValid is the error of a file that was read but holds nothing
// the server can use: no token, no certificate.
var ErrNothingValid = errors.New("nothing valid")

// keptError is the error of a load that failed and left what the last
// load put in use (a certificate): it counts as a failed reload and is
// logged, but the server stays ready.
type KeptError struct{ Err error }

func (e KeptError) Error() string { return e.Err.Error() }
func (e KeptError) Unwrap() error { return e.Err }

// watched is a set of files (a token file; a certificate and its key; a
// CA bundle) read again when one of them changes, appears or goes. A
// reload fails closed: what the files no longer hold is dropped whatever
// else happened to them, so that a deleted, emptied or unreadable file
// leaves nothing of it in use, and a part that does not parse (a line, a
// PEM block) is skipped while the rest applies.
type Watched struct {
	Name   string // names the files in logs, readiness and metrics: "tokens", "certificate", "client_ca"
	paths  []string
	clk    clock.Clock
	logger *slog.Logger
	// load reads the files and puts what they hold in use, or, when they
	// hold nothing usable, puts nothing in use and returns why. skipped
	// lists the parts it left out, each naming where.
	load func() (skipped []string, err error)

	coarse clock.Coarse // clk's coarse view, for the check on every request
	looked atomic.Int64 // checked, in Unix ns on the coarse view, for that check

	mu      sync.Mutex
	checked time.Time // when the files were last looked at
	stamps  []stamp   // of paths, as last loaded
	err     error     // of the last load
	skipped int       // parts the last load left out
	results map[string]int
}

// stamp tells whether a file changed: its identity (device and inode),
// its change and modification times, its size, and a hash of its
// contents, or that it was missing. The change time cannot be set by a
// copy that keeps the modification time (cp -p, rsync -t), and the hash
// sees a rewrite of the same length within one tick of a coarse clock.
type stamp struct {
	present    bool
	dev, ino   uint64
	ctime, mod time.Time
	size       int64
	sum        [sha256.Size]byte
}

// maxHashed bounds the files whose contents a stamp hashes; a token file
// or a certificate is far smaller.
const maxHashed = 1 << 20

func stampOf(path string) stamp {
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{}
	}
	st := stamp{present: true, mod: fi.ModTime(), size: fi.Size()}
	st.dev, st.ino, st.ctime = FileID(fi)
	if fi.Mode().IsRegular() && fi.Size() <= maxHashed {
		if b, err := os.ReadFile(path); err == nil {
			st.sum = sha256.Sum256(b)
		}
	}
	return st
}

// newWatched loads the files once and returns them watched. A load that
// skips a part or fails is an error here: a server does not start on
// files it cannot use whole.
func NewWatched(name string, paths []string, clk clock.Clock, logger *slog.Logger, load func() ([]string, error)) (*Watched, error) {
	w := &Watched{Name: name, paths: paths, clk: clk, coarse: clock.CoarseOf(clk), logger: logger, load: load, results: make(map[string]int)}
	w.stamps = w.stat()
	skipped, err := load()
	switch {
	case len(skipped) == 1:
		return nil, errors.New(skipped[0])
	case len(skipped) > 1:
		return nil, fmt.Errorf("%s, and %d more parts", skipped[0], len(skipped)-1)
	}
	if err != nil {
		return nil, err
	}
	w.checked = clk.Now()
	w.looked.Store(w.coarse.UnixNano())
	w.results["ok"]++
	return w, nil
}

func (w *Watched) stat() []stamp {
	s := make([]stamp, len(w.paths))
	for i, p := range w.paths {
		s[i] = stampOf(p)
	}
	return s
}

// refresh reloads the files if one of them changed since the last load,
// looking at most once a reloadInterval. Between looks it costs a read of
// the coarse clock and no lock, as it runs for every request.
func (w *Watched) Refresh() {
	if d := w.coarse.UnixNano() - w.looked.Load(); d >= 0 && d < int64(Interval) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.clk.Now()
	if !w.checked.IsZero() && now.Sub(w.checked) < Interval && !now.Before(w.checked) {
		return
	}
	w.checked = now
	// The lock-free check lets requests by only once this look is over:
	// until then they wait on the lock, and so see what it loads.
	defer w.looked.Store(w.coarse.UnixNano())
	stamps := w.stat()
	changed := false
	for i := range stamps {
		if stamps[i] != w.stamps[i] {
			changed = true
		}
	}
	if !changed {
		return
	}
	w.stamps = stamps
	skipped, err := w.load()
	w.err, w.skipped = err, len(skipped)
	for _, s := range skipped {
		w.warn("serve: reload skipped a part; the others apply", "part", s)
	}
	var kept KeptError
	switch {
	case errors.As(err, &kept):
		w.results["failed"]++
		w.warn("serve: reload failed; what the files held before stays in use", "err", kept.Err)
	case err != nil:
		w.results["failed"]++
		w.warn("serve: reload found nothing valid; nothing from the file is in use", "err", err)
	case len(skipped) > 0:
		w.results["partial"]++
	default:
		w.results["ok"]++
		if w.logger != nil {
			w.logger.Info("serve: reloaded", "files", w.Name)
		}
	}
}

func (w *Watched) warn(msg string, args ...any) {
	if w.logger != nil {
		w.logger.Warn(msg, append([]any{"files", w.Name}, args...)...)
	}
}

// state refreshes the files and returns the last load's error, unless
// what was in use before stays in use.
func (w *Watched) State() error {
	w.Refresh()
	w.mu.Lock()
	defer w.mu.Unlock()
	var kept KeptError
	if errors.As(w.err, &kept) {
		return nil
	}
	return w.err
}

// publicReason says why a load failed in words that name no file.
func Reason(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "file missing, nothing in use"
	case errors.Is(err, ErrNothingValid):
		return "nothing valid in the file, nothing in use"
	default:
		return "file unreadable, nothing in use"
	}
}

var (
	reloadOKDesc = prometheus.NewDesc("idkit_config_reload_successful",
		"1 if the last load of the files applied whole, 0 if it skipped a part or failed (then nothing of a token file or CA bundle is in use, and a certificate's last good pair is).", []string{"files"}, nil)
	reloadSkippedDesc = prometheus.NewDesc("idkit_config_reload_skipped_parts",
		"Lines or PEM blocks the last load of the files skipped.", []string{"files"}, nil)
	reloadsDesc = prometheus.NewDesc("idkit_config_reloads_total",
		"Loads of the files, by result: ok, partial (a part skipped) or failed (nothing valid, nothing in use).", []string{"files", "result"}, nil)
)

// reloadCollector reports the watched files' loads.
type Collector struct{ Files []*Watched }

func (c Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- reloadOKDesc
	ch <- reloadSkippedDesc
	ch <- reloadsDesc
}

func (c Collector) Collect(ch chan<- prometheus.Metric) {
	for _, w := range c.Files {
		w.Refresh()
		w.mu.Lock()
		ok := 0.0
		if w.err == nil && w.skipped == 0 {
			ok = 1
		}
		ch <- prometheus.MustNewConstMetric(reloadOKDesc, prometheus.GaugeValue, ok, w.Name)
		ch <- prometheus.MustNewConstMetric(reloadSkippedDesc, prometheus.GaugeValue, float64(w.skipped), w.Name)
		for _, r := range []string{"ok", "partial", "failed"} {
			ch <- prometheus.MustNewConstMetric(reloadsDesc, prometheus.CounterValue, float64(w.results[r]), w.Name, r)
		}
		w.mu.Unlock()
	}
}
