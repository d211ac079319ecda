#!/usr/bin/env bash
# A 3-node MariaDB Galera cluster on loopback ports, for tests and benchmarks of the gateway.
#
#   tools/galera.sh start DIR        initialise (first time) and start nodes 1..3 in DIR; node 1 bootstraps
#   tools/galera.sh stop DIR         stop every node (clean shutdown, kill -9 after 30 s)
#   tools/galera.sh status DIR       one line per node: port, pid, wsrep state, cluster size
#   tools/galera.sh kill DIR N       kill -9 node N (a crash)
#   tools/galera.sh start-node DIR N start node N again; it rejoins the running cluster (IST or rsync SST)
#   tools/galera.sh dsn DIR N        the DSN of node N's database (mysql://root@127.0.0.1:PORT/evlog)
#
# Needs Debian's mariadb-server and galera-4 (provider /usr/lib/galera/libgalera_smm.so) and rsync.
# Ports (GALERA_BASE_PORT, default 13300): node N listens for SQL on BASE+N, group traffic on
# BASE+10+N, IST on BASE+20+N and SST on BASE+30+N, all on 127.0.0.1; never 3306. Each node keeps
# its data, socket, pid and error log under DIR/nodeN. User root@127.0.0.1 has no password and the
# database `evlog` exists (made on node 1 after the bootstrap; Galera replicates both).
set -euo pipefail

PROVIDER=${GALERA_PROVIDER:-/usr/lib/galera/libgalera_smm.so}
BASE=${GALERA_BASE_PORT:-13300}
NODES=(1 2 3)
# As root, the nodes run as the mysql user: rsync SST's daemon, started by a root server, would write as
# nobody and fail on the data directory.
RUN_AS=""
[[ $(id -u) == 0 ]] && RUN_AS=${GALERA_USER:-mysql}

die() { echo "galera.sh: $*" >&2; exit 1; }

port() { echo $((BASE + $1)); }

client() {  # client N SQL...: run SQL on node N over its socket
    local n=$1; shift
    mariadb --no-defaults -uroot --socket="$DIR/node$n/mysqld.sock" -N -B -e "$*"
}

pid_of() {
    local f="$DIR/node$1/mysqld.pid"
    [[ -s $f ]] && kill -0 "$(cat "$f")" 2>/dev/null && cat "$f"
}

write_config() {
    local n=$1 d="$DIR/node$1" peers="" i
    for i in "${NODES[@]}"; do peers+="${peers:+,}127.0.0.1:$((BASE + 10 + i))"; done
    mkdir -p "$d/data"
    [[ -n $RUN_AS ]] && chown -R "$RUN_AS:" "$d"
    cat > "$d/my.cnf" <<EOF
[mysqld]
datadir=$d/data
socket=$d/mysqld.sock
pid-file=$d/mysqld.pid
log-error=$d/error.log
port=$(port "$n")
bind-address=127.0.0.1
$( [[ -n $RUN_AS ]] && echo "user=$RUN_AS" )
binlog_format=ROW
default_storage_engine=InnoDB
innodb_autoinc_lock_mode=2
innodb_buffer_pool_size=128M
innodb_log_file_size=64M
innodb_flush_log_at_trx_commit=2
max_connections=400
max_allowed_packet=64M
wsrep_on=ON
wsrep_provider=$PROVIDER
wsrep_cluster_name=evlog_galera
wsrep_cluster_address=gcomm://$peers
wsrep_node_name=node$n
wsrep_node_address=127.0.0.1
wsrep_provider_options="gmcast.listen_addr=tcp://127.0.0.1:$((BASE + 10 + n));ist.recv_addr=127.0.0.1:$((BASE + 20 + n));gcache.size=128M"
wsrep_sst_method=rsync
wsrep_sst_receive_address=127.0.0.1:$((BASE + 30 + n))
wsrep_slave_threads=2
EOF
}

wait_synced() {  # wait_synced N SECONDS PID
    local n=$1 deadline=$((SECONDS + $2)) state
    while (( SECONDS < deadline )); do
        state=$(client "$n" "SHOW STATUS LIKE 'wsrep_local_state_comment'" 2>/dev/null | cut -f2 || true)
        [[ $state == Synced ]] && return 0
        kill -0 "$3" 2>/dev/null || die "node $n exited while starting; see $DIR/node$n/error.log"
        sleep 0.5
    done
    die "node $n not synced after $2 s (state: ${state:-none}); see $DIR/node$n/error.log"
}

start_node() {  # start_node N [--wsrep-new-cluster]
    local n=$1; shift
    pid_of "$n" >/dev/null && { echo "node $n already running"; return 0; }
    write_config "$n"
    if [[ ! -d $DIR/node$n/data/mysql ]]; then
        mariadb-install-db --defaults-file="$DIR/node$n/my.cnf" --auth-root-authentication-method=normal ${RUN_AS:+--user=$RUN_AS} \
            --skip-test-db > "$DIR/node$n/install.log" 2>&1 || die "initialising node $n failed; see $DIR/node$n/install.log"
    fi
    setsid mariadbd --defaults-file="$DIR/node$n/my.cnf" "$@" < /dev/null > "$DIR/node$n/stdout.log" 2>&1 &
    wait_synced "$n" 300 $!
}

cmd_start() {
    mkdir -p "$DIR"
    chmod 755 "$DIR"  # the nodes' user must reach its own directory in it
    if [[ -f $DIR/node1/data/grastate.dat ]]; then  # a cluster stopped as a whole: node 1 bootstraps it again
        sed -i 's/^safe_to_bootstrap: 0/safe_to_bootstrap: 1/' "$DIR/node1/data/grastate.dat"
    fi
    start_node 1 --wsrep-new-cluster
    client 1 "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1'; GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
              CREATE DATABASE IF NOT EXISTS evlog"
    start_node 2
    start_node 3
    cmd_status
}

cmd_stop() {
    local n pid
    for n in 3 2 1; do
        pid=$(pid_of "$n") || continue
        kill -TERM "$pid"
        for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
        kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
        echo "node $n stopped"
    done
}

cmd_status() {
    local n pid
    for n in "${NODES[@]}"; do
        if pid=$(pid_of "$n"); then
            echo "node $n port $(port "$n") pid $pid $(client "$n" "SELECT GROUP_CONCAT(VARIABLE_VALUE ORDER BY VARIABLE_NAME SEPARATOR ' ')
                FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN ('wsrep_cluster_size', 'wsrep_local_state_comment')" 2>/dev/null || echo unreachable)"
        else
            echo "node $n port $(port "$n") down"
        fi
    done
}

[[ $# -ge 2 ]] || die "usage: galera.sh start|stop|status|kill|start-node|dsn DIR [N]"
ACTION=$1
DIR=$(realpath -m "$2")
N=${3:-}
case $ACTION in
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    kill) [[ -n $N ]] || die "kill needs a node number"; pid=$(pid_of "$N") || die "node $N is not running"
          kill -9 "$pid"; for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
          echo "node $N killed" ;;
    start-node) [[ -n $N ]] || die "start-node needs a node number"; start_node "$N"; cmd_status ;;
    dsn) [[ -n $N ]] || die "dsn needs a node number"; echo "mysql://root@127.0.0.1:$(port "$N")/evlog" ;;
    *) die "unknown action $ACTION (start, stop, status, kill, start-node, dsn)" ;;
esac
