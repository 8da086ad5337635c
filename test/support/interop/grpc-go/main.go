// The gRPC interop TestService on grpc-go, for the third-party parity tests
// (test/parity/interop.test.ts). Debian's grpc-go source package leaves out grpc-go's interop/
// directory, so this is a port of its server (interop/test_utils.go, testServer) with the reflection
// service that grpc-go ships (v1alpha). scripts/build-interop.sh generates the messages from
// the grpc-proto package's grpc/testing/*.proto and builds this file offline from Debian's sources.
//
// It listens on 127.0.0.1 with an ephemeral plain-text port and, with -cert and -key, a second TLS
// port, then prints one line of JSON with the ports: {"plain":N,"tls":M}.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	testpb "protocall-interop/grpc/testing"
)

const (
	initialMetadataKey  = "x-grpc-test-echo-initial"
	trailingMetadataKey = "x-grpc-test-echo-trailing-bin"
)

type testServer struct {
	testpb.UnimplementedTestServiceServer
}

func newPayload(t testpb.PayloadType, size int32) (*testpb.Payload, error) {
	if size < 0 {
		return nil, status.Errorf(codes.InvalidArgument, "requested a response with invalid length %d", size)
	}
	if t != testpb.PayloadType_COMPRESSABLE {
		return nil, status.Errorf(codes.InvalidArgument, "unsupported payload type: %d", t)
	}
	return &testpb.Payload{Type: t, Body: make([]byte, size)}, nil
}

// echoMetadata sends the echo headers back: the initial one as a response header, the binary one as
// a trailer (the interop custom_metadata case).
func echoMetadata(ctx context.Context, sendHeader func(metadata.MD) error, setTrailer func(metadata.MD)) error {
	md, ok := metadata.FromIncomingContext(ctx)
	if !ok {
		return nil
	}
	if v, ok := md[initialMetadataKey]; ok {
		if err := sendHeader(metadata.Pairs(initialMetadataKey, v[0])); err != nil {
			return err
		}
	}
	if v, ok := md[trailingMetadataKey]; ok {
		setTrailer(metadata.Pairs(trailingMetadataKey, v[0]))
	}
	return nil
}

// sleep waits for the interval, or until the call ends (deadline, cancel).
func sleep(ctx context.Context, us int32) error {
	if us <= 0 {
		return nil
	}
	t := time.NewTimer(time.Duration(us) * time.Microsecond)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
}

func echoStatus(s *testpb.EchoStatus) error {
	if s != nil && s.Code != 0 {
		return status.Error(codes.Code(s.Code), s.Message)
	}
	return nil
}

func (s *testServer) EmptyCall(ctx context.Context, in *testpb.Empty) (*testpb.Empty, error) {
	return new(testpb.Empty), nil
}

func (s *testServer) UnaryCall(ctx context.Context, in *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	err := echoMetadata(ctx,
		func(md metadata.MD) error { return grpc.SendHeader(ctx, md) },
		func(md metadata.MD) { grpc.SetTrailer(ctx, md) })
	if err != nil {
		return nil, err
	}
	if err := echoStatus(in.GetResponseStatus()); err != nil {
		return nil, err
	}
	pl, err := newPayload(in.GetResponseType(), in.GetResponseSize())
	if err != nil {
		return nil, err
	}
	return &testpb.SimpleResponse{Payload: pl}, nil
}

func (s *testServer) StreamingOutputCall(args *testpb.StreamingOutputCallRequest, stream testpb.TestService_StreamingOutputCallServer) error {
	for _, p := range args.GetResponseParameters() {
		if err := sleep(stream.Context(), p.GetIntervalUs()); err != nil {
			return err
		}
		pl, err := newPayload(args.GetResponseType(), p.GetSize())
		if err != nil {
			return err
		}
		if err := stream.Send(&testpb.StreamingOutputCallResponse{Payload: pl}); err != nil {
			return err
		}
	}
	return nil
}

func (s *testServer) StreamingInputCall(stream testpb.TestService_StreamingInputCallServer) error {
	var sum int
	for {
		in, err := stream.Recv()
		if err == io.EOF {
			return stream.SendAndClose(&testpb.StreamingInputCallResponse{AggregatedPayloadSize: int32(sum)})
		}
		if err != nil {
			return err
		}
		sum += len(in.GetPayload().GetBody())
	}
}

func (s *testServer) FullDuplexCall(stream testpb.TestService_FullDuplexCallServer) error {
	if err := echoMetadata(stream.Context(), stream.SendHeader, stream.SetTrailer); err != nil {
		return err
	}
	for {
		in, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := echoStatus(in.GetResponseStatus()); err != nil {
			return err
		}
		for _, p := range in.GetResponseParameters() {
			if err := sleep(stream.Context(), p.GetIntervalUs()); err != nil {
				return err
			}
			pl, err := newPayload(in.GetResponseType(), p.GetSize())
			if err != nil {
				return err
			}
			if err := stream.Send(&testpb.StreamingOutputCallResponse{Payload: pl}); err != nil {
				return err
			}
		}
	}
}

func (s *testServer) HalfDuplexCall(stream testpb.TestService_HalfDuplexCallServer) error {
	var msgBuf []*testpb.StreamingOutputCallRequest
	for {
		in, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		msgBuf = append(msgBuf, in)
	}
	for _, m := range msgBuf {
		for _, p := range m.GetResponseParameters() {
			if err := sleep(stream.Context(), p.GetIntervalUs()); err != nil {
				return err
			}
			pl, err := newPayload(m.GetResponseType(), p.GetSize())
			if err != nil {
				return err
			}
			if err := stream.Send(&testpb.StreamingOutputCallResponse{Payload: pl}); err != nil {
				return err
			}
		}
	}
	return nil
}

func serve(opts ...grpc.ServerOption) (int, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	s := grpc.NewServer(opts...)
	testpb.RegisterTestServiceServer(s, &testServer{})
	reflection.Register(s)
	go func() {
		if err := s.Serve(lis); err != nil {
			log.Fatalf("serve: %v", err)
		}
	}()
	return lis.Addr().(*net.TCPAddr).Port, nil
}

func main() {
	cert := flag.String("cert", "", "TLS certificate file (PEM); with -key, also serve TLS on a second port")
	key := flag.String("key", "", "TLS private key file (PEM)")
	flag.Parse()

	ports := map[string]int{}
	plain, err := serve()
	if err != nil {
		log.Fatalf("listen: %v", err)
	}
	ports["plain"] = plain
	if *cert != "" || *key != "" {
		creds, err := credentials.NewServerTLSFromFile(*cert, *key)
		if err != nil {
			log.Fatalf("TLS: %v", err)
		}
		tls, err := serve(grpc.Creds(creds))
		if err != nil {
			log.Fatalf("listen: %v", err)
		}
		ports["tls"] = tls
	}
	line, _ := json.Marshal(ports)
	fmt.Println(string(line))
	// Runs until killed or until stdin closes (the test process went away).
	io.Copy(io.Discard, os.Stdin)
}
