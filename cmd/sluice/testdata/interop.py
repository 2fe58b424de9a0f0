"""Interop with Python confluent-kafka through a Schema Registry.

cmd/sluice/interop_test.go runs this in the venv scripts/install-python-kafka
makes:

  produce --format F --bootstrap B --registry URL --topic T
      creates topic T (one partition) and writes RECORDS to it with
      confluent-kafka's serializer for F, which registers the writer schema
      under T-value as any Confluent client would.
  consume --format F --bootstrap B --registry URL --topic T --count N
      reads N records from the start of T with the matching deserializer
      (the writer schema comes from the registry, by the id each record
      carries) and prints each value as one JSON line with sorted keys.

  produce-new --bootstrap B --topic T
      writes RECORDS' ids as plain keys and values to T, which need not
      exist: the producer's metadata request creates it on a broker that
      auto-creates topics, as Kafka does by default. Prints the partition
      and offset of each delivery.

  schema --registry URL --subject S
      prints the text of S's latest schema as SchemaRegistryClient reads
      it (a plain GET: a Protobuf schema as .proto source).

F is avro, protobuf or json. Values print as JSON does, except: a decimal
as its string ("12.50"), bytes as hex.
"""

import argparse
import base64
import decimal
import importlib
import json
import os
import sys
import tempfile
import time

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.serialization import MessageField, SerializationContext, StringSerializer

# Client metrics push (KIP-714) only logs that the broker assigned an id.
QUIET = {"enable.metrics.push": False}

AVRO_SCHEMA = json.dumps({
    "type": "record",
    "name": "Order",
    "namespace": "sluice.interop",
    "fields": [
        {"name": "id", "type": "string"},
        {"name": "qty", "type": "int"},
        {"name": "total", "type": "long"},
        {"name": "price", "type": "double"},
        {"name": "paid", "type": "boolean"},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": "long"}},
        {"name": "address", "type": {
            "type": "record",
            "name": "Address",
            "fields": [
                {"name": "city", "type": "string"},
                {"name": "zip", "type": "int"},
            ],
        }},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
    ],
})

# The records every format writes: the same values, so one golden set of
# output lines serves each format's test.
RECORDS = [
    {
        "id": "o-1", "qty": 3, "total": 9000000000, "price": 2.5, "paid": True,
        "note": "first", "tags": ["a", "b"], "attrs": {"x": 1, "y": -2},
        "address": {"city": "Zürich", "zip": 8001}, "amount": decimal.Decimal("12.50"),
    },
    {
        "id": "o-2", "qty": -7, "total": -1, "price": -0.125, "paid": False,
        "note": None, "tags": [], "attrs": {},
        "address": {"city": "", "zip": 0}, "amount": decimal.Decimal("-0.01"),
    },
    {
        "id": "o-3", "qty": 2147483647, "total": 0, "price": 1e100, "paid": True,
        "note": "", "tags": ["ü", "\"q\""], "attrs": {"k": 9223372036854775807},
        "address": {"city": "Kyōto", "zip": 6000000}, "amount": decimal.Decimal("9999999.99"),
    },
]


