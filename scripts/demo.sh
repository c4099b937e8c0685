#!/usr/bin/env bash
# The sitebox demo on loopback: an origin exporting a storage pool, read
# back with the real XRootD client (xrdcp) over root:// and with curl over
# https://, checksums compared; then a caching proxy in front of it: the
# first read crosses to the origin, the second comes from the cache's disk;
# then a federation: the site's box — origin, cache, site director and job
# router in one process, from one config — sending clients to its origin,
# or through its cache to an origin at another site that joined it.
# Installs what it needs (scripts/setup.sh --demo) and runs the binary it
# builds; the steps below change directories, so it is named absolutely.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --demo >/dev/null
sitebox="$PWD/bin/sitebox"
export XRD_REQUESTTIMEOUT=30 XRD_CONNECTIONRETRY=1

work=$(mktemp -d /tmp/sitebox-demo.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

# free_ports N prints N free ports, all bound at once so no two are the same.
free_ports() { python3 -c 'import socket, sys
ss = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))' "$1"; }
# wait_port PORT PID waits until PORT answers, and fails naming the port
# when PID (the sitebox meant to listen there) exits first: another
# program answering on the port is not that sitebox.
wait_port() {
  for _ in $(seq 100); do
    kill -0 "$2" 2>/dev/null || { echo "the sitebox meant to listen on port $1 exited (see its message above)" >&2; return 1; }
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
      sleep 0.2; kill -0 "$2" 2>/dev/null && return 0
      echo "the sitebox meant to listen on port $1 exited (see its message above)" >&2; return 1
    fi
    sleep 0.1
  done
  echo "port $1 never opened" >&2; return 1
}

mkdir -p "$work/pool1" "$work/pool2" "$work/state" "$work/cache-state"
head -c $((64 << 20)) /dev/urandom > "$work/pool1/events.root"
want=$(sha256sum < "$work/pool1/events.root" | cut -d' ' -f1)

read -r root_port https_port < <(free_ports 2)
echo "1. Starting a sitebox origin: /store -> two pools, root:// on $root_port, https:// on $https_port"
"$sitebox" serve --export "/store=$work/pool1,$work/pool2" --root-addr "127.0.0.1:$root_port" \
  --https-addr "127.0.0.1:$https_port" --state-dir "$work/state" --log-level warn &
pids+=($!)
wait_port "$root_port" "$!"; wait_port "$https_port" "$!"

echo "2. Listing it with xrdfs:"
xrdfs "127.0.0.1:$root_port" ls -l /store

echo "3. Reading 64 MiB with xrdcp over root://"
xrdcp -f "root://127.0.0.1:$root_port//store/events.root" "$work/via-root"
[ "$(sha256sum < "$work/via-root" | cut -d' ' -f1)" = "$want" ] && echo "   identical to the original"

echo "4. Reading it with curl over https:// (self-signed certificate in $work/state/tls)"
curl -sf --cacert "$work/state/tls/cert.pem" -o "$work/via-https" "https://127.0.0.1:$https_port/store/events.root"
[ "$(sha256sum < "$work/via-https" | cut -d' ' -f1)" = "$want" ] && echo "   identical to the original"

echo "5. Checksums both ways:"
echo "   root://  $(xrdfs "127.0.0.1:$root_port" query checksum /store/events.root)"
echo "   https:// $(curl -sfI --cacert "$work/state/tls/cert.pem" -H 'Want-Digest: adler32' "https://127.0.0.1:$https_port/store/events.root" | grep -i '^digest' | tr -d '\r')"

echo "6. Writing with xrdcp and reading back with curl:"
echo "hello from the demo" > "$work/hello.txt"
xrdcp -f -p "$work/hello.txt" "root://127.0.0.1:$root_port//store/user/demo/hello.txt"
echo "   $(curl -sf --cacert "$work/state/tls/cert.pem" "https://127.0.0.1:$https_port/store/user/demo/hello.txt")"

read -r cache_root cache_https < <(free_ports 2)
echo "7. Starting a sitebox cache in front of it: /store -> root://127.0.0.1:$root_port, root:// on $cache_root, https:// on $cache_https"
"$sitebox" serve --cache "/store=root://127.0.0.1:$root_port" --cache-dir "$work/cache" --cache-ram 256MiB \
  --root-addr "127.0.0.1:$cache_root" --https-addr "127.0.0.1:$cache_https" --state-dir "$work/cache-state" --log-level warn &
