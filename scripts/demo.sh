#!/usr/bin/env bash
# The sitebox demo on loopback: an origin exporting a storage pool, read
# back with the real XRootD client (xrdcp) over root:// and with curl over
# https://, checksums compared; then a caching proxy in front of it: the
# first read crosses to the origin, the second comes from the cache's disk;
# then a federation: a site director sending clients to the site's origin,
# or through the site's cache to an origin at another site.
# Installs what it needs (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
export XRD_REQUESTTIMEOUT=30 XRD_CONNECTIONRETRY=1

work=$(mktemp -d /tmp/sitebox-demo.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
wait_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 never opened" >&2; return 1; }

mkdir -p "$work/pool1" "$work/pool2" "$work/state" "$work/cache-state"
head -c $((64 << 20)) /dev/urandom > "$work/pool1/events.root"
want=$(sha256sum < "$work/pool1/events.root" | cut -d' ' -f1)

root_port=$(free_port); https_port=$(free_port)
echo "1. Starting a sitebox origin: /store -> two pools, root:// on $root_port, https:// on $https_port"
bin/sitebox serve --export "/store=$work/pool1,$work/pool2" --root-addr "127.0.0.1:$root_port" \
  --https-addr "127.0.0.1:$https_port" --state-dir "$work/state" --log-level warn &
pids+=($!)
wait_port "$root_port"; wait_port "$https_port"

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

cache_root=$(free_port); cache_https=$(free_port)
echo "7. Starting a sitebox cache in front of it: /store -> root://127.0.0.1:$root_port, root:// on $cache_root, https:// on $cache_https"
bin/sitebox serve --cache "/store=root://127.0.0.1:$root_port" --cache-dir "$work/cache" --cache-ram 256MiB \
  --root-addr "127.0.0.1:$cache_root" --https-addr "127.0.0.1:$cache_https" --state-dir "$work/cache-state" --log-level warn &
pids+=($!)
wait_port "$cache_root"; wait_port "$cache_https"
stats() { bin/sitebox cache stats --state-dir "$work/cache-state" --json | python3 -c 'import json, sys; s = json.load(sys.stdin); print("the cache has read %d MiB from the origin" % (s["upstream_bytes"] >> 20))'; }

echo "8. First read through the cache (cold: fetched from the origin):"
xrdcp -f "root://127.0.0.1:$cache_root//store/events.root" "$work/via-cache-1"
[ "$(sha256sum < "$work/via-cache-1" | cut -d' ' -f1)" = "$want" ] && echo "   identical to the original; $(stats)"
sleep 3 # let the write-behind reach the disk

echo "9. Second read, with curl over https:// (warm: from the cache's disk, nothing new upstream):"
curl -sf --cacert "$work/cache-state/tls/cert.pem" -o "$work/via-cache-2" "https://127.0.0.1:$cache_https/store/events.root"
[ "$(sha256sum < "$work/via-cache-2" | cut -d' ' -f1)" = "$want" ] && echo "   identical to the original; $(stats)"

echo "10. What the operator sees:"
bin/sitebox cache stats --state-dir "$work/cache-state" | sed 's/^/   /'
bin/sitebox cache ls --state-dir "$work/cache-state" | sed 's/^/   /'
# A federation: a Tier-3 site director with the site's origin and cache
# behind it, and an origin at another site, all advertising to it.
node() { # name site root-port https-port extra-toml
  mkdir -p "$work/$1"
  printf '[server]\nname = "%s"\nsite = "%s"\nstate_dir = "%s"\nlog_level = "warn"\n[root]\naddr = "127.0.0.1:%s"\n[https]\naddr = "127.0.0.1:%s"\n%b' \
    "$1" "$2" "$work/$1" "$3" "$4" "$5" > "$work/$1/sitebox.toml"
  if [[ "$5" == *"[advertise]"* ]]; then
    # Joining is two steps: the box prints its request (with its own key),
    # the director's operator approves it on the director host.
    req=$(bin/sitebox federation join "https://127.0.0.1:$dir_https" --config "$work/$1/sitebox.toml" 2>/dev/null | awk '{print $4}')
    bin/sitebox federation approve "$req" --config "$work/t3-director/sitebox.toml" | sed 's/^/   /'
  fi
  bin/sitebox serve --config "$work/$1/sitebox.toml" &
  pids+=($!)
  wait_port "$3"; wait_port "$4"
}
dir_root=$(free_port); dir_https=$(free_port)
echo "11. Starting a federation: director t3-director (site T3) on root:// $dir_root, with an origin and a cache at T3 and an origin at site B"
node t3-director T3 "$dir_root" "$dir_https" '[director]\nenabled = true\n'
echo "    each box joins it: \`sitebox federation join\` prints a request, the director's operator runs \`sitebox federation approve\` with it"
advertise="[advertise]\nto = [\"https://127.0.0.1:$dir_https\"]\ninterval = \"1s\"\nca = \"$work/t3-director/tls/cert.pem\"\n"
mkdir -p "$work/t3-pool" "$work/b-pool"
head -c $((8 << 20)) /dev/urandom > "$work/t3-pool/local.root"
head -c $((32 << 20)) /dev/urandom > "$work/b-pool/remote.root"
node t3-origin T3 "$(free_port)" "$(free_port)" "[[export]]\nprefix = \"/store\"\npools = [\"$work/t3-pool\"]\n$advertise"
node b-origin B "$(free_port)" "$(free_port)" "[[export]]\nprefix = \"/store\"\npools = [\"$work/b-pool\"]\n$advertise"
node t3-cache T3 "$(free_port)" "$(free_port)" "[cache]\ndir = \"$work/t3-cache/data\"\nram = \"256MiB\"\ntrusted_redirects = [\"127.0.0.1\"]\n[[cache.route]]\nprefix = \"/store\"\nupstreams = [\"root://127.0.0.1:$dir_root\"]\n$advertise"
fed() { bin/sitebox federation "https://127.0.0.1:$dir_https" --ca "$work/t3-director/tls/cert.pem" "$@"; }
for _ in $(seq 50); do [ "$(fed --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["servers"] or []))')" = 3 ] && break; sleep 0.2; done

echo "12. The director's view of its federation:"
fed | sed 's/^/   /'

echo "13. A file at this site: the director sends xrdcp straight to the T3 origin"
xrdcp -f "root://127.0.0.1:$dir_root//store/local.root" "$work/local"
cmp -s "$work/local" "$work/t3-pool/local.root" && echo "   identical to the original"

echo "14. A file only at site B: the director sends xrdcp to the site's cache, which reads it from B"
xrdcp -f "root://127.0.0.1:$dir_root//store/remote.root" "$work/remote"
cmp -s "$work/remote" "$work/b-pool/remote.root" && echo "   identical to the original; $(bin/sitebox cache stats --state-dir "$work/t3-cache" --json | python3 -c 'import json, sys; s = json.load(sys.stdin); print("the site cache has read %d MiB from site B" % (s["upstream_bytes"] >> 20))')"

echo "15. The same over https://: curl follows the director's 307 to the cache (now from its disk)"
cat "$work"/t3-*/tls/cert.pem > "$work/bundle.pem"
curl -sfL --cacert "$work/bundle.pem" -o "$work/remote-https" -w '   HTTP %{http_code} after %{num_redirects} redirect(s)\n' "https://127.0.0.1:$dir_https/store/remote.root"
cmp -s "$work/remote-https" "$work/b-pool/remote.root" && echo "   identical to the original"

echo "16. Every replica and the merged namespace, as the director sees them:"
echo "   locate: $(xrdfs "127.0.0.1:$dir_root" locate /store/remote.root | tr '\n' ' ')"
xrdfs "127.0.0.1:$dir_root" ls /store | sed 's/^/   /'

echo "Demo finished: origin, cache and director served the same bytes over root:// and https://."
