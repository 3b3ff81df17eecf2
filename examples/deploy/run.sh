#!/usr/bin/env bash
# Three `notes serve` replicas behind HAProxy, all on loopback; stops them
# all on exit (Ctrl-C, SIGTERM, or when HAProxy ends). A replica that dies
# is reported and left out by HAProxy's health checks.
#
#   examples/deploy/run.sh --db DB [--shared redis://HOST:PORT] [--shared nats://HOST:PORT] [-- NOTES_ARGS...]
#
# DB is what each replica's `notes --db` gets: a SQLite file (shared by
# the three processes in WAL mode, one machine only) or postgres://… once
# the store runs on PostgreSQL. NOTES_ARGS go to every replica after
# `serve` (e.g. --allow-writes, --rate-limit 5/1m, --approval ask); the
# replicas accept the balancer's address as Host (--allow-host; add the
# public name clients use behind a real deployment).
# Environment: NOTES (the notes binary; default target/debug/notes, else
# `notes` on PATH), HAPROXY (default `haproxy`), DEPLOY_PORT (the
# balancer's port, default 8800), DEPLOY_REPLICA_PORTS (default
# 8801,8802,8803). The replicas need the same GONK_MCP_REQUEST_STATE_KEYS
# (exported here, so they inherit it) for a 2026 asking call's retry to
# land on any of them.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

db=""
shared=()
while [ $# -gt 0 ]; do
    case "$1" in
        --db) db="${2:?--db needs a value}"; shift 2 ;;
        --shared) shared+=(--shared "${2:?--shared needs a value}"); shift 2 ;;
        --) shift; break ;;
        *) echo "usage: $0 --db DB [--shared URL] [-- NOTES_SERVE_ARGS...]" >&2; exit 2 ;;
    esac
done
if [ -z "$db" ]; then
    echo "run.sh: give --db (a SQLite file the replicas share, or postgres://…)" >&2
    exit 2
fi

notes="${NOTES:-}"
if [ -z "$notes" ]; then
    if [ -x "$root/target/debug/notes" ]; then notes="$root/target/debug/notes"; else notes="notes"; fi
fi
haproxy="${HAPROXY:-haproxy}"
if ! command -v "$haproxy" >/dev/null 2>&1; then
    if [ -x /usr/sbin/haproxy ]; then haproxy=/usr/sbin/haproxy; else
        echo "run.sh: haproxy is not installed (apt-get install haproxy, or bash .ci/install-services)" >&2
        exit 1
    fi
fi
port="${DEPLOY_PORT:-8800}"
IFS=, read -r -a replica_ports <<<"${DEPLOY_REPLICA_PORTS:-8801,8802,8803}"
if [ "${#replica_ports[@]}" -ne 3 ]; then
    echo "run.sh: DEPLOY_REPLICA_PORTS needs three ports (haproxy.cfg names r1, r2, r3)" >&2
    exit 2
fi

pids=()
stop() {
    trap - EXIT INT TERM
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap stop EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# Whether http://127.0.0.1:PORT/ answers 200 now.
answers() {
    local status=""
    {
        printf 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&3
        read -r -t 2 _ status _ <&3
    } 2>/dev/null 3<>"/dev/tcp/127.0.0.1/$1" || true
    [ "$status" = "200" ]
}

# Waits until 127.0.0.1:PORT answers (bounded: 30 s).
healthy() {
    for _ in $(seq 300); do
        answers "$1" && return 0
        sleep 0.1
    done
    echo "run.sh: nothing healthy on 127.0.0.1:$1 after 30 s" >&2
    return 1
}

global=(--db "$db")
global+=("${shared[@]}")
for i in 0 1 2; do
    name="r$((i + 1))"
    "$notes" "${global[@]}" serve --host 127.0.0.1 --port "${replica_ports[$i]}" \
        --replica "$name" --allow-host "127.0.0.1:$port" --allow-host "localhost:$port" "$@" &
    pids+=($!)
done
for p in "${replica_ports[@]}"; do healthy "$p"; done

export DEPLOY_BIND="127.0.0.1:$port"
export DEPLOY_R1="127.0.0.1:${replica_ports[0]}"
export DEPLOY_R2="127.0.0.1:${replica_ports[1]}"
export DEPLOY_R3="127.0.0.1:${replica_ports[2]}"
"$haproxy" -db -f "$here/haproxy.cfg" &
pids+=($!)
healthy "$port"
echo "deploy: balancing MCP at http://127.0.0.1:$port/mcp over r1 r2 r3 (pids ${pids[*]})" >&2

# A replica that ends is only reported: HAProxy's health checks take it
# out of rotation and the others answer. HAProxy ending ends the deployment
# (the EXIT trap stops the replicas).
set +e
haproxy_pid="${pids[3]}"
while true; do
    wait -n -p ended "${pids[@]}"
    code=$?
    if [ -z "${ended:-}" ] || [ "$ended" = "$haproxy_pid" ]; then
        echo "deploy: haproxy exited ($code); stopping the replicas" >&2
        exit "$code"
    fi
    for i in 0 1 2; do
        [ "${pids[$i]}" = "$ended" ] && echo "deploy: replica r$((i + 1)) (pid $ended) exited ($code); the others keep serving" >&2
    done
    live=()
    for pid in "${pids[@]}"; do [ "$pid" != "$ended" ] && live+=("$pid"); done
    pids=("${live[@]}")
done
