#!/usr/bin/env bash
# compare-same.sh: does "idkit compare" report the same figures at two
# revisions? It builds idkit-full (and the light idkit beside it) at each,
# runs the default compare run with --json from each build, one after the
# other with the same environment, and compares the two JSON reports field
# for field with .ci/comparejson, which leaves out what changes from one
# run of the same build to the next (its header lists the rules and why):
# timings, the machine, server-wide counters (PostgreSQL's WAL position,
# InnoDB's pages written, redo and splits, MyRocks' log and compactions:
# other sessions and the servers' background work add to them), and the
# figures of the schemes whose keys differ from run to run (all but
# counter, decimalid and redis-incr), with the verdict's rankings built on
# them.
#
#   .ci/compare-same.sh BASE [HEAD] [-- COMPARE FLAGS...]
#
#   BASE, HEAD  git revisions; without HEAD, the working tree. A revision
#               is extracted with git archive into a temporary directory
#               (removed at exit): the working tree and the index are
#               left alone. The working tree is built where it is, and
#               both builds are made before either run, so an edit after
#               the builds changes neither.
#   FLAGS       passed to both runs of idkit-full compare, e.g. -n 20000
#               for a quicker run; none is the default run.
#
# The servers come from the environment, as .ci/servers.sh exports them
# (IDKIT_POSTGRES_DSN, IDKIT_MYSQL_DSN, IDKIT_REDIS_ADDR, and
# IDKIT_ETCD_ENDPOINTS if set); a server not named is skipped by both runs.
# Use servers nobody else uses meanwhile: PostgreSQL's pages dirtied,
# full-page images and WAL bytes are compared, and a CHECKPOINT of another
# session's during a load adds to them (the script prints the checkpoints
# each run saw, and says when they differ). On a 2-core machine a default
# run took 11 to 14 minutes per build with MyRocks (6.5 without), a run
# with -n 20000 3 to 4 minutes.
# The reports, tables and progress logs go to $COMPARE_SAME_OUT (default: a
# new directory under $TMPDIR, named at the end). Exits 0 when the reports
# are equal, 1 when they differ (every differing field is printed with
# both values), 2 on a usage, build or run error.
#
# Examples:
#   .ci/compare-same.sh c9c68e4 -- -n 20000
#   .ci/compare-same.sh c9c68e4 HEAD
set -euo pipefail

# One compound command: bash reads all of it before it runs, so that an edit
# of this file during a run (in a working tree being edited) cannot change
# the rest of the run.
{
usage() {
	sed -n 's/^#   \(\.ci\/compare-same\.sh BASE .*\)/usage: \1/p' "$0" >&2
	exit 2
}

root=$(cd "$(dirname "$0")/.." && pwd)
base="" head=""
flags=()
while [ $# -gt 0 ]; do
	case $1 in
	--) shift; flags=("$@"); break ;;
	-h | --help) usage ;;
	-*) echo "compare-same: $1: compare's flags go after --" >&2; usage ;;
	*)
		if [ -z "$base" ]; then base=$1
		elif [ -z "$head" ]; then head=$1
		else usage
		fi
		shift ;;
	esac
done
[ -n "$base" ] || usage

# resolve REV prints the commit REV names, or fails.
resolve() { git -C "$root" rev-parse --verify --quiet "$1^{commit}" || { echo "compare-same: $1: no such revision" >&2; exit 2; }; }
base_sha=$(resolve "$base")
head_sha="" head_name="working tree"
if [ -z "$head" ]; then
	# GIT_OPTIONAL_LOCKS=0: git status then leaves the index alone.
	head_name="working tree (HEAD $(git -C "$root" rev-parse --short HEAD), $(GIT_OPTIONAL_LOCKS=0 git -C "$root" status --porcelain | wc -l) paths changed or untracked)"
else
	head_sha=$(resolve "$head")
	head_name="$head ($head_sha)"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/compare-same.XXXXXX")
