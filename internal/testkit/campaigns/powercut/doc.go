// Package powercut holds idkit's power-loss and disk-fault campaigns, as
// tests, on the faulty file system of package faultfs: generators and
// block stores on a bbolt launch log whose unsynced writes a power cut
// throws away, and disks that fill up or fail. It has no code of its own;
// docs/reliability.md lists the campaigns, how to run them and their
// results.
package powercut
