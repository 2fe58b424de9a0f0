#!/usr/bin/env python3
"""psycopg_query.py: runs one parameterised query with psycopg 3 and prints what Python sees.

    psycopg_query.py [--binary] DSN SQL [PARAMS_JSON]

SQL uses psycopg's placeholders: %s (psycopg picks the format), %t (text) or %b (binary).
PARAMS_JSON is a JSON list of [TYPE, VALUE] pairs; TYPE is one of int, bigint, double, decimal,
string, bool, bytes (VALUE in hex), date (YYYY-MM-DD), time (HH:MM:SS[.f]), timestamp
(YYYY-MM-DD HH:MM:SS[.f]); a null VALUE binds None. --binary asks for the results in binary
(a cursor made with binary=True); without it they come as text.

Output, one JSON line each: first "description" with [name, type_code] per column, then a line
per row holding each value's repr (Decimal('1.5'), datetime.date(2024, 1, 2), ...; bytes as
bytes.fromhex('0102')); None prints as null. A database error prints "ERROR SQLSTATE message" on
stderr and exits 1.
"""
import datetime
import decimal
import json
import sys

import psycopg


def value(kind, v):
    if v is None:
        return None
    conv = {
        "int": int,
        "bigint": int,
        "double": float,
        "decimal": decimal.Decimal,
        "string": str,
        "bool": bool,
        "bytes": bytes.fromhex,
        "date": datetime.date.fromisoformat,
        "time": datetime.time.fromisoformat,
        "timestamp": datetime.datetime.fromisoformat,
    }.get(kind)
    if conv is None:
        raise SystemExit(f"usage: unknown parameter type {kind!r}")
    return conv(v)


def show(v):
    if v is None:
        return None
    if isinstance(v, (bytes, bytearray, memoryview)):
        return f"bytes.fromhex('{bytes(v).hex()}')"
    return repr(v)


def main(argv):
    binary = False
    if argv and argv[0] == "--binary":
        binary = True
        argv = argv[1:]
    if len(argv) not in (2, 3):
        raise SystemExit(__doc__)
    dsn, sql = argv[0], argv[1]
    params = None
    if len(argv) == 3:
        try:
            params = [value(k, v) for k, v in json.loads(argv[2])]
        except (ValueError, TypeError) as e:
            raise SystemExit(f"usage: PARAMS_JSON {argv[2]!r}: {e}")
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            with conn.cursor(binary=binary) as cur:
                cur.execute(sql, params)
                desc = cur.description or []
                print(json.dumps({"description": [[d.name, d.type_code] for d in desc]}))
                for row in cur.fetchall():
                    print(json.dumps([show(v) for v in row]))
    except psycopg.Error as e:
        print(f"ERROR {e.sqlstate} {str(e).strip()}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1:])
