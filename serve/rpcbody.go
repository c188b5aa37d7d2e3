package serve

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/idkit/idkit/proto/idkit/v1/idkitv1connect"
)

// The work an RPC costs before its handler runs is bounded: a call to
// idkit.v1.IDService without a valid credential is refused before its
// body is read; a unary call's body is read up to rpcMaxWire and its
// message, inflated if compressed, up to rpcMaxRequest, counted after
// inflation, or it is refused with InvalidArgument (HTTP 400, not 429); a
// stream (reflection, health's Watch) is read up to rpcMaxStream in all,
// and each of its messages inflates up to rpcMaxRequest.
const (
	rpcMaxWire   = rpcMaxRequest + 1<<10 // a message, its envelope, and gzip's growth of an incompressible one
	rpcMaxStream = 1 << 20
)

// rpcUnary are the unary procedures, whose whole body is one message.
var rpcUnary = map[string]bool{
	idkitv1connect.IDServiceNextProcedure:           true,
	idkitv1connect.IDServiceInspectProcedure:        true,
	"/" + grpchealth.HealthV1ServiceName + "/Check": true,
}

// needsCredential reports whether an RPC at path needs a token or a client
// certificate: idkit.v1.IDService's do, health and reflection do not.
func needsCredential(path string) bool {
	return strings.HasPrefix(path, "/"+idkitv1connect.IDServiceName+"/")
}

// answerBeforeBody lets the answer to a request refused before its body
// is read (no credential, or a route that takes no body) go out at once,
// by closing an HTTP/1.1 connection after it. Otherwise the server would
// read what is left of the body before it writes the answer, to keep the
// connection, and a client that announces a body and never sends it
// would hold the answer until the read timeout. (Full duplex would keep
// the connection, but then net/http may panic as it reads the next
// request: golang/go#68560. HTTP/2 answers a stream at once anyway, and
// there Connection: close would end every stream of the connection.)
func answerBeforeBody(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor == 1 && r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
	}
}

// errTooLarge is the answer to a request message over rpcMaxRequest.
var errTooLarge = fmt.Errorf("the request message is larger than %d bytes (after decompression)", rpcMaxRequest)

// boundBody reads the body of a unary RPC, checks that its message is no
// larger than rpcMaxRequest once inflated, and puts the bytes read back
// for the handler; a stream's body is only capped. It returns an
// InvalidArgument error for a message too large.
func (s *Server) boundBody(w http.ResponseWriter, r *http.Request) error {
	if !rpcUnary[r.URL.Path] {
		r.Body = http.MaxBytesReader(w, r.Body, rpcMaxStream)
		return nil
	}
	if r.Method == http.MethodGet { // Connect's GET: the message in the query
		q := r.URL.Query()
		msg := []byte(q.Get("message"))
		if q.Get("base64") == "1" {
			var err error
			if msg, err = base64.RawURLEncoding.DecodeString(strings.TrimRight(string(msg), "=")); err != nil {
				return connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("message: %w", err))
			}
		}
		return s.checkMessage(msg, q.Get("compression"))
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, rpcMaxWire+1))
	if err != nil {
		return connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("reading the request: %w", err))
	}
	if len(b) > rpcMaxWire {
		return connect.NewError(connect.CodeInvalidArgument, errTooLarge)
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	ctype := r.Header.Get("Content-Type")
	if !strings.HasPrefix(ctype, "application/grpc") && !strings.HasPrefix(ctype, "application/connect+") {
		return s.checkMessage(b, r.Header.Get("Content-Encoding")) // Connect's unary POST
	}
	// gRPC, gRPC-Web and Connect's streaming framing: envelopes of a flags
	// byte (1: compressed), a length and a message.
	encoding := r.Header.Get("Grpc-Encoding")
	if strings.HasPrefix(ctype, "application/connect+") {
		encoding = r.Header.Get("Connect-Content-Encoding")
	}
	for len(b) >= 5 {
		flags, n := b[0], binary.BigEndian.Uint32(b[1:5])
		if uint64(n) > uint64(len(b)-5) {
			return nil // a truncated envelope: the handler says so
		}
		msg := b[5 : 5+n]
		b = b[5+n:]
		if flags&0x80 != 0 {
			continue // gRPC-Web's trailers, or Connect's end of stream
		}
		enc := "identity"
		if flags&1 != 0 {
			enc = encoding
		}
		if err := s.checkMessage(msg, enc); err != nil {
			return err
		}
	}
	return nil
}

// checkMessage checks that msg, compressed with encoding, is no larger
// than rpcMaxRequest inflated, inflating at most that much. An encoding
// other than gzip is left for the handler to refuse.
func (s *Server) checkMessage(msg []byte, encoding string) error {
	if encoding != "gzip" {
		if len(msg) > rpcMaxRequest {
			return connect.NewError(connect.CodeInvalidArgument, errTooLarge)
		}
		return nil
	}
	d := &cappedGzip{inflated: s.m.inflated}
	if err := d.Reset(bytes.NewReader(msg)); err != nil {
		return connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("gzip: %w", err))
	}
	_, err := io.Copy(io.Discard, d)
	switch {
	case errors.Is(err, errTooLarge):
		return connect.NewError(connect.CodeInvalidArgument, errTooLarge)
	case err != nil:
		return connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("gzip: %w", err))
	}
	return nil
}

// cappedGzip is the gzip decompressor of the RPC handlers: it inflates no
// more than rpcMaxRequest bytes of a message (and one more to tell that
// there are more), then fails, where a plain one would inflate all of a
// bomb to report its size. It counts what it inflates.
type cappedGzip struct {
	zr       *gzip.Reader
	n        int
	inflated prometheus.Counter
}

func (d *cappedGzip) Read(p []byte) (int, error) {
	if d.n > rpcMaxRequest {
		return 0, errTooLarge
	}
	if len(p) > rpcMaxRequest+1-d.n {
		p = p[:rpcMaxRequest+1-d.n]
	}
	n, err := d.zr.Read(p)
	d.n += n
	d.inflated.Add(float64(n))
	return n, err
}

func (d *cappedGzip) Reset(r io.Reader) error {
	d.n = 0
	if d.zr == nil {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return err
		}
		d.zr = zr
		return nil
	}
	return d.zr.Reset(r)
}

func (d *cappedGzip) Close() error {
	if d.zr == nil {
		return nil
	}
	return d.zr.Close()
}
