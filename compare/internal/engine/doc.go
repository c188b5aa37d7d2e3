// Package engine is the vocabulary that compare's engines share, at the
// bottom of compare: the Engine interface a database engine implements
// (Info, Load, Close; a server engine's Server, Throttled, ConcurrentLoader
// and Copier besides), a Load (a key set and how to insert it), the
// Figures an engine reports for it, the server plans a run makes (Target),
// the throttle, the concurrent loads and the --like table as read on its
// server (LikeTable, Source, Shape). Each engine is a package below it
// (bbolt, sqlite, pebble, postgres, innodb, myrocks); package engine
// imports none of them, nor the schemes, the report or compare itself.
package engine
