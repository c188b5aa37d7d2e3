package report

import (
	"github.com/idkit/idkit/compare/internal/engine"
)

// EngineTitles names the server engines in the tables' titles.
var EngineTitles = map[string]string{engine.Postgres: "POSTGRESQL", engine.MySQL: "INNODB", engine.MyRocks: "MYROCKS"}
