"""A grpc Python (C-core) client of the interop TestService, for the mock server's tests
(test/cli/mock-clients.test.ts): a unary call, a unary call that fails, and a server stream against
the address given, printed as one line of JSON. Its messages are those scripts/build-interop.sh
generates (the directory is the first argument), as for server.py beside it.

Run with Debian's Python (/usr/bin/python3), which has the grpc and protobuf modules.
"""

import json
import os
import sys

import grpc

grpc.__path__.append(os.path.join(os.path.abspath(sys.argv[1]), "grpc"))
from grpc.testing import messages_pb2, test_pb2_grpc  # noqa: E402

channel = grpc.insecure_channel(sys.argv[2])
stub = test_pb2_grpc.TestServiceStub(channel)
out = {}
response, call = stub.UnaryCall.with_call(messages_pb2.SimpleRequest(fill_username=True), timeout=20)
out["unary"] = {
    "username": response.username,
    "body": list(response.payload.body),
    "headers": {k: v for k, v in call.initial_metadata() if k.startswith("x-")},
}
try:
    stub.UnaryCall(messages_pb2.SimpleRequest(response_size=7), timeout=20)
    out["error"] = None
except grpc.RpcError as e:
    out["error"] = {"code": e.code().name, "details": e.details()}
out["stream"] = [
    list(r.payload.body)
    for r in stub.StreamingOutputCall(messages_pb2.StreamingOutputCallRequest(), timeout=20)
]
print(json.dumps(out))
