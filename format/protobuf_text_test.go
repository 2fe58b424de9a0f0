package format

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/descriptorpb"
)

// compiledProto compiles .proto text as a registered schema and returns
// its descriptor.
func compiledProto(t *testing.T, text string) *descriptorpb.FileDescriptorProto {
	t.Helper()
	fd, err := CompileProtobuf(Schema{Type: SchemaProtobuf, Text: text})
	if err != nil {
		t.Fatalf("compile:\n%s\n%v", text, err)
	}
	return protodesc.ToFileDescriptorProto(fd)
}

// TestProtobufTextRoundTrip: a schema's descriptor written as text
// compiles to the same descriptor, for every construct the writer knows.
func TestProtobufTextRoundTrip(t *testing.T) {
	for name, text := range map[string]string{
		"proto3": `syntax = "proto3";
package sluice.interop;
import "google/protobuf/wrappers.proto";
option java_package = "io.sluice.interop";
option java_multiple_files = true;
option optimize_for = SPEED;
message Order {
  string id = 1;
  int32 qty = 2;
  repeated string tags = 3;
  map<string, int64> attrs = 4;
  Address address = 5;
  optional string note = 6;
  google.protobuf.StringValue maybe = 7;
  repeated int32 packed_off = 8 [packed = false, deprecated = true];
  string renamed = 9 [json_name = "other"];
  map<int32, Address> by_zip = 10;
  oneof choice {
    string text = 11;
    Kind kind = 12;
  }
  message Address {
    string city = 1;
    int32 zip = 2;
    Kind kind = 3;
  }
  enum Kind {
    option allow_alias = true;
    KIND_UNSPECIFIED = 0;
    KIND_A = 1;
    KIND_ALIAS = 1 [deprecated = true];
    reserved 5, 7 to 9;
    reserved "OLD";
  }
  reserved 20, 30 to max;
  reserved "gone";
}
message Address {
  string line = 1;
}
service Orders {
  rpc Get (Order) returns (Order);
  rpc Watch (stream Order) returns (stream Order) {
    option deprecated = true;
  }
}
`,
		"proto2": `syntax = "proto2";
message Legacy {
  required int64 id = 1;
  optional string name = 2 [default = "a \"quoted\"\n name"];
  optional bytes raw = 3 [default = "\001\377x"];
  optional double ratio = 4 [default = inf];
  optional Color color = 5 [default = GREEN];
  repeated int32 nums = 6 [packed = true];
  optional bool flag = 7 [default = true];
  oneof pick {
    int32 a = 8;
    string b = 9;
  }
  extensions 100 to 199;
  enum Color {
    RED = 0;
    GREEN = 1;
  }
}
`,
	} {
		t.Run(name, func(t *testing.T) {
			want := compiledProto(t, text)
			printed, err := ProtobufText(want)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, compiledProto(t, printed), protocmp.Transform()); diff != "" {
				t.Errorf("the printed text compiles to another descriptor (-want +got):\n%s\nprinted:\n%s", diff, printed)
			}
		})
	}
}

// TestProtobufText: the text of a small schema, exactly.
func TestProtobufText(t *testing.T) {
	printed, err := ProtobufText(compiledProto(t, `syntax = "proto3"; package shop;
import "google/protobuf/wrappers.proto";
message Order { string id = 1; map<string, Line> lines = 2; google.protobuf.Int64Value total = 3;
  message Line { int32 qty = 1; } }`))
	if err != nil {
		t.Fatal(err)
	}
	want := `syntax = "proto3";
package shop;

import "google/protobuf/wrappers.proto";

message Order {
  string id = 1;
  map<string, .shop.Order.Line> lines = 2;
  .google.protobuf.Int64Value total = 3;
  message Line {
    int32 qty = 1;
  }
}
`
	if diff := cmp.Diff(want, printed); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
}

// TestProtobufTextRefused: what text cannot say is an error.
func TestProtobufTextRefused(t *testing.T) {
	fdp := compiledProto(t, `syntax = "proto2"; message M { optional group G = 1 { optional int32 x = 2; } }`)
	if _, err := ProtobufText(fdp); err == nil || err.Error() != "unsupported by format: PROTOBUF schema: group g cannot be written as text" {
		t.Errorf("group: %v", err)
	}
}
