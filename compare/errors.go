package compare

import (
	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"

	"github.com/idkit/idkit/compare/internal/engine/spider"
	"github.com/idkit/idkit/compare/internal/report"
	"github.com/idkit/idkit/compare/internal/scheme"
)

var (
	// ErrUnknownScheme reports a scheme name that is not in the registry.
	ErrUnknownScheme = scheme.ErrUnknownScheme
	// ErrOptions reports an option outside its allowed range.
	ErrOptions = report.ErrOptions
	// ErrKey reports a generator that returned a key of the wrong length,
	// which would make the measurements meaningless.
	ErrKey = scheme.ErrKey
	// ErrNoSpace reports a directory with less free space than a run's
	// largest load needs.
	ErrNoSpace = errkind.New(idkit.ErrUnavailable, "compare: not enough free disk")
	// ErrEmptyReport reports a report with no schemes to show.
	ErrEmptyReport = report.ErrEmptyReport
	// ErrSpiderMissing reports a run with Spider on a machine without
	// MariaDB's server or its Spider plugin.
	ErrSpiderMissing = spider.ErrMissing
)