pids+=($!)
wait_port "$cache_root" "$!"; wait_port "$cache_https" "$!"
stats() { "$sitebox" cache stats --state-dir "$work/cache-state" --json | python3 -c 'import json, sys; s = json.load(sys.stdin); print("the cache has read %d MiB from the origin" % (s["upstream_bytes"] >> 20))'; }

echo "8. First read through the cache (cold: fetched from the origin):"
xrdcp -f "root://127.0.0.1:$cache_root//store/events.root" "$work/via-cache-1"
[ "$(sha256sum < "$work/via-cache-1" | cut -d' ' -f1)" = "$want" ] && echo "   identical to the original; $(stats)"
sleep 3 # let the write-behind reach the disk

echo "9. Second read, with curl over https:// (warm: from the cache's disk, nothing new upstream):"
curl -sf --cacert "$work/cache-state/tls/cert.pem" -o "$work/via-cache-2" "https://127.0.0.1:$cache_https/store/events.root"
[ "$(sha256sum < "$work/via-cache-2" | cut -d' ' -f1)" = "$want" ] && echo "   identical to the original; $(stats)"

echo "10. What the operator sees:"
"$sitebox" cache stats --state-dir "$work/cache-state" | sed 's/^/   /'
"$sitebox" cache ls --state-dir "$work/cache-state" | sed 's/^/   /'
# A federation: the Tier-3 site's box runs every role in one process from
# one config — an origin for the site's own data (/t3), a cache for the
# experiment namespace (/store, filled through the box's own director), the
# site director on ports of its own, and (as root) the job router — and an
# origin at site B joins its director.
read -r dir_root dir_https t3_root t3_https < <(free_ports 4)
mkdir -p "$work/t3" "$work/t3-pool/user" "$work/b-pool"
chmod 750 "$work/t3-pool" # a box with jobs refuses a pool its jobs could read
head -c $((8 << 20)) /dev/urandom > "$work/t3-pool/user/local.root"
head -c $((32 << 20)) /dev/urandom > "$work/b-pool/remote.root"
jobs=""
if [ "$(id -u)" = 0 ] && id -u sbxslot10 >/dev/null 2>&1; then
  "$sitebox" token keygen --state-dir "$work/t3" >/dev/null
  chmod 711 "$work" # slot users reach their sandboxes below it
  jobs="[auth]\nsite_issuer = true\n[jobs]\nenabled = true\nslot_users = [\"sbxslot10\"]\ncpus = 1\ndir = \"$work/jobs\"\n"
fi
printf '[server]\nname = "t3"\nsite = "T3"\nstate_dir = "%s"\nlog_level = "warn"
# The data listeners: the box'"'"'s origin and cache.
[root]\naddr = "127.0.0.1:%s"\n[https]\naddr = "127.0.0.1:%s"
[[export]]\nprefix = "/t3"\npools = ["%s"]
[cache]\ndir = "%s"\nram = "256MiB"\ntrusted_redirects = ["127.0.0.1"]
[[cache.route]]\nprefix = "/store"\nupstreams = ["root://127.0.0.1:%s"]
# The site director, on listeners of its own: clients and other boxes use these.
[director]\nenabled = true\nroot_addr = "127.0.0.1:%s"\nhttps_addr = "127.0.0.1:%s"\nstartup_wait = "2s"
[advertise]\ninterval = "1s"\n%b' \
  "$work/t3" "$t3_root" "$t3_https" "$work/t3-pool" "$work/t3/cache" "$dir_root" "$dir_root" "$dir_https" "$jobs" > "$work/t3/sitebox.toml"
echo "11. Starting the T3 site box: origin /t3, cache /store, director${jobs:+ and job router} in one process from one config ($work/t3/sitebox.toml)"
"$sitebox" config check "$work/t3/sitebox.toml" | sed 's/^/   /'
"$sitebox" serve --config "$work/t3/sitebox.toml" &
pids+=($!)
for p in "$t3_root" "$t3_https" "$dir_root" "$dir_https"; do wait_port "$p" "${pids[-1]}"; done
echo "    data on root:// $t3_root and https:// $t3_https; the director on root:// $dir_root and https:// $dir_https"

