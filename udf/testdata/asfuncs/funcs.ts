// Test functions in AssemblyScript following Sluice's calling convention
// (package udf), built by the tests with
//   asc funcs.ts -o asfuncs.wasm --runtime stub --use abort= -O

// @ts-ignore: decorator
@external("sluice", "result_null")
declare function result_null(): void;

let args: usize = 0;
let argsCap: i32 = 0;

// sluice_alloc keeps one buffer, grown as needed: arguments only need to
// live for the call.
export function sluice_alloc(n: i32): i32 {
  if (n > argsCap) {
    args = heap.alloc(<usize>n);
    argsCap = n;
  }
  return <i32>args;
}

export function as_add_one(nulls: i64, x: i64): i64 {
  if ((nulls & 1) != 0) {
    result_null();
    return 0;
  }
  return x + 1;
}

let out: usize = 0;
let outCap: i32 = 0;

// as_reverse reverses BYTES.
export function as_reverse(nulls: i64, p: i32, n: i32): i64 {
  if ((nulls & 1) != 0) {
    result_null();
    return 0;
  }
  if (n > outCap) {
    out = heap.alloc(<usize>n);
    outCap = n;
  }
  for (let i = 0; i < n; i++) {
    store<u8>(out + <usize>i, load<u8>(<usize>p + <usize>(n - 1 - i)));
  }
  return (<i64>out << 32) | <i64>n;
}
