#!/usr/bin/env bash
# Builds the third-party gRPC peers of the interop tests from Debian's packages, offline: the servers
# of the parity tests (test/parity/interop.test.ts, the proxy's) and the client of the mock server's
# (test/cli/mock-go-client.test.ts):
#   - grpc-go: test/support/interop/grpc-go/main.go (the interop TestService plus grpc-go's reflection
#     service) and test/support/interop/grpc-go-client/main.go (the interop client) against Debian's
#     grpc-go sources in /usr/share/gocode (golang-google-grpc-dev), in GOPATH mode (Debian lays its Go
#     libraries out as a GOPATH) with GOPROXY=off. Their messages come from the grpc-proto package's
#     grpc/testing/*.proto through protoc and a protoc-gen-go built from Debian's golang/protobuf
#     sources (the 1.3 line that Debian's grpc-go builds against, grpc plugin included), once for both.
#   - grpc Python: the same protos as Python modules, generated with grpc_tools.protoc
#     (python3-grpc-tools); test/support/interop/grpc-python/server.py imports them.
#   - interop.binpb: a descriptor set of the same protos (protoc --include_imports), the --schema for
#     the Python server, which has no reflection service in Debian.
# Outputs go to .build/interop/<hash of the inputs>/ (git-ignored); a second run with the same inputs
# (sources, protos, package versions) returns at once. Concurrent runs wait for each other (flock).
# Prints the output directory on its last line.
# Usage: bash scripts/build-interop.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

PROTOS=/usr/share/grpc-proto
GOCODE=/usr/share/gocode
PYTHON=/usr/bin/python3
FILES=(grpc/testing/empty.proto grpc/testing/messages.proto grpc/testing/test.proto)
PACKAGES=(golang-go golang-google-grpc-dev python3-grpcio python3-grpc-tools grpc-proto protobuf-compiler)

missing=()
command -v go >/dev/null 2>&1 || missing+=(golang-go)
[ -d "$GOCODE/src/google.golang.org/grpc/reflection" ] || missing+=(golang-google-grpc-dev)
[ -d "$GOCODE/src/github.com/golang/protobuf/protoc-gen-go" ] || missing+=(golang-github-golang-protobuf-1-3-dev)
command -v protoc >/dev/null 2>&1 || missing+=(protobuf-compiler)
[ -f "$PROTOS/grpc/testing/test.proto" ] || missing+=(grpc-proto)
"$PYTHON" -c 'import grpc' 2>/dev/null || missing+=(python3-grpcio)
"$PYTHON" -c 'import grpc_tools.protoc' 2>/dev/null || missing+=(python3-grpc-tools)
if [ ${#missing[@]} -gt 0 ]; then
  echo "build-interop: missing Debian packages: ${missing[*]}." >&2
  echo "Install them with: apt-get install --no-install-recommends ${missing[*]} (as .ci/run does)." >&2
  exit 1
fi

OUT="$ROOT/.build/interop"
mkdir -p "$OUT"
exec 9>"$OUT/.lock"
flock 9

HASH=$(
  {
    cat scripts/build-interop.sh test/support/interop/grpc-go/main.go test/support/interop/grpc-go-client/main.go
    for f in "${FILES[@]}"; do cat "$PROTOS/$f"; done
    go version
    dpkg-query -W "${PACKAGES[@]}" golang-github-golang-protobuf-1-3-dev 2>/dev/null || true
  } | sha256sum | cut -c1-16
)
DEST="$OUT/$HASH"
if [ -f "$DEST/.done" ]; then
  echo "$DEST"
  exit 0
fi

START=$(date +%s)
echo "build-interop: building into $DEST (the first build of grpc-go takes a few minutes)" >&2
rm -rf "$DEST" "$DEST.tmp"
WORK="$DEST.tmp"
GOPATH_DIR="$WORK/gopath"
PKG="$GOPATH_DIR/src/protocall-interop"
mkdir -p "$PKG/client" "$WORK/bin" "$WORK/python"

export GO111MODULE=off GOPROXY=off GOFLAGS= GOPATH="$GOPATH_DIR:$GOCODE" GOCACHE="$OUT/go-cache"
go build -o "$WORK/bin/protoc-gen-go" github.com/golang/protobuf/protoc-gen-go
protoc -I"$PROTOS" --plugin=protoc-gen-go="$WORK/bin/protoc-gen-go" \
  --go_out=plugins=grpc,paths=source_relative:"$PKG" "${FILES[@]}"
cp test/support/interop/grpc-go/main.go "$PKG/main.go"
go build -o "$WORK/grpc-go-interop-server" protocall-interop
cp test/support/interop/grpc-go-client/main.go "$PKG/client/main.go"
go build -o "$WORK/grpc-go-interop-client" protocall-interop/client

"$PYTHON" -m grpc_tools.protoc -I"$PROTOS" --python_out="$WORK/python" --grpc_python_out="$WORK/python" "${FILES[@]}"
protoc -I"$PROTOS" --include_imports -o "$WORK/interop.binpb" "${FILES[@]}"

rm -rf "$GOPATH_DIR" "$WORK/bin"
touch "$WORK/.done"
mv "$WORK" "$DEST"
# Older builds (other inputs) are not needed any more; the Go build cache stays.
find "$OUT" -mindepth 1 -maxdepth 1 -type d ! -name go-cache ! -name "$HASH" -exec rm -rf {} +
echo "build-interop: built in $(( $(date +%s) - START )) s" >&2
echo "$DEST"
