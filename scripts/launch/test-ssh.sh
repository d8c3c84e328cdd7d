#!/usr/bin/env bash
# Runs scripts/ssh/start.sh and stop.sh as written against a real sshd on this machine: a
# private sshd on a loopback port with key authentication (openssh-server from the
# distribution, installed if missing), a coordinator and two workers started over ssh, each
# running `enumerate h` to completion, once over plain gRPC and once over TLS; the distribution
# is compared with results/h.json, and everything started is stopped and removed.
#
#   scripts/launch/test-ssh.sh            (as root, or a user who can run apt-get if sshd is missing)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
root=$PWD
if [ ! -x /usr/sbin/sshd ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server
fi
cargo build --release -q -p coordinator -p worker

work=$(mktemp -d /tmp/cubefarm-ssh-test.XXXXXX)
port=$((20000 + RANDOM % 20000))
cleanup() {
    set +e
    [ -f "$work/sshd.pid" ] && kill "$(cat "$work/sshd.pid")" 2>/dev/null
    rm -rf "$work" "$HOME/cubefarm-ssh-test"
}
trap cleanup EXIT

ssh-keygen -q -t ed25519 -N '' -f "$work/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$work/user_key"
cp "$work/user_key.pub" "$work/authorized_keys"
chmod 600 "$work/authorized_keys"
cat > "$work/sshd_config" <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey $work/host_key
PidFile $work/sshd.pid
AuthorizedKeysFile $work/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PermitRootLogin prohibit-password
Subsystem sftp /usr/lib/openssh/sftp-server
CONF
mkdir -p /run/sshd
/usr/sbin/sshd -f "$work/sshd_config" -E "$work/sshd.log"
for _ in $(seq 1 50); do [ -s "$work/sshd.pid" ] && break; sleep 0.1; done

export SSH_OPTS="-p $port -i $work/user_key -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
export REMOTE_DIR=cubefarm-ssh-test STATE="$work/state" PORT=$((port + 1))
run() { ssh -n $SSH_OPTS -o BatchMode=yes 127.0.0.1 "$1"; }

# Depths of a result file, as one line per depth.
depths() { python3 -c 'import json,sys; [print(d) for d in json.load(open(sys.argv[1]))["depths"]]' "$1"; }

one_run() {
    local label=$1
    local start=$SECONDS
    # The head as user@host: the workers are told the host alone.
    scripts/ssh/start.sh "$(id -un)@127.0.0.1" 127.0.0.1 127.0.0.1 -- enumerate h --min-workers 2 --json h.json
    local pid
    pid=$(awk '$3 == "coordinator" { print $2 }' "$STATE/started")
    for _ in $(seq 1 900); do run "kill -0 $pid 2>/dev/null" || break; sleep 1; done
    if run "kill -0 $pid 2>/dev/null"; then echo "FAIL ($label): the job did not end in 15 minutes" >&2; exit 1; fi
    scp -P "$port" -i "$work/user_key" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
        -o LogLevel=ERROR -q "127.0.0.1:$REMOTE_DIR/h.json" "$work/h-$label.json"
    # Both workers took part: the result's traffic lists two workers that owned rows.
    python3 -c 'import json,sys; w=json.load(open(sys.argv[1]))["traffic"]["workers"]; sys.exit(not (len(w) == 2 and all(x["rows"] > 0 for x in w)))' \
        "$work/h-$label.json" || { echo "FAIL ($label): not two working workers" >&2; exit 1; }
    if ! diff <(depths "$work/h-$label.json") <(depths "$root/results/h.json") > /dev/null; then
        echo "FAIL ($label): the distribution differs from results/h.json" >&2; exit 1
    fi
    run "test \$(stat -c %a $REMOTE_DIR/token) = 600" || { echo "FAIL ($label): the token file is not 0600" >&2; exit 1; }
    if run "ps -eo args | grep -v grep | grep -q \"\$(cat $REMOTE_DIR/token)\""; then
        echo "FAIL ($label): the token appears on a command line" >&2; exit 1
    fi
    scripts/ssh/stop.sh --clean
    echo "ok ($label): enumerate h over ssh, coordinator and 2 workers, $((SECONDS - start)) s, same distribution as results/h.json"
}

# Workers pointed at a host that does not resolve stop at once: start.sh says so and fails.
if HEAD_ADDR=nosuchhost.invalid scripts/ssh/start.sh 127.0.0.1 127.0.0.1 -- enumerate h --json h.json \
    2> "$work/bad.err"; then
    echo "FAIL: start.sh succeeded with workers that cannot reach the coordinator" >&2; exit 1
fi
grep -q "1 of 1 workers stopped" "$work/bad.err" && grep -q "nosuchhost.invalid" "$work/bad.err" || {
    echo "FAIL: start.sh did not name the stopped worker and its reason:" >&2; cat "$work/bad.err" >&2; exit 1; }
scripts/ssh/stop.sh --clean
echo "ok: workers that cannot reach the coordinator make start.sh fail, naming the host"

one_run plain
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=127.0.0.1 \
    -addext "subjectAltName=IP:127.0.0.1" -addext "basicConstraints=critical,CA:FALSE" \
    -keyout "$work/key.pem" -out "$work/cert.pem" 2> /dev/null
TLS_CERT="$work/cert.pem" TLS_KEY="$work/key.pem" one_run tls
