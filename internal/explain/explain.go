// Package explain turns the text of an ID into its parts: when, where and
// in what order it was made. "idkit inspect" prints the parts as text or
// JSON, and the server answers GET /v1/{scheme}/{id} with the same JSON, so
// that both read an ID the same way and agree byte for byte.
//
// Each scheme has one function taking the ID's text and what the ID alone
// does not say (the reference time of a TraceId, a snowflake layout, a
// launch log); an ID that does not parse is the scheme package's error,
// which names the input.
package explain

import (
	"encoding/json"
	"time"
)

// A Report is an explained ID: named values in order, the first two the
// scheme and the ID in its canonical form.
type Report struct {
	Fields []Field
}

// A Field is one named value of a report.
type Field struct {
	Name  string
	Value any // a string or an integer
}

// New returns a report of the ID id of scheme, with no parts yet.
func New(scheme, id string) *Report {
	return new(Report).Add("scheme", scheme).Add("id", id)
}

// Add appends a field and returns r.
func (r *Report) Add(name string, value any) *Report {
	r.Fields = append(r.Fields, Field{name, value})
	return r
}

// JSON returns the fields as one JSON object, in order, and a newline. An
// ID is a string in it (JavaScript loses integers above 2^53).
func (r *Report) JSON() []byte {
	b := []byte{'{'}
	for i, f := range r.Fields {
		if i > 0 {
			b = append(b, ',')
		}
		// Names are strings and values strings or integers, which
		// always encode.
		name, _ := json.Marshal(f.Name)
		value, _ := json.Marshal(f.Value)
		b = append(append(append(b, name...), ':'), value...)
	}
	return append(b, "}\n"...)
}

// FormatTime formats t as RFC 3339 in UTC, with as many fractional digits
// as it has: the form of every time in a report.
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
