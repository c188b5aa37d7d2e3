#!/bin/sh
# Turns on etcd's authentication for idkit's fleet, once, on the first
# start of the cluster (see README.md). Run it where etcdctl reaches the
# members, with the root client certificate:
#
#	ETCDCTL_ENDPOINTS=https://10.0.0.11:2379,https://10.0.0.12:2379,https://10.0.0.13:2379 \
#	ETCDCTL_CACERT=/etc/etcd/pki/ca.crt \
#	ETCDCTL_CERT=/etc/etcd/pki/root.crt ETCDCTL_KEY=/etc/etcd/pki/root.key \
#	sh etcd-auth.sh
#
# The users have no password: with ETCD_CLIENT_CERT_AUTH=true a verified
# client certificate's common name is the user, so root is whoever holds
# the certificate for CN=root, and idkit's servers (CN=idkit) may read and
# write the keys under idkit/ (serve's --etcd-prefix) and nothing else:
# not the cluster's membership, not another application's keys, not the
# users and roles.
set -eu
etcdctl user add root --no-password
etcdctl user grant-role root root
etcdctl role add idkit
etcdctl role grant-permission idkit readwrite idkit/ --prefix=true
etcdctl user add idkit --no-password
etcdctl user grant-role idkit idkit
etcdctl auth enable
