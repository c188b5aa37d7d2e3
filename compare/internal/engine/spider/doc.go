// Package spider measures where inserts go when a table outgrows one
// server: a cluster of MariaDB servers the run starts on this machine (a
// Spider front and N InnoDB backends, Cluster), and a Spider table over
// them partitioned by range of the key or by its hash (Engine, one per
// Topology). Its figures are each shard's share of the inserts, over the
// load and over each tenth of it, the pages each shard wrote, the insert
// rate and batch latency through one connection and through several, and
// what a new shard or a range split would move (Moves). Model gives the
// same shares from the partition function alone, and every load checks
// that the shards hold what it says.
package spider