out=${COMPARE_SAME_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/compare-same-out.XXXXXX")}
mkdir -p "$out"
child=""
cleanup() {
	if [ -n "$child" ] && kill -0 "$child" 2>/dev/null; then
		# compare drops what it created on the servers when it stops.
		kill -TERM "$child" 2>/dev/null || true
		wait "$child" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'echo "compare-same: stopped" >&2; exit 130' INT
trap 'echo "compare-same: stopped" >&2; exit 143' TERM

# The comparison is built first, from this script's tree, so that a
# mistake in it shows before the long runs. It needs only the standard
# library: GOWORK=off keeps the other modules of the workspace out.
(cd "$root" && GOWORK=off nice -n 19 go build -buildvcs=false -o "$tmp/comparejson" ./.ci/comparejson)

# build NAME REV: builds idkit-full and idkit at REV ("" for the working
# tree) into $tmp/NAME. -buildvcs=false: the go command would otherwise
# run git status in the working tree, which may rewrite its index.
build() {
	local name=$1 rev=$2 src
	if [ -n "$rev" ]; then
		src=$tmp/$name-src
		mkdir -p "$src"
		git -C "$root" archive "$rev" | tar -x -C "$src"
	else
		src=$root
	fi
	echo "compare-same: building $name (${rev:-working tree}) from $src"
	(cd "$src" && nice -n 19 go build -buildvcs=false -o "$tmp/$name/idkit-full" ./cmd/idkit/idkit-full &&
		nice -n 19 go build -buildvcs=false -o "$tmp/$name/idkit" ./cmd/idkit) ||
		{ echo "compare-same: $name (${rev:-working tree}) does not build" >&2; exit 2; }
	if [ -n "$rev" ]; then rm -rf "$src"; fi
}

# checkpoints prints the number of checkpoints PostgreSQL has taken, or
# nothing. A run asks for the same number of them each time (one before
# and one per interval of each load); a CHECKPOINT of another session's
# adds to the count, and to the pages dirtied and logged whole in a load.
checkpoints() {
	if [ -n "${IDKIT_POSTGRES_DSN:-}" ] && command -v psql >/dev/null; then
		psql "$IDKIT_POSTGRES_DSN" -Atc "SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter" 2>/dev/null || true
	fi
}
declare -A ckpts

# run NAME: runs the build's compare with the flags, its report in
# $out/NAME.json, its table in $out/NAME.txt and its progress in
# $out/NAME.log.
run() {
	local name=$1 start rc=0 c0 c1
	c0=$(checkpoints)
	start=$(date +%s)
	echo "compare-same: running $name: idkit-full compare --json $out/$name.json ${flags[*]}"
	nice -n 19 "$tmp/$name/idkit-full" compare --json "$out/$name.json" "${flags[@]}" >"$out/$name.txt" 2>"$out/$name.log" &
	child=$!
	wait "$child" || rc=$?
	child=""
	if [ "$rc" -ne 0 ]; then
		echo "compare-same: $name's run failed (exit $rc); the end of $out/$name.log:" >&2
		tail -n 20 "$out/$name.log" >&2
		exit 2
	fi
	c1=$(checkpoints)
	if [ -n "$c0" ] && [ -n "$c1" ]; then
		ckpts[$name]=$((c1 - c0))
	fi
	echo "compare-same: $name took $(($(date +%s) - start)) s${ckpts[$name]:+, PostgreSQL checkpoints ${ckpts[$name]}}"
	left "$name"
}

# left NAME: says if a schema or database that NAME's run worked in is
# still on its server (compare drops them; the clients are optional).
left() {
	local log=$out/$1.log s
	s=$(sed -n 's/^postgres: the run works in schema \([a-z0-9_]*\) .*/\1/p' "$log")
	if [ -n "$s" ] && [ -n "${IDKIT_POSTGRES_DSN:-}" ] && command -v psql >/dev/null &&
		[ "$(psql "$IDKIT_POSTGRES_DSN" -Atc "SELECT count(*) FROM pg_namespace WHERE nspname = '$s'" 2>/dev/null)" != 0 ]; then
		echo "compare-same: WARNING: PostgreSQL schema $s is still there (or psql could not tell)" >&2
	fi
	# InnoDB's database and MyRocks'. A go-sql-driver DSN reads
	# user[:password]@tcp(host:port)/db[?params].
	for s in $(sed -n 's/^\(mysql\|myrocks\): the run works in database \([a-z0-9_]*\) .*/\2/p' "$log"); do
		if command -v mysql >/dev/null &&
			[[ ${IDKIT_MYSQL_DSN:-} =~ ^([^:@]*)(:([^@]*))?@tcp\(([^:\)]*)(:([0-9]+))?\) ]] &&
			[ "$(MYSQL_PWD=${BASH_REMATCH[3]} mysql -u"${BASH_REMATCH[1]}" -h"${BASH_REMATCH[4]}" -P"${BASH_REMATCH[6]:-3306}" -N \
				-e "SELECT count(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = '$s'" 2>/dev/null)" != 0 ]; then
			echo "compare-same: WARNING: MariaDB/MySQL database $s is still there (or mysql could not tell)" >&2
		fi
	done
}

echo "compare-same: base $base ($base_sha), head $head_name; flags: ${flags[*]:-(none: the default run)}"
for v in IDKIT_POSTGRES_DSN IDKIT_MYSQL_DSN IDKIT_REDIS_ADDR IDKIT_ETCD_ENDPOINTS; do
	echo "compare-same: $v=${!v:-(unset: skipped)}"
done
build base "$base_sha"
build head "$head_sha"
run base
run head

echo "compare-same: reports in $out; the comparison, base against head:"
rc=0
"$tmp/comparejson" "$out/base.json" "$out/head.json" || rc=$?
if [ -n "${ckpts[base]:-}" ] && [ -n "${ckpts[head]:-}" ] && [ "${ckpts[base]}" != "${ckpts[head]}" ]; then
	echo "compare-same: PostgreSQL took ${ckpts[base]} checkpoints during the base run and ${ckpts[head]} during the head run: another session's checkpoints fell in one of them" >&2
fi
case $rc in
0) ;;
1) echo "compare-same: the reports of $base and $head_name differ (above)" >&2 ;;
*) echo "compare-same: the comparison failed" >&2; rc=2 ;;
esac
exit "$rc"
}
