# The machine the tests need, set up the same way for .ci/run and
# .ci/stress, which source this file and call:
#
#   need_chromium   Chromium, for the test that renders the compare report
#                   in a browser; installed with apt if missing, and that
#                   test made a failure rather than a skip
#   need_haproxy    HAProxy, for the deployed fleet (internal/testkit/campaigns/deploy);
#                   installed with apt if missing
#   need_node       Node.js, for the tests of the JavaScript client
#                   (clients/js); installed with apt if missing
#   need_etcd       the etcd server that idkit pins, built once and named
#                   by IDKIT_ETCD_BIN, the binary of the etcd members that the
#                   tests start (package fleet/fleettest)
#   need_servers    PostgreSQL 15, MariaDB 10.11 and Redis 7 answering on
#                   this machine (each started with the machine's own
#                   command if not), their addresses exported so that the
#                   tests use them and fail rather than skip without them;
#                   and MariaDB's MyRocks (need_myrocks) and Spider
#                   (need_spider)
#   need_myrocks    the ROCKSDB engine in that MariaDB, for compare's LSM
#                   tests: Debian's mariadb-plugin-rocksdb at the server's
#                   own version, installed with apt if missing, and the
#                   server restarted to load it. MariaDB 10.11 crashes when
#                   the plugin is installed into a running server (INSTALL
#                   SONAME 'ha_rocksdb'), so the server loads it at start,
#                   from the package's rocksdb.cnf in mariadb.conf.d, which
#                   Debian's my.cnf includes (and this adds to a my.cnf that
#                   does not). The tests find the engine in the server and
#                   fail under CI=true without it

need_chromium() {
	if ! command -v chromium >/dev/null; then
		local sudo=""
		[ "$(id -u)" -eq 0 ] || sudo=sudo
		$sudo apt-get update -qq
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
	fi
	chromium --version
	export IDKIT_REQUIRE_BROWSER=1
}

need_haproxy() {
	if ! command -v haproxy >/dev/null; then
		local sudo=""
		[ "$(id -u)" -eq 0 ] || sudo=sudo
		$sudo apt-get update -qq
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq haproxy >/dev/null
	fi
	haproxy -v | sed -n 1p   # sed reads to the end: head would leave haproxy a SIGPIPE, which pipefail turns into a failure
}

need_node() {
	if ! command -v node >/dev/null; then
		local sudo=""
		[ "$(id -u)" -eq 0 ] || sudo=sudo
		$sudo apt-get update -qq
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nodejs >/dev/null
	fi
	node --version
}

need_etcd() {
	local dir
	dir=$(mktemp -d /tmp/idkit-etcd.XXXXXX)
	go build -o "$dir/etcd" github.com/idkit/idkit/internal/testkit/campaigns/deploy/etcd
	export IDKIT_ETCD_BIN=$dir/etcd
	"$IDKIT_ETCD_BIN" --version | sed -n 1p
}

export IDKIT_POSTGRES_DSN=postgres://postgres@127.0.0.1:5432/test
export IDKIT_MYSQL_DSN='root@tcp(127.0.0.1:3306)/test'
export IDKIT_REDIS_ADDR=127.0.0.1:6379

postgres_up() { pg_isready -q -h 127.0.0.1 -p 5432; }
mariadb_up() { mariadb -uroot -h127.0.0.1 -P3306 -e 'select 1' >/dev/null 2>&1; }
redis_up() { [ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" = PONG ]; }
start_postgres() { pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start; }
start_mariadb() { start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd; }
start_redis() {
	redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
		--dir /var/lib/redis --logfile /var/log/redis/ci.log
}

# wait_for polls check up to 60 times, a second apart.
wait_for() {
	for _ in $(seq 60); do
		"$1" && return 0
		sleep 1
	done
	return 1
}

myrocks_up() {
	[ "$(mariadb -uroot -h127.0.0.1 -P3306 -N -e "SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = 'ROCKSDB'" 2>/dev/null)" = YES ]
}

need_myrocks() {
	if myrocks_up; then
		echo "myrocks: up"
		return 0
	fi
	local sudo="" version
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	if ! dpkg -s mariadb-plugin-rocksdb >/dev/null 2>&1; then
		version=$(dpkg-query -W -f='${Version}' mariadb-server)
		$sudo apt-get update -qq
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "mariadb-plugin-rocksdb=$version" >/dev/null
	fi
	if ! /usr/sbin/mariadbd --print-defaults | grep -q ha_rocksdb; then
		printf '\n# Debian packages of server plugins put their settings here (mariadb-plugin-rocksdb: rocksdb.cnf).\n!includedir /etc/mysql/mariadb.conf.d/\n' |
			$sudo tee -a /etc/mysql/my.cnf >/dev/null
	fi
	if ! myrocks_up; then
		echo "mariadb has no ROCKSDB engine: restarting it to load mariadb-plugin-rocksdb"
		mariadb-admin -uroot -h127.0.0.1 -P3306 shutdown
		for _ in $(seq 120); do
			pgrep -x mariadbd >/dev/null || break
			sleep 0.5
		done
		start_mariadb
		if ! wait_for mariadb_up || ! myrocks_up; then
			echo "mariadb came back without the ROCKSDB engine (see /var/log/mysql/error.log): compare's MyRocks tests need it"
			return 1
		fi
	fi
	echo "myrocks: up"
}

# need_spider: Debian's mariadb-plugin-spider at the server's own version,
# for compare's sharded tables (compare/internal/engine/spider), whose runs
# start MariaDB servers of their own and load the plugin into their front
# server only. The package's spider.cnf would load it into the machine's
# server at its next start as well; that server has no use for it, so the
# file is left as a comment.
spider_installed() { [ -f "$(mariadb_plugin_dir)/ha_spider.so" ]; }
mariadb_plugin_dir() { /usr/sbin/mariadbd --no-defaults --verbose --help 2>/dev/null | awk '$1 == "plugin-dir" {print $2}'; }
need_spider() {
	local sudo="" version
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	if ! spider_installed; then
		version=$(dpkg-query -W -f='${Version}' mariadb-server)
		$sudo apt-get update -qq
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "mariadb-plugin-spider=$version" >/dev/null
	fi
	if grep -q '^plugin-load-add' /etc/mysql/mariadb.conf.d/spider.cnf 2>/dev/null; then
		printf '# Spider is loaded by the front servers that idkit compare starts, not by this server.\n' |
			$sudo tee /etc/mysql/mariadb.conf.d/spider.cnf >/dev/null
	fi
	spider_installed || { echo "no ha_spider.so in $(mariadb_plugin_dir): compare's Spider tests need it"; return 1; }
	echo "spider: installed"
}

need_servers() {
	local server
	for server in postgres mariadb redis; do
		if ! "${server}_up"; then
			echo "$server is not answering: starting it"
			"start_$server" || echo "starting $server failed"
			if ! wait_for "${server}_up"; then
				echo "$server is still not answering: the database tests need it"
				return 1
			fi
		fi
		echo "$server: up"
	done
	psql -h 127.0.0.1 -U postgres -d test -Atc 'select version()'
	# compare's index figures read pgstatindex. Where compare runs as a
	# superuser it creates the extension itself, but the tests that check
	# its rights first expect a database set up as a DBA would set it up.
	psql -h 127.0.0.1 -U postgres -d test -qc 'CREATE EXTENSION IF NOT EXISTS pgstattuple'
	mariadb -uroot -h127.0.0.1 -N -e 'select version()'
	need_myrocks || return 1
	need_spider || return 1
	redis-cli -h 127.0.0.1 -p 6379 info server | grep redis_version
}
