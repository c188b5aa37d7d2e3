package otelid

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"

	"github.com/idkit/idkit/traceid"
)

// HandlerOptions configure a Handler.
type HandlerOptions struct {
	// Key is the key of the TraceId attribute. Empty means "id". A fallback
	// stamp also carries Key+"_error".
	Key string
	// Number makes the stamp an integer attribute instead of a decimal
	// string. It saves formatting and one allocation a record, but JSON
	// readers that parse numbers as doubles (JavaScript, many log stores)
	// round TraceIds, which exceed 2^53. False means a string.
	Number bool
}

// Handler is a slog.Handler that adds a TraceId attribute to every record
// and passes it on to another handler. It is safe for concurrent use if the
// handler it wraps is.
//
// Each record takes a new ID from the traceid.Generator in Handle, on its
// per-core path (traceid.PerCore.TryNext), so that logging on every core
// at once does not contend on the generator, and a log call never waits:
// where the generator would wait for the next second or for its store,
// the record gets a fallback stamp, as when the generator fails. IDs are
// unique and ordered by second, and the records of one goroutine get
// increasing IDs while it stays on one processor. A record that Enabled
// filters out takes none. The attribute is a decimal string (a number
// with HandlerOptions.Number), added after the record's own attributes,
// and always at the top level: groups opened by WithGroup hold the
// record's attributes but not the stamp. A record's own attribute with
// the same key is left alone.
type Handler struct {
	next     slog.Handler // the wrapped handler, with the attrs given before any group
	src      *source
	key      string
	errorKey string
	number   bool
	groups   []group // opened by WithGroup, outermost first
}

// group is a group opened by WithGroup and the attributes added inside it.
type group struct {
	name  string
	attrs []slog.Attr
}

var _ slog.Handler = (*Handler)(nil)

// NewHandler returns a Handler that stamps records with TraceIds from g and
// passes them on to next. Neither may be nil. It waits, under ctx, for g's
// first TraceId (a new generator's first second), so that the first record
// gets one: Handle never waits.
func NewHandler(ctx context.Context, next slog.Handler, g *traceid.Generator, o HandlerOptions) (*Handler, error) {
	if g == nil {
		return nil, fmt.Errorf("%w: NewHandler needs a *traceid.Generator, got nil", ErrNil)
	}
	if next == nil {
		return nil, fmt.Errorf("%w: NewHandler needs a slog.Handler to wrap, got nil", ErrNil)
	}
	if o.Key == "" {
		o.Key = "id"
	}
	src, err := newSource(ctx, g, nil)
	if err != nil {
		return nil, err
	}
	return &Handler{next: next, src: src, key: o.Key, errorKey: o.Key + "_error", number: o.Number}, nil
}

// Enabled reports whether the wrapped handler handles records at level.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

// Handle stamps r with a new TraceId and passes it on.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	id, err := h.src.ids.TryNext()
	v := h.src.value(id, err)
	if err != nil || len(h.groups) != 0 {
		return h.handle(ctx, r, v, err)
	}
	if h.number {
		r.AddAttrs(slog.Attr{Key: h.key, Value: slog.Uint64Value(v)})
	} else {
		r.AddAttrs(slog.Attr{Key: h.key, Value: slog.StringValue(traceid.ID(v).String())})
	}
	return h.next.Handle(ctx, r)
}

// handle is the slow path of Handle: a fallback stamp, or groups to nest
// the record's attributes in.
func (h *Handler) handle(ctx context.Context, r slog.Record, v uint64, err error) error {
	stamp := []slog.Attr{slog.String(h.key, strconv.FormatUint(v, 10))}
	switch {
	case h.number:
		stamp[0] = slog.Uint64(h.key, v)
	case err == nil:
		stamp[0] = slog.String(h.key, traceid.ID(v).String())
	}
	if err != nil {
		stamp = append(stamp, slog.String(h.errorKey, err.Error()))
	}
	if len(h.groups) == 0 {
		r.AddAttrs(stamp...)
		return h.next.Handle(ctx, r)
	}
	// Nest the record's attributes in the groups by hand, so that the
	// stamp can stay outside them.
	attrs := make([]slog.Attr, 0, r.NumAttrs())
	r.Attrs(func(a slog.Attr) bool {
		attrs = append(attrs, a)
		return true
	})
	for i := len(h.groups) - 1; i >= 0; i-- {
		g := h.groups[i]
		inner := append(slices.Clip(g.attrs), attrs...)
		attrs = []slog.Attr{{Key: g.name, Value: slog.GroupValue(inner...)}}
	}
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	out.AddAttrs(attrs...)
	out.AddAttrs(stamp...)
	return h.next.Handle(ctx, out)
}

// WithAttrs returns a Handler whose records also carry attrs, inside the
// groups opened so far.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	c := *h
	if len(h.groups) == 0 {
		c.next = h.next.WithAttrs(attrs)
		return &c
	}
	c.groups = slices.Clone(h.groups)
	last := &c.groups[len(c.groups)-1]
	last.attrs = append(slices.Clip(last.attrs), attrs...)
	return &c
}

// WithGroup returns a Handler that puts the record's attributes, and those
// added later with WithAttrs, in group name. The stamp stays outside it.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.groups = append(slices.Clip(h.groups), group{name: name})
	return &c
}

// Stats returns the counts of events since the Handler was created; the
// Handlers derived from it by WithAttrs and WithGroup share them.
func (h *Handler) Stats() Stats { return h.src.stats() }