def jsonable(v):
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, dict):
        return {k: jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    return v


def avro_serde(registry, produce):
    from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
    if produce:
        return AvroSerializer(registry, AVRO_SCHEMA), lambda r: r
    return AvroDeserializer(registry), jsonable


# The protobuf schema: RECORDS' fields in proto3 (a decimal has no proto3
# scalar; ksqlDB's confluent.type.Decimal is left out to keep it simple).
# Written as a FileDescriptorProto, the form confluent-kafka registers.
PROTO_FILE = """
name: "interop_order.proto"
package: "sluice.interop"
syntax: "proto3"
message_type {
  name: "Order"
  field { name: "id" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
  field { name: "qty" number: 2 label: LABEL_OPTIONAL type: TYPE_INT32 }
  field { name: "total" number: 3 label: LABEL_OPTIONAL type: TYPE_INT64 }
  field { name: "price" number: 4 label: LABEL_OPTIONAL type: TYPE_DOUBLE }
  field { name: "paid" number: 5 label: LABEL_OPTIONAL type: TYPE_BOOL }
  field { name: "note" number: 6 label: LABEL_OPTIONAL type: TYPE_STRING }
  field { name: "tags" number: 7 label: LABEL_REPEATED type: TYPE_STRING }
  field { name: "attrs" number: 8 label: LABEL_REPEATED type: TYPE_MESSAGE type_name: ".sluice.interop.Order.AttrsEntry" }
  field { name: "address" number: 9 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".sluice.interop.Address" }
  nested_type {
    name: "AttrsEntry"
    field { name: "key" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
    field { name: "value" number: 2 label: LABEL_OPTIONAL type: TYPE_INT64 }
    options { map_entry: true }
  }
}
message_type {
  name: "Address"
  field { name: "city" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
  field { name: "zip" number: 2 label: LABEL_OPTIONAL type: TYPE_INT32 }
}
"""


def proto_class(fdp, index=0):
    """The message class of fdp's message at index, in a pool of its own."""
    # What a schema of Sluice's may import: the wrappers, and Confluent's
    # decimal, into the default pool.
    import google.protobuf.wrappers_pb2  # noqa: F401
    import confluent_kafka.schema_registry.confluent.type.decimal_pb2  # noqa: F401
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    pool = descriptor_pool.DescriptorPool()

    def add(name):
        try:
            pool.FindFileByName(name)
            return
        except KeyError:
            pass
        dep = descriptor_pb2.FileDescriptorProto()
        fd = descriptor_pool.Default().FindFileByName(name)
        fd.CopyToProto(dep)
        for d in dep.dependency:
            add(d)
        pool.Add(dep)

    for d in fdp.dependency:
        add(d)
    fd = pool.Add(fdp)
    return message_factory.GetMessageClass(fd.message_types_by_name[fdp.message_type[index].name])


def proto_json(m):
    """A message as the dict the Avro side prints: every field, an unset
    message field null, int64 as a number, a confluent.type.Decimal as its
    string."""
    d = m.DESCRIPTOR
    if d.full_name == "confluent.type.Decimal":
        return str(decimal.Decimal(int.from_bytes(m.value, "big", signed=True)).scaleb(-m.scale))
    if d.full_name.startswith("google.protobuf.") and d.full_name.endswith("Value"):
        return m.value
    out = {}
    for f in d.fields:
        v = getattr(m, f.name)
        if f.message_type is not None and f.message_type.GetOptions().map_entry:
            vf = f.message_type.fields_by_name["value"]
            out[f.name] = {k: proto_json(x) if vf.message_type else x for k, x in v.items()}
        elif f.is_repeated:
            out[f.name] = [proto_json(x) if f.message_type else x for x in v]
        elif f.message_type is not None:
            out[f.name] = proto_json(v) if m.HasField(f.name) else None
        else:
            out[f.name] = v
    return out


def protobuf_serde(registry, produce, topic):
    from google.protobuf import descriptor_pb2, text_format
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
    if produce:
        cls = proto_class(text_format.Parse(PROTO_FILE, descriptor_pb2.FileDescriptorProto()))

        def to_message(r):
            r = {k: v for k, v in r.items() if k != "amount" and v is not None}
            return cls(**r)
        return ProtobufSerializer(cls, registry), to_message
    # The reader's message class is the writer's: the schema Sluice
    # registered for the topic, as the registry serves it serialized.
    from confluent_kafka.schema_registry.common.protobuf import _str_to_proto
    latest = registry.get_latest_version(f"{topic}-value", "serialized")
    cls = proto_class(_str_to_proto("sluice", latest.schema.schema_str))
    return ProtobufDeserializer(cls, None, registry), proto_json


# The JSON Schema of RECORDS' fields as a plain JSON Schema writer (not
# Kafka Connect) would put them: no connect.index, so the properties'
# order is the columns'; "connect.type": "int32" only where INT matters
# (qty, zip), other integers read as BIGINT; the map as an object of
# additionalProperties only. A decimal has no JSON Schema type
# (Connect's Decimal is a "number" with a title): amount is left out.
JSON_SCHEMA = json.dumps({
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Order",
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "qty": {"type": "integer", "connect.type": "int32"},
        "total": {"type": "integer"},
        "price": {"type": "number"},
        "paid": {"type": "boolean"},
        "note": {"oneOf": [{"type": "null"}, {"type": "string"}]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "attrs": {"type": "object", "additionalProperties": {"type": "integer"}},
        "address": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "zip": {"type": "integer", "connect.type": "int32"},
            },
            "required": ["city", "zip"],
            "additionalProperties": False,
        },
    },
    "required": ["id", "qty", "total", "price", "paid", "note", "tags", "attrs", "address"],
    "additionalProperties": False,
})


def json_serde(registry, produce):
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
    if produce:
        return JSONSerializer(JSON_SCHEMA, registry), lambda r: {k: v for k, v in r.items() if k != "amount"}
    # No reader schema: the writer's, the one Sluice registered, comes
    # from the registry by the id each record carries, and each record is
    # validated against it.
    return JSONDeserializer(None, schema_registry_client=registry), lambda r: r


