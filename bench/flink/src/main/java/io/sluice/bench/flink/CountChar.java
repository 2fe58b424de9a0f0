package io.sluice.bench.flink;

import org.apache.flink.table.functions.ScalarFunction;

/** Nexmark q14's count_char(s, c): how many times the character c occurs in s (0 for NULL). */
public final class CountChar extends ScalarFunction {
    public long eval(String s, String c) {
        if (s == null || c == null || c.isEmpty()) {
            return 0;
        }
        char ch = c.charAt(0);
        long n = 0;
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) == ch) {
                n++;
            }
        }
        return n;
    }
}
