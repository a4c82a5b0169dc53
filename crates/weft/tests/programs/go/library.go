// The Go program whose output is library.out: the same operations as
// library.weft with Go's strings, math and sort packages (wf prints a
// float64 as Weft prints floats).
package main

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

func wf(x float64) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "+Inf"
	case math.IsInf(x, -1):
		return "-Inf"
	}
	a := math.Abs(x)
	if a != 0 && (a < 1e-4 || a >= 1e21) {
		return strconv.FormatFloat(x, 'e', -1, 64)
	}
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

func wfs(l []float64) string {
	parts := make([]string, len(l))
	for i, x := range l {
		parts[i] = wf(x)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func chr(c int) string {
	return string(rune(c))
}

func main() {
	s := "héllo, wörld"
	fmt.Println(len(s), s[1], s[2], s[0:2]+s[2:] == s, len(s[0:2]), s[1:3] == "é")
	for i, r := range "aé😀" {
		fmt.Println(i, r)
	}
	bad := s[0:2] + "x"
	for i, r := range bad {
		fmt.Println(i, r)
	}
	fmt.Println('a', '\n', 'é', '\'', '\\', '\x41', '\u00e9', '\U0001F600')
	fmt.Println(strings.Split("a,b,,c", ","), len(strings.Split("", ",")), strings.Split("abc", ""), len(strings.Split("", "")))
	fmt.Println(strings.Fields("  x  y\tz\n "), len(strings.Fields("   ")), strings.Join([]string{"a", "b", "c"}, ", "))
	fmt.Println(strings.Contains("seafood", "foo"), strings.Contains("seafood", ""), strings.Contains("", "a"))
	fmt.Println(strings.Index("chicken", "ken"), strings.Index("chicken", "dmr"), strings.Index("héllo", "l"))
	fmt.Println(strings.HasPrefix("golang", "go"), strings.HasPrefix("go", "golang"), strings.HasSuffix("golang", "ng"))
	fmt.Println(strings.ReplaceAll("oink oink oink", "k", "ky"), strings.ReplaceAll("oink", "", "-"), strings.ReplaceAll("aaa", "a", ""))
	fmt.Println("["+strings.TrimSpace("  \t hi there \n")+"]", "["+strings.TrimSpace("   ")+"]", strings.ToLower("HeLLo É"), strings.ToUpper("straße é"))
	fmt.Println(strings.Repeat("ab", 3), "["+strings.Repeat("x", 0)+"]", chr(65), chr(233), chr(0x1F600), chr(-1), chr(0xD800))
	f1, _ := strconv.ParseFloat("3.25", 64)
	f2, _ := strconv.ParseFloat("-1e3", 64)
	f3, _ := strconv.ParseFloat("inf", 64)
	i1, _ := strconv.Atoi("42")
	fmt.Println(wf(f1), wf(f2), wf(f3), i1)
	fmt.Println(3, 7, wf(2.5), 1, 3, wf(-1), wf(2.5))
	fmt.Println(wf(math.Sqrt(16)), wf(math.Pow(2, 10)), math.Pow(2, 0.5) > 1.414, wf(math.Floor(-1.5)), wf(math.Ceil(1.2)), wf(math.Floor(2)))
	fmt.Println(wf(math.Exp(0)), wf(math.Log(1)), math.Exp(1) > 2.718, math.Log(math.Exp(2)) > 1.99, math.IsNaN(math.NaN()), math.IsNaN(1))
	fmt.Println(wf(math.Inf(1)), wf(math.Inf(-1)), math.Inf(1) > 1e308, math.NaN() == math.NaN(), false)
	l := make([]int, 3)
	l[1] = 5
	fmt.Println(l, len(make([]string, 2)), wfs(make([]float64, 2)), make([]bool, 1))
	a := []int{3, 1, 2, -5}
	sort.Ints(a)
	b := []string{"b", "a", "B"}
	sort.Strings(b)
	c := []float64{2.5, -1, 0}
	sort.Float64s(c)
	fmt.Println(a, b, wfs(c))
	fmt.Println([]int{3, 2, 1}, []string{}, true, false)
	words := strings.Fields("the quick brown fox jumps over the lazy dog")
	sorted := append([]string{}, words...)
	sort.Strings(sorted)
	fmt.Println(sorted, words[0], len(words))
}
