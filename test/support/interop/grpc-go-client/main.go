// A grpc-go client of the gRPC interop TestService, for the mock server's tests
// (test/cli/mock-go-client.test.ts): the interop test cases named as grpc-go's own interop client
// names them (--test_case=large_unary, ...), each sending the requests that case sends and checking
// the answers that case expects, against --server_host and --server_port (h2c). It is built from
// Debian's grpc-go sources by scripts/build-interop.sh. Prints "ok <case>" per case passed;
// exits 1 with the reason on the first failure.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	testpb "protocall-interop/grpc/testing"
)

var (
	host     = flag.String("server_host", "127.0.0.1", "the server's host")
	port     = flag.String("server_port", "", "the server's port")
	testCase = flag.String("test_case", "large_unary", "comma-separated test cases")
)

var (
	reqSizes  = []int{27182, 8, 1828, 45904}
	respSizes = []int{31415, 9, 2653, 58979}
)

func payload(size int) *testpb.Payload {
	return &testpb.Payload{Type: testpb.PayloadType_COMPRESSABLE, Body: make([]byte, size)}
}

func zeros(body []byte, size int) error {
	if len(body) != size || !bytes.Equal(body, make([]byte, size)) {
		return fmt.Errorf("got a payload of %d bytes, want %d zero bytes", len(body), size)
	}
	return nil
}

func emptyUnary(ctx context.Context, c testpb.TestServiceClient) error {
	_, err := c.EmptyCall(ctx, &testpb.Empty{})
	return err
}

func largeUnary(ctx context.Context, c testpb.TestServiceClient) error {
	r, err := c.UnaryCall(ctx, &testpb.SimpleRequest{
		ResponseType: testpb.PayloadType_COMPRESSABLE,
		ResponseSize: 314159,
		Payload:      payload(271828),
	})
	if err != nil {
		return err
	}
	if r.GetPayload().GetType() != testpb.PayloadType_COMPRESSABLE {
		return fmt.Errorf("got payload type %v", r.GetPayload().GetType())
	}
	return zeros(r.GetPayload().GetBody(), 314159)
}

func clientStreaming(ctx context.Context, c testpb.TestServiceClient) error {
	stream, err := c.StreamingInputCall(ctx)
	if err != nil {
		return err
	}
	for _, s := range reqSizes {
		if err := stream.Send(&testpb.StreamingInputCallRequest{Payload: payload(s)}); err != nil {
			return err
		}
	}
	r, err := stream.CloseAndRecv()
	if err != nil {
		return err
	}
	if r.GetAggregatedPayloadSize() != 74922 {
		return fmt.Errorf("got aggregated size %d, want 74922", r.GetAggregatedPayloadSize())
	}
	return nil
}

func serverStreaming(ctx context.Context, c testpb.TestServiceClient) error {
	params := []*testpb.ResponseParameters{}
	for _, s := range respSizes {
		params = append(params, &testpb.ResponseParameters{Size: int32(s)})
	}
	stream, err := c.StreamingOutputCall(ctx, &testpb.StreamingOutputCallRequest{
		ResponseType:       testpb.PayloadType_COMPRESSABLE,
		ResponseParameters: params,
	})
	if err != nil {
		return err
	}
	for i := 0; ; i++ {
		r, err := stream.Recv()
		if err == io.EOF {
			if i != len(respSizes) {
				return fmt.Errorf("got %d responses, want %d", i, len(respSizes))
			}
			return nil
		}
		if err != nil {
			return err
		}
		if i >= len(respSizes) {
			return fmt.Errorf("got more than %d responses", len(respSizes))
		}
		if err := zeros(r.GetPayload().GetBody(), respSizes[i]); err != nil {
			return fmt.Errorf("response %d: %v", i+1, err)
		}
	}
}

