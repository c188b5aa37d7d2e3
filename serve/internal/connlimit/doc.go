// Package connlimit keeps a listener's connections within their limits:
// at most Max open, PerClient from one address and Busy of them in a
// request; a connection that has not sent a whole request within Opening
// is closed, the longest-opening first when the cap is reached; deadlines
// are kept lazily by one sweeper; and HTTP/2 streams are shared among the
// clients (Streams). It imports nothing of serve.
package connlimit