def serde(fmt, registry, produce, topic):
    if fmt == "avro":
        return avro_serde(registry, produce)
    if fmt == "protobuf":
        return protobuf_serde(registry, produce, topic)
    if fmt == "json":
        return json_serde(registry, produce)
    raise SystemExit(f"interop.py: no format {fmt}")


def create_topic(bootstrap, topic):
    admin = AdminClient({"bootstrap.servers": bootstrap, **QUIET})
    fs = admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
    for f in fs.values():
        f.result(timeout=30)


def produce(args):
    registry = SchemaRegistryClient({"url": args.registry})
    ser, to_value = serde(args.format, registry, True, args.topic)
    create_topic(args.bootstrap, args.topic)
    p = Producer({"bootstrap.servers": args.bootstrap, "enable.idempotence": True, **QUIET})
    key = StringSerializer()
    errors = []

    def delivered(err, _msg):
        if err is not None:
            errors.append(err)

    for r in RECORDS:
        ctx = SerializationContext(args.topic, MessageField.VALUE)
        p.produce(args.topic, key=key(r["id"]), value=ser(to_value(r), ctx), on_delivery=delivered)
    left = p.flush(30)
    if errors or left:
        raise SystemExit(f"interop.py: produce: {errors}, {left} undelivered")
    print(f"produced {len(RECORDS)} records to {args.topic}", file=sys.stderr)


def produce_new(args):
    p = Producer({"bootstrap.servers": args.bootstrap, "message.timeout.ms": 30000, **QUIET})
    delivered = []

    def on_delivery(err, msg):
        delivered.append(f"error {err}" if err is not None else f"{msg.key().decode()} -> partition {msg.partition()} offset {msg.offset()}")

    for r in RECORDS:
        p.produce(args.topic, key=r["id"].encode(), value=r["id"].encode(), on_delivery=on_delivery)
    left = p.flush(40)
    for d in delivered:
        print(d)
    if left:
        raise SystemExit(f"interop.py: produce-new: {left} records undelivered after 40s")


def schema(args):
    print(SchemaRegistryClient({"url": args.registry}).get_latest_version(args.subject).schema.schema_str, end="")


def consume(args):
    registry = SchemaRegistryClient({"url": args.registry})
    # Made at the first record: Sluice registers the topic's schema when its
    # query starts, perhaps after this consumer does.
    de = to_json = None
    c = Consumer({
        "bootstrap.servers": args.bootstrap,
        "group.id": f"interop-{os.getpid()}",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        # The topic may not exist yet (Sluice's query creates it): look
        # again each second, not each 5 minutes.
        "topic.metadata.refresh.interval.ms": 1000,
        **QUIET,
    })
    c.subscribe([args.topic])
    deadline = time.monotonic() + args.timeout
    n = 0
    try:
        while n < args.count:
            if time.monotonic() > deadline:
                raise SystemExit(f"interop.py: consume: {n} of {args.count} records from {args.topic} in {args.timeout}s")
            msg = c.poll(1.0)
            if msg is None:
                continue
            if msg.error():
                # The topic may not be known to this client yet.
                if msg.error().code() in (KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_TOPIC):
                    continue
                raise KafkaException(msg.error())
            if de is None:
                de, to_json = serde(args.format, registry, False, args.topic)
            v = de(msg.value(), SerializationContext(msg.topic(), MessageField.VALUE))
            print(json.dumps(to_json(v), sort_keys=True, ensure_ascii=False), flush=True)
            n += 1
    finally:
        c.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("produce", "consume"):
        s = sub.add_parser(name)
        s.add_argument("--format", required=True, choices=["avro", "protobuf", "json"])
        s.add_argument("--bootstrap", required=True)
        s.add_argument("--registry", required=True)
        s.add_argument("--topic", required=True)
        if name == "consume":
            s.add_argument("--count", type=int, required=True)
            s.add_argument("--timeout", type=float, default=60)
    s = sub.add_parser("produce-new")
    s.add_argument("--bootstrap", required=True)
    s.add_argument("--topic", required=True)
    s = sub.add_parser("schema")
    s.add_argument("--registry", required=True)
    s.add_argument("--subject", required=True)
    args = ap.parse_args()
    {"produce": produce, "consume": consume, "produce-new": produce_new, "schema": schema}[args.cmd](args)


if __name__ == "__main__":
    main()
