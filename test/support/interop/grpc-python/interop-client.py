"""A grpc Python (C-core) client of the interop TestService, for the proxy's tests
(test/cli/proxy-clients.test.ts): the interop cases large_unary, client_streaming, server_streaming,
ping_pong, status_code_and_message and custom_metadata against the address given, each answer
printed as one line of JSON (sizes and a SHA-256 of every payload, status codes and details, the
echoed metadata), so that two runs can be compared byte for byte. Its messages are those
scripts/build-interop.sh generates (the directory is the first argument), as for server.py.

Run with Debian's Python (/usr/bin/python3), which has the grpc and protobuf modules.
"""

import hashlib
import json
import os
import sys

import grpc

grpc.__path__.append(os.path.join(os.path.abspath(sys.argv[1]), "grpc"))
from grpc.testing import messages_pb2, test_pb2_grpc  # noqa: E402

stub = test_pb2_grpc.TestServiceStub(grpc.insecure_channel(sys.argv[2]))
TIMEOUT = 20


def payload(p):
    return {"size": len(p.body), "sha256": hashlib.sha256(p.body).hexdigest()}


def request_payload(n):
    return messages_pb2.Payload(body=bytes(i % 251 for i in range(n)))


out = {}
out["large_unary"] = payload(
    stub.UnaryCall(
        messages_pb2.SimpleRequest(response_size=314159, payload=request_payload(271828)), timeout=TIMEOUT
    ).payload
)
out["client_streaming"] = stub.StreamingInputCall(
    iter([messages_pb2.StreamingInputCallRequest(payload=request_payload(n)) for n in (27182, 8, 1828, 45904)]),
    timeout=TIMEOUT,
).aggregated_payload_size
out["server_streaming"] = [
    payload(r.payload)
    for r in stub.StreamingOutputCall(
        messages_pb2.StreamingOutputCallRequest(
            response_parameters=[messages_pb2.ResponseParameters(size=n) for n in (31415, 9, 2653, 58979)]
        ),
        timeout=TIMEOUT,
    )
]
out["ping_pong"] = [
    payload(r.payload)
    for r in stub.FullDuplexCall(
        iter(
            [
                messages_pb2.StreamingOutputCallRequest(
                    response_parameters=[messages_pb2.ResponseParameters(size=n)], payload=request_payload(n + 1)
                )
                for n in (31415, 9, 2653, 58979)
            ]
        ),
        timeout=TIMEOUT,
    )
]
try:
    stub.UnaryCall(
        messages_pb2.SimpleRequest(response_status=messages_pb2.EchoStatus(code=2, message="test status message")),
        timeout=TIMEOUT,
    )
    out["status_code_and_message"] = None
except grpc.RpcError as e:
    out["status_code_and_message"] = {"code": e.code().name, "details": e.details()}
response, call = stub.UnaryCall.with_call(
    messages_pb2.SimpleRequest(response_size=1),
    metadata=[("x-grpc-test-echo-initial", "test_initial_metadata_value"), ("x-grpc-test-echo-trailing-bin", b"\xab\xab\xab")],
    timeout=TIMEOUT,
)
out["custom_metadata"] = {
    "initial": [[k, v] for k, v in call.initial_metadata() if k.startswith("x-grpc-test")],
    "trailing": [[k, v.hex() if isinstance(v, bytes) else v] for k, v in call.trailing_metadata() if k.startswith("x-grpc-test")],
}
for name, answer in out.items():
    print(json.dumps({name: answer}, sort_keys=True))
