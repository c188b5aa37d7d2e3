package serve

import (
	_ "embed"
	"net/http"
	"time"
)

// openAPI is the OpenAPI 3.1 document of the HTTP API, served at
// /openapi.json so that a client generator can read the API; a test
// checks real requests and responses against it.
//
//go:embed openapi.json
var openAPI []byte

// handleOpenAPI answers GET /openapi.json. It needs no token, as the
// document says nothing a client could not learn from the API itself.
func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	writeJSON(w, http.StatusOK, openAPI)
	s.m.done(r, "openapi", "", http.StatusOK, start)
}
