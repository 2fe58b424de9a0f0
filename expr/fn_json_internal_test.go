package expr

import "testing"

func TestJSPlainNumber(t *testing.T) {
	for in, want := range map[string]string{
		"1": "1", "-0": "0", "1.50": "1.50", "1e2": "100", "1.5e3": "1500", "1.5E+1": "15",
		"1e-2": "0.01", "12.5e-1": "1.25", "-2.5e-3": "-0.0025", "0.0e5": "0", "-0.0": "0.0", "-1.50": "-1.50",
		"123456789012345678901234": "123456789012345678901234", "0.5e1": "5",
	} {
		if got := jsPlainNumber(in); got != want {
			t.Errorf("jsPlainNumber(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestJSPath(t *testing.T) {
	for in, want := range map[string]string{
		"$.a.b": "a|b", "$.a[0]": "a|0", "$['a b'][1]": "a b|1", `$["x"].y`: "x|y", "$": "",
	} {
		toks, err := jsPath(in)
		got := ""
		for i, tk := range toks {
			if i > 0 {
				got += "|"
			}
			got += tk
		}
		if err != nil || got != want {
			t.Errorf("jsPath(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"a.b", "$.", "$[0", "$['a]", "$x"} {
		if _, err := jsPath(bad); err == nil {
			t.Errorf("jsPath(%s) succeeded", bad)
		}
	}
}
