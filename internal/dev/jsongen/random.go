package jsongen

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// Random checks T (Equivalent) on n inputs shaped like T's JSON, which a
// byte fuzzer rarely builds deep: T's members, nested, in any order, some
// left out, with what encoding/json treats specially mixed in at a rate
// that varies from input to input: null anywhere, a member given twice or
// in another case (ſ, the Kelvin sign, İ, ı, å), a key with an escape or
// invalid UTF-8, integer map keys such as "01", "+1", " 1", numbers at
// and past each kind's range, -0, exponents, strings with escapes,
// surrogates, U+2028, invalid UTF-8, times out of range, a value of
// another kind, unknown members. It logs how many the fast path decoded.
func Random[T any](t *testing.T, n int, seed int64) {
	t.Helper()
	typ := reflect.TypeFor[T]()
	g := &shaper{r: rand.New(rand.NewSource(seed))}
	fast := 0
	for i := 0; i < n; i++ {
		// One input in four almost clean, the others noisier.
		g.noise = []int{40, 10, 3, 1}[i%4]
		var b strings.Builder
		g.value(&b, typ, 0)
		data := []byte(b.String())
		if Equivalent[T](t, data) {
			fast++
		}
	}
	t.Logf("%s: the fast path decoded %d of %d inputs", typ, fast, n)
}

type shaper struct {
	r *rand.Rand
	// noise: one choice in noise is an edge case.
	noise int
}

func (g *shaper) odd(n int) bool { return g.r.Intn(n*g.noise) == 0 }

func (g *shaper) pick(list []string) string { return list[g.r.Intn(len(list))] }

var (
	shapeNumbers = []string{"0", "1", "-1", "7", "42",
		"-0", "1.5", "-0.0", "1e2", "1E+2", "1e-2", "0.1e1", "127", "128", "-129", "255", "256",
		"2147483647", "2147483648", "-2147483649", "4294967296",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
		"18446744073709551615", "18446744073709551616", "1e308", "1e309", "-1e309", "1e-400", "4.9e-324",
		"1e21", "1e20", "123456789012345678901234567890", "0.000001", "0.0000001"}
	shapeStrings = []string{`"a"`, `"b c"`, `""`, `"x\ny"`, `"é"`,
		`"A\/B"`, `"\u0041"`, `"\ud800"`, `"\ud83d\ude00"`, "\"\u2028\u2029\"", `"\u2028"`, `"a\tb\"c\\d"`,
		`"<&>"`, "\"\xff\"", "\"\xed\xa0\x80\"", `"\b\f\r"`, `"\u0000"`, "\"\x7f\"", "\"\xc3\xa9\"", `"null"`, `"1"`}
	shapeTimes = []string{`"2026-01-01T00:00:00Z"`, `"2026-01-01T00:00:00.123456789+01:00"`,
		`"0000-01-01T00:00:00Z"`, `"9999-12-31T23:59:59Z"`, `"2026-01-01T00:00:00+24:00"`, `"2026-01-01T00:00:00z"`,
		`"2026-01-01T00:00:00\u005a"`, `"2026-02-30T00:00:00Z"`, `"2026-01-01 00:00:00Z"`, `"2026-01-01T00:00:00.Z"`}
	shapeOther = []string{"null", "true", "false", "0", `"s"`, "[]", "{}", "[null]", `{"a":[{"b":null}]}`, `[1,"x",{}]`}
	shapeRaw   = []string{`{ "a" : [ 1 , 2 ] }`, `[ ]`, `null`, `{"x":"\u00e9"}`, "\"\xff\"", `-0`, `1e400`}
	intKeys    = []string{"1", "2", "10", "01", "+1", " 1", "-0", "0", "-1", "2147483648", "9223372036854775808", "1e2", "x", ""}
	stringKeys = []string{"a", "b", "key", "A", "", "é", `\u0061`, "\xff", "\u2028"}
)

