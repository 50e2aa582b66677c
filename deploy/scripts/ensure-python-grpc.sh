#!/usr/bin/env bash
# The Python client test (test/api/grpc-python-client.test.ts) runs docs/grpc.md's Debian route:
# Debian's protoc and grpc_python_plugin generate the client, Debian's python3-grpcio runs it.
set -euo pipefail
if [ -x /usr/bin/protoc ] && [ -x /usr/bin/grpc_python_plugin ] && /usr/bin/python3 -c "import grpc, google.protobuf" 2>/dev/null; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "the Python client test needs Debian's protobuf-compiler, protobuf-compiler-grpc, python3-grpcio and python3-protobuf: apt-get install protobuf-compiler protobuf-compiler-grpc python3-grpcio python3-protobuf" >&2
  exit 1
fi
echo "installing Debian's protobuf-compiler, protobuf-compiler-grpc, python3-grpcio and python3-protobuf for the Python client test"
apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq protobuf-compiler protobuf-compiler-grpc python3-grpcio python3-protobuf >/dev/null
