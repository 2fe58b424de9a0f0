// Test functions in C following Sluice's calling convention (package udf),
// built by the tests with
//   clang --target=wasm32 -nostdlib -O2 -Wl,--no-entry -o cfuncs.wasm funcs.c

__attribute__((import_module("sluice"), import_name("result_null"))) void result_null(void);

static unsigned char args[1 << 16];
static unsigned char out[1 << 16];

// sluice_alloc hands out one static buffer: arguments only need to live
// for the call.
__attribute__((export_name("sluice_alloc"))) int sluice_alloc(int n) {
	return n <= (int)sizeof args ? (int)args : 0;
}

__attribute__((export_name("c_add_one"))) long long c_add_one(long long nulls, long long x) {
	if (nulls & 1) {
		result_null();
		return 0;
	}
	return x + 1;
}

// c_upper upper-cases ASCII letters.
__attribute__((export_name("c_upper"))) long long c_upper(long long nulls, int p, int n) {
	if (nulls & 1) {
		result_null();
		return 0;
	}
	const unsigned char *s = (const unsigned char *)p;
	if (n > (int)sizeof out) {
		n = (int)sizeof out;
	}
	for (int i = 0; i < n; i++) {
		unsigned char c = s[i];
		out[i] = (c >= 'a' && c <= 'z') ? c - 32 : c;
	}
	return ((long long)(unsigned)(int)out << 32) | (unsigned)n;
}
