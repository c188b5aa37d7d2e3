// Package myrocks is compare's LSM engine on a server, MariaDB's MyRocks:
// the loads into a column family of the run's own, the bytes RocksDB
// compacts and its reads. It imports packages engine and innodb (the
// MariaDB server they share) alone of compare.
package myrocks
