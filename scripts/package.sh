#!/usr/bin/env bash
# Builds the sitebox .deb into dist/ with nfpm, fetched through the Go
# module proxy at a pinned version (no other download):
#   scripts/package.sh [VERSION]     # default: from git describe, else 0.0.0
# DIST=dir writes it elsewhere; GOARCH=arm64 builds for another architecture.
set -euo pipefail
cd "$(dirname "$0")/.."

NFPM=github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.44.0
version=${1:-$(git describe --tags --always 2>/dev/null || echo 0.0.0)}
version=${version#v}
# Debian versions start with a digit: a bare commit id becomes 0.0.0~git<id>.
[[ $version =~ ^[0-9]+\. ]] || version="0.0.0~git$version"
arch=${GOARCH:-$(go env GOARCH)}

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath \
  -ldflags "-s -w -X sitebox/internal/version.override=v$version" \
  -o "$stage/sitebox" ./cmd/sitebox
# The units name the binary where a hand install puts it; the package puts
# it where Debian packages do.
for u in packaging/systemd/*.service; do
  sed 's#/usr/local/bin/sitebox#/usr/bin/sitebox#g' "$u" >"$stage/$(basename "$u")"
done

dist=${DIST:-dist}
mkdir -p "$dist"
out="$dist/sitebox_${version}_${arch}.deb"
SITEBOX_STAGE=$stage SITEBOX_VERSION=$version SITEBOX_ARCH=$arch \
  go run "$NFPM" package --config packaging/nfpm.yaml --packager deb --target "$out"
echo "$out"
