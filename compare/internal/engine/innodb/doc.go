// Package innodb is compare's MariaDB/MySQL engine, InnoDB: the loads into
// a database of the run's own, their pages, redo and page splits; the
// reads back; the concurrent loads; the rights a run needs; and a --like
// run's copies of the user's table. Package myrocks, on the same server,
// builds on its connections, rights and copies. It imports package engine
// alone of compare.
package innodb