read -r b_root b_https < <(free_ports 2); mkdir -p "$work/b-origin"
printf '[server]\nname = "b-origin"\nsite = "B"\nstate_dir = "%s"\nlog_level = "warn"\n[root]\naddr = "127.0.0.1:%s"\n[https]\naddr = "127.0.0.1:%s"
[[export]]\nprefix = "/store"\npools = ["%s"]
[advertise]\nto = ["https://127.0.0.1:%s"]\ninterval = "1s"\nca = "%s"\n' \
  "$work/b-origin" "$b_root" "$b_https" "$work/b-pool" "$dir_https" "$work/t3/tls/cert.pem" > "$work/b-origin/sitebox.toml"
echo "12. An origin at site B joins the T3 director: \`sitebox federation join\` prints a request, the T3 operator approves it"
req=$("$sitebox" federation join "https://127.0.0.1:$dir_https" --config "$work/b-origin/sitebox.toml" 2>/dev/null | awk '{print $4}')
"$sitebox" federation approve "$req" --config "$work/t3/sitebox.toml" --yes --allow-loopback | sed 's/^/   /'
"$sitebox" serve --config "$work/b-origin/sitebox.toml" &
pids+=($!)
wait_port "$b_root" "$!"; wait_port "$b_https" "$!"
fed() { "$sitebox" federation "https://127.0.0.1:$dir_https" --ca "$work/t3/tls/cert.pem" "$@"; }
for _ in $(seq 50); do [ "$(fed --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["servers"] or []))')" = 3 ] && break; sleep 0.2; done

echo "13. The director's view of its federation (the box's own origin t3-origin and cache t3-cache, and B):"
fed | sed 's/^/   /'

echo "14. A file at this site: the director sends xrdcp to the box's own origin"
xrdcp -f "root://127.0.0.1:$dir_root//t3/user/local.root" "$work/local"
cmp -s "$work/local" "$work/t3-pool/user/local.root" && echo "   identical to the original"

echo "15. A file only at site B: the director sends xrdcp to the box's cache, which reads it from B"
xrdcp -f "root://127.0.0.1:$dir_root//store/remote.root" "$work/remote"
cmp -s "$work/remote" "$work/b-pool/remote.root" && echo "   identical to the original; $("$sitebox" cache stats --state-dir "$work/t3" --json | python3 -c 'import json, sys; s = json.load(sys.stdin); print("the site cache has read %d MiB from site B" % (s["upstream_bytes"] >> 20))')"

echo "16. The same over https://: curl follows the director's 307 to the cache (now from its disk); one CA file, the box's certificate"
curl -sfL --cacert "$work/t3/tls/cert.pem" -o "$work/remote-https" -w '   HTTP %{http_code} after %{num_redirects} redirect(s)\n' "https://127.0.0.1:$dir_https/store/remote.root"
cmp -s "$work/remote-https" "$work/b-pool/remote.root" && echo "   identical to the original"

echo "17. Every replica and the merged namespace, as the director sees them:"
echo "   locate: $(xrdfs "127.0.0.1:$dir_root" locate /store/remote.root | tr '\n' ' ')"
xrdfs "127.0.0.1:$dir_root" ls /store | sed 's/^/   /'

if [ -n "$jobs" ]; then
  echo "18. A job submitted to the same box (a token from its site issuer):"
  tok=$("$sitebox" token issue --config "$work/t3/sitebox.toml" --sub demo --groups /cms --scope compute.create,compute.read --lifetime 1h 2>/dev/null)
  mkdir -p "$work/submit" && printf 'executable = /bin/echo\narguments = "hello from a job"\noutput = out.txt\nqueue 1\n' > "$work/submit/hello.sub"
  export BEARER_TOKEN=$tok SITEBOX_URL="https://127.0.0.1:$t3_https" SITEBOX_CA="$work/t3/tls/cert.pem"
  id=$(cd "$work/submit" && "$sitebox" submit hello.sub | awk -F': ' '{print $2}')
  for _ in $(seq 100); do state=$("$sitebox" jobs status "$id" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])'); [ "$state" = completed ] && break; sleep 0.3; done
  echo "   job $id: $state"
fi

echo "Demo finished: origin, cache and director served the same bytes over root:// and https://; the site box ran them in one process."
