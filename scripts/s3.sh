#!/usr/bin/env bash
# SeaweedFS `weed mini` as a loopback-only S3 server for clink's integration
# tests (state/s3pool, CLINK_S3_ENDPOINT).
#
#   scripts/s3.sh build   build weed from tools/seaweedfs into $CLINK_TOOLS
#                         (default ~/.cache/clink, outside the checkout so
#                         every clone on a machine reuses it; ~16 min on 2
#                         cores the first time, ~30 s with a warm build cache)
#   scripts/s3.sh start   start it on 127.0.0.1:8333 with SigV4 credentials,
#                         create the bucket, write .s3data/weed.pid
#   scripts/s3.sh env     print the variables the tests read (eval it)
#   scripts/s3.sh stop    stop it by its PID and wait
#
# Credentials default to a local development identity; override with
# CLINK_S3_ACCESS_KEY / CLINK_S3_SECRET_KEY. Nothing binds beyond loopback
# and telemetry is off.
set -euo pipefail
cd "$(dirname "$0")/.."

ROOT=$PWD
TOOLS=${CLINK_TOOLS:-$HOME/.cache/clink}
WEED=$TOOLS/weed
DATA=$ROOT/.s3data
PIDFILE=$DATA/weed.pid
PORT=8333
BUCKET=${CLINK_S3_BUCKET:-clink-test}
ACCESS=${CLINK_S3_ACCESS_KEY:-clinkdev}
SECRET=${CLINK_S3_SECRET_KEY:-clinkdev-secret-key}

build() {
	if [[ -x $WEED ]]; then
		echo "s3.sh: $WEED already built"
		return
	fi
	mkdir -p "$TOOLS"
	echo "s3.sh: building weed (several minutes, ~2.6 GB peak)"
	(cd tools/seaweedfs && go build -o "$WEED.tmp" github.com/seaweedfs/seaweedfs/weed)
	mv "$WEED.tmp" "$WEED"
}

running() {
	[[ -f $PIDFILE ]] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null
}

start() {
	if running; then
		echo "s3.sh: already running (pid $(cat "$PIDFILE"))"
		return
	fi
	[[ -x $WEED ]] || { echo "s3.sh: $WEED missing: run scripts/s3.sh build" >&2; exit 1; }
	mkdir -p "$DATA"
	umask 077
	cat >"$DATA/s3.json" <<JSON
{"identities": [{"name": "clink", "credentials": [{"accessKey": "$ACCESS", "secretKey": "$SECRET"}],
  "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}
JSON
	# env -u: weed would otherwise also register the caller's AWS identity.
	env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN \
		"$WEED" mini -dir="$DATA" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
		-master.telemetry=false -admin.ui=false -webdav=false \
		-s3.config="$DATA/s3.json" -bucket="$BUCKET" \
		>"$DATA/weed.log" 2>&1 &
	echo $! >"$PIDFILE"
	for _ in $(seq 1 120); do
		if ! running; then
			echo "s3.sh: weed exited; see $DATA/weed.log" >&2
			tail -20 "$DATA/weed.log" >&2
			exit 1
		fi
		# An unauthenticated request is answered (403) once S3 is up.
		code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/$BUCKET" || true)
		if [[ $code != 000 ]] && bucket_ready; then
			echo "s3.sh: S3 on http://127.0.0.1:$PORT, bucket $BUCKET, pid $(cat "$PIDFILE")"
			return
		fi
		sleep 0.5
	done
	echo "s3.sh: S3 did not answer on 127.0.0.1:$PORT within 60s; see $DATA/weed.log" >&2
	stop
	exit 1
}

# bucket_ready creates the bucket if -bucket did not (older weed), with a
# signed request through curl's SigV4 support.
bucket_ready() {
	local url="http://127.0.0.1:$PORT/$BUCKET"
	local sig=(--user "$ACCESS:$SECRET" --aws-sigv4 "aws:amz:us-east-1:s3")
	code=$(curl -s -o /dev/null -w '%{http_code}' "${sig[@]}" -I "$url" || true)
	[[ $code == 200 ]] && return 0
	curl -s -o /dev/null "${sig[@]}" -X PUT "$url" || true
	code=$(curl -s -o /dev/null -w '%{http_code}' "${sig[@]}" -I "$url" || true)
	[[ $code == 200 ]]
}

stop() {
	if ! [[ -f $PIDFILE ]]; then
		echo "s3.sh: not running"
		return
	fi
	pid=$(cat "$PIDFILE")
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid"
		for _ in $(seq 1 120); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.5
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "s3.sh: pid $pid ignored SIGTERM for 60s; sending SIGKILL" >&2
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	rm -f "$PIDFILE"
	echo "s3.sh: stopped"
}

env_vars() {
	echo "export CLINK_S3_ENDPOINT=http://127.0.0.1:$PORT"
	echo "export CLINK_S3_BUCKET=$BUCKET"
	echo "export CLINK_S3_ACCESS_KEY=$ACCESS"
	echo "export CLINK_S3_SECRET_KEY=$SECRET"
}

case ${1:-} in
build) build ;;
start) start ;;
stop) stop ;;
env) env_vars ;;
*) echo "usage: scripts/s3.sh build|start|env|stop" >&2; exit 2 ;;
esac