func pingPong(ctx context.Context, c testpb.TestServiceClient) error {
	stream, err := c.FullDuplexCall(ctx)
	if err != nil {
		return err
	}
	for i, s := range respSizes {
		err := stream.Send(&testpb.StreamingOutputCallRequest{
			ResponseType:       testpb.PayloadType_COMPRESSABLE,
			ResponseParameters: []*testpb.ResponseParameters{{Size: int32(s)}},
			Payload:            payload(reqSizes[i]),
		})
		if err != nil {
			return err
		}
		r, err := stream.Recv()
		if err != nil {
			return fmt.Errorf("response %d: %v", i+1, err)
		}
		if err := zeros(r.GetPayload().GetBody(), s); err != nil {
			return fmt.Errorf("response %d: %v", i+1, err)
		}
	}
	if err := stream.CloseSend(); err != nil {
		return err
	}
	if _, err := stream.Recv(); err != io.EOF {
		return fmt.Errorf("after the last response: got %v, want the end of the stream", err)
	}
	return nil
}

func statusCodeAndMessage(ctx context.Context, c testpb.TestServiceClient) error {
	const msg = "test status message"
	want := func(err error, what string) error {
		s, _ := status.FromError(err)
		if s.Code() != codes.Unknown || s.Message() != msg {
			return fmt.Errorf("%s: got %v %q, want Unknown %q", what, s.Code(), s.Message(), msg)
		}
		return nil
	}
	_, err := c.UnaryCall(ctx, &testpb.SimpleRequest{ResponseStatus: &testpb.EchoStatus{Code: 2, Message: msg}})
	if err := want(err, "UnaryCall"); err != nil {
		return err
	}
	stream, err := c.FullDuplexCall(ctx)
	if err != nil {
		return err
	}
	if err := stream.Send(&testpb.StreamingOutputCallRequest{ResponseStatus: &testpb.EchoStatus{Code: 2, Message: msg}}); err != nil {
		return err
	}
	if err := stream.CloseSend(); err != nil {
		return err
	}
	_, err = stream.Recv()
	return want(err, "FullDuplexCall")
}

func customMetadata(ctx context.Context, c testpb.TestServiceClient) error {
	const initial, trailing = "test_initial_metadata_value", "\xab\xab\xab"
	ctx = metadata.AppendToOutgoingContext(ctx,
		"x-grpc-test-echo-initial", initial, "x-grpc-test-echo-trailing-bin", trailing)
	var header, trailer metadata.MD
	_, err := c.UnaryCall(ctx, &testpb.SimpleRequest{ResponseSize: 314159, Payload: payload(271828)},
		grpc.Header(&header), grpc.Trailer(&trailer))
	if err != nil {
		return err
	}
	if got := header.Get("x-grpc-test-echo-initial"); len(got) != 1 || got[0] != initial {
		return fmt.Errorf("initial metadata: got %q, want %q", got, initial)
	}
	if got := trailer.Get("x-grpc-test-echo-trailing-bin"); len(got) != 1 || got[0] != trailing {
		return fmt.Errorf("trailing metadata: got %q, want %q", got, trailing)
	}
	return nil
}

var cases = map[string]func(context.Context, testpb.TestServiceClient) error{
	"empty_unary":             emptyUnary,
	"large_unary":             largeUnary,
	"client_streaming":        clientStreaming,
	"server_streaming":        serverStreaming,
	"ping_pong":               pingPong,
	"status_code_and_message": statusCodeAndMessage,
	"custom_metadata":         customMetadata,
}

func main() {
	flag.Parse()
	conn, err := grpc.Dial(net.JoinHostPort(*host, *port), grpc.WithInsecure(), grpc.WithBlock(),
		grpc.WithTimeout(20*time.Second))
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot connect: %v\n", err)
		os.Exit(1)
	}
	defer conn.Close()
	client := testpb.NewTestServiceClient(conn)
	for _, name := range strings.Split(*testCase, ",") {
		run, ok := cases[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "unknown test case %q\n", name)
			os.Exit(2)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := run(ctx, client)
		cancel()
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			os.Exit(1)
		}
		fmt.Printf("ok %s\n", name)
	}
}
