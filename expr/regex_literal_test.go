package expr

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// requiredLiteral finds a literal only where every match must hold it.
func TestRequiredLiteral(t *testing.T) {
	for _, c := range []struct{ pattern, want string }{
		{`(&|^)channel_id=([^&]*)`, "channel_id="},
		{`abc`, "abc"},
		{`a+bcd`, "bcd"},
		{`(xyz)+q`, "xyz"},
		{`(xy){2,3}`, "xy"},
		{`(xy)*q`, "q"},
		{`(xy)?`, ""},
		{`ab|cd`, ""},
		{`(?i)abc`, ""},
		{`a(?i:bcd)e`, "a"},
		{`\d+`, ""},
		{`.*`, ""},
		{`x\x{FFFD}y`, ""},
		{`[`, ""}, // does not parse
	} {
		if got := requiredLiteral(c.pattern); got != c.want {
			t.Errorf("requiredLiteral(%q) = %q, want %q", c.pattern, got, c.want)
		}
	}
}

// TestRegexPrefilterExact: over random inputs, an input the prefilter
// turns away never matches, so the functions' answers are the matcher's.
func TestRegexPrefilterExact(t *testing.T) {
	patterns := []string{`(&|^)channel_id=([^&]*)`, `a+b`, `(ab){2}`, `b(a|c)a`, `id=\d`, `\x{FFFD}a`}
	rng := rand.New(rand.NewPCG(3, 4))
	const alphabet = "ab&=_cdil1\xff"
	for _, p := range patterns {
		re, err := compileStrRegex(p)
		if err != nil {
			t.Fatal(err)
		}
		plain := regexp.MustCompile(p)
		matched := 0
		for range 20_000 {
			b := make([]byte, rng.IntN(16))
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
			s := string(b)
			if rng.IntN(4) == 0 {
				s += "channel_id=" + s
			}
			m := plain.MatchString(s)
			if m {
				matched++
			}
			if re.cannotMatch(s) && m {
				t.Fatalf("%q turned away %q, which matches", p, s)
			}
		}
		if matched == 0 {
			t.Errorf("%q matched none of the inputs: the test shows nothing", p)
		}
	}
}