// key is name as written, or one of its near misses.
func (g *shaper) key(name string) string {
	if !g.odd(8) {
		return name
	}
	switch g.r.Intn(11) {
	case 0:
		return strings.ToUpper(name)
	case 1:
		return strings.ToUpper(name[:1]) + name[1:]
	case 2:
		return strings.Replace(strings.Replace(name, "s", "\u017f", 1), "k", "\u212a", 1)
	case 3:
		return strings.Replace(name, "i", "\u0130", 1)
	case 4:
		return strings.Replace(name, "i", "\u0131", 1)
	case 5:
		return `\u00` + strings.ToLower(string("0123456789ABCDEF"[name[0]>>4])+string("0123456789ABCDEF"[name[0]&15])) + name[1:]
	case 6:
		return name + "x"
	case 7:
		return strings.Replace(name, "_", "-", 1)
	case 8:
		return name + "\xff"
	case 9:
		return strings.Replace(name, "a", "\u00e5", 1)
	}
	return `\/` + name
}

func (g *shaper) ws(b *strings.Builder) {
	if g.r.Intn(6) == 0 {
		b.WriteString(g.pick([]string{" ", "\n", "\t", "\r", "  "}))
	}
}

func (g *shaper) value(b *strings.Builder, t reflect.Type, depth int) {
	g.ws(b)
	defer g.ws(b)
	if depth > 6 || g.odd(12) {
		b.WriteString(g.pick(shapeOther))
		return
	}
	switch {
	case t == timeType:
		if g.odd(3) {
			b.WriteString(g.pick(shapeTimes))
		} else {
			b.WriteString(shapeTimes[g.r.Intn(2)])
		}
		return
	case t == rawType:
		if g.r.Intn(2) == 0 {
			b.WriteString(g.pick(shapeOther))
		} else {
			b.WriteString(g.pick(shapeRaw))
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		if g.r.Intn(4) == 0 {
			b.WriteString("null")
			return
		}
		g.value(b, t.Elem(), depth+1)
	case reflect.Slice:
		b.WriteByte('[')
		for i := range g.r.Intn(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			g.value(b, t.Elem(), depth+1)
		}
		b.WriteByte(']')
	case reflect.Map:
		b.WriteByte('{')
		for i := range g.r.Intn(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			k := g.pick(intKeys[:3])
			if t.Key().Kind() == reflect.String {
				k = g.pick(stringKeys[:3])
				if g.odd(4) {
					k = g.pick(stringKeys)
				}
			} else if g.odd(4) {
				k = g.pick(intKeys)
			}
			b.WriteString(`"` + k + `":`)
			g.value(b, t.Elem(), depth+1)
		}
		b.WriteByte('}')
	case reflect.Struct:
		b.WriteByte('{')
		first := true
		for _, i := range g.r.Perm(t.NumField()) {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" || g.r.Intn(3) == 0 {
				continue
			}
			if name == "" {
				name = f.Name
			}
			times := 1
			if g.odd(15) {
				times = 2
			}
			for range times {
				if !first {
					b.WriteByte(',')
				}
				first = false
				b.WriteString(`"` + g.key(name) + `":`)
				g.value(b, f.Type, depth+1)
			}
		}
		if g.odd(10) {
			if !first {
				b.WriteByte(',')
			}
			b.WriteString(`"zz_unknown":{"q":[1,{"r":"}"}]}`)
		}
		b.WriteByte('}')
	case reflect.String:
		if g.odd(3) {
			b.WriteString(g.pick(shapeStrings))
		} else {
			b.WriteString(g.pick(shapeStrings[:5]))
		}
	case reflect.Bool:
		b.WriteString(g.pick([]string{"true", "false"}))
	case reflect.Float64, reflect.Int, reflect.Int64, reflect.Int32, reflect.Int16, reflect.Int8,
		reflect.Uint, reflect.Uint64, reflect.Uint32, reflect.Uint16, reflect.Uint8:
		if g.odd(3) {
			b.WriteString(g.pick(shapeNumbers))
		} else {
			b.WriteString(g.pick(shapeNumbers[:5]))
		}
	default:
		b.WriteString(g.pick(shapeOther))
	}
}
