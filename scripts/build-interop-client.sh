#!/usr/bin/env bash
# Builds the grpc-go interop client of the mock server's tests (test/cli/mock-go-client.test.ts) from
# Debian's packages, offline, as scripts/build-interop-servers.sh builds the servers:
# test/support/interop/grpc-go-client/main.go against Debian's grpc-go sources in /usr/share/gocode
# (golang-google-grpc-dev), GOPATH mode, GOPROXY=off, with messages generated from grpc-proto's
# grpc/testing/*.proto by a protoc-gen-go built from Debian's golang/protobuf 1.3 sources.
# Outputs go to .build/interop-client/<hash of the inputs>/ (git-ignored; its own folder, so a build
# of the servers and one of the client never remove each other's); a second run with the same
# inputs returns at once. Concurrent runs wait for each other (flock). Prints the output directory
# on its last line.
# Usage: bash scripts/build-interop-client.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

PROTOS=/usr/share/grpc-proto
GOCODE=/usr/share/gocode
FILES=(grpc/testing/empty.proto grpc/testing/messages.proto grpc/testing/test.proto)
SOURCE=test/support/interop/grpc-go-client/main.go

missing=()
command -v go >/dev/null 2>&1 || missing+=(golang-go)
[ -d "$GOCODE/src/google.golang.org/grpc" ] || missing+=(golang-google-grpc-dev)
[ -d "$GOCODE/src/github.com/golang/protobuf/protoc-gen-go" ] || missing+=(golang-github-golang-protobuf-1-3-dev)
command -v protoc >/dev/null 2>&1 || missing+=(protobuf-compiler)
[ -f "$PROTOS/grpc/testing/test.proto" ] || missing+=(grpc-proto)
if [ ${#missing[@]} -gt 0 ]; then
  echo "build-interop-client: missing Debian packages: ${missing[*]}." >&2
  echo "Install them with: apt-get install --no-install-recommends ${missing[*]} (as .ci/run does)." >&2
  exit 1
fi

OUT="$ROOT/.build/interop-client"
mkdir -p "$OUT"
exec 9>"$OUT/.lock"
flock 9

HASH=$(
  {
    cat scripts/build-interop-client.sh "$SOURCE"
    for f in "${FILES[@]}"; do cat "$PROTOS/$f"; done
    go version
    dpkg-query -W golang-google-grpc-dev golang-github-golang-protobuf-1-3-dev grpc-proto protobuf-compiler 2>/dev/null || true
  } | sha256sum | cut -c1-16
)
DEST="$OUT/$HASH"
if [ -f "$DEST/.done" ]; then
  echo "$DEST"
  exit 0
fi

START=$(date +%s)
echo "build-interop-client: building into $DEST" >&2
rm -rf "$DEST" "$DEST.tmp"
WORK="$DEST.tmp"
GOPATH_DIR="$WORK/gopath"
PKG="$GOPATH_DIR/src/protocall-interop"
mkdir -p "$PKG/client" "$WORK/bin"

export GO111MODULE=off GOPROXY=off GOFLAGS= GOPATH="$GOPATH_DIR:$GOCODE" GOCACHE="$OUT/go-cache"
go build -o "$WORK/bin/protoc-gen-go" github.com/golang/protobuf/protoc-gen-go
protoc -I"$PROTOS" --plugin=protoc-gen-go="$WORK/bin/protoc-gen-go" \
  --go_out=plugins=grpc,paths=source_relative:"$PKG" "${FILES[@]}"
cp "$SOURCE" "$PKG/client/main.go"
go build -o "$WORK/grpc-go-interop-client" protocall-interop/client

rm -rf "$GOPATH_DIR" "$WORK/bin"
touch "$WORK/.done"
mv "$WORK" "$DEST"
# Older builds (other inputs) are not needed any more; the Go build cache stays.
find "$OUT" -mindepth 1 -maxdepth 1 -type d ! -name go-cache ! -name "$HASH" -exec rm -rf {} +
echo "build-interop-client: built in $(( $(date +%s) - START )) s" >&2
echo "$DEST"
