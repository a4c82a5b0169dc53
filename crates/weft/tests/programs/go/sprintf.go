// The Go program whose output is sprintf.out (each line: one fmt.Sprintf
// of the same format and arguments as sprintf.weft).
package main

import (
	"fmt"
	"math"
)

var _ = math.Pi

func main() {
	fmt.Println(fmt.Sprintf("%d|%5d|%-5d|%05d|%+d|% d", 42, 42, 42, -42, 7, 7))
	fmt.Println(fmt.Sprintf("%x|%X|%#x|%o|%#o|%b|%08b", 255, 255, 255, 8, 8, 5, 5))
	fmt.Println(fmt.Sprintf("%x|%d|%.3d|%8.3d|%-8.3d|", -255, -9223372036854775807, 7, 7, -7))
	fmt.Println(fmt.Sprintf("%.0d|%5.0d|%c|%c|%q|%+q|%U|%#U", 0, 0, 65, 128512, 233, 233, 128512, 65))
	fmt.Println(fmt.Sprintf("%f|%.2f|%8.3f|%-8.3f|%08.3f|%+.1f|% .1f", float64(3.14159), float64(3.14159), float64(2.5), float64(2.5), float64(-2.5), float64(2.0), float64(2.0)))
	fmt.Println(fmt.Sprintf("%e|%.2e|%E|%g|%.3g|%G", float64(1234.5678), float64(0.000123), float64(1e100), float64(1e-7), float64(1234.5678), float64(1e21)))
	fmt.Println(fmt.Sprintf("%v|%v|%v|%v|%v|%v|%v", float64(1.0), float64(0.1), float64(1e6), float64(123456.0), float64(1e-5), float64(0.0001), math.Copysign(0, -1)))
	fmt.Println(fmt.Sprintf("%g|%g|%.10g|%.1f|%.1f|%.2f|%.0f", float64(100000.0), float64(1234567.0), float64(1.0/3.0), float64(0.25), float64(0.35), float64(1.005), float64(2.5)))
	fmt.Println(fmt.Sprintf("%f|%v|%5.1f|%-6f|%+f|%06f|% f", math.Inf(1), math.NaN(), math.Inf(-1), math.NaN(), math.Inf(1), math.Inf(-1), math.NaN()))
	fmt.Println(fmt.Sprintf("%s|%-8s|%8s|%.2s|%5.1s|%05s|%v", "hi", "ab", "ab", "héllo", "héllo", "ab", "x"))
	fmt.Println(fmt.Sprintf("%q|%+q|%#q|%x|% x|%X|%#x", "a\"b\n\t", "héllo", "back`q", "hi", "hi", "é", "ab"))
	fmt.Println(fmt.Sprintf("%q|%q|%#q|%q", "\x00\x7f", "ü\u00ad", "raw", "\a\x1b\u2028"))
	fmt.Println(fmt.Sprintf("%t|%v|%5t|%-6v|", true, false, true, false))
	fmt.Println(fmt.Sprintf("%v|%d|%x|%v|%q|%s|%5v", []int{1, 2, 3}, []int{10, 11}, []int{255, 16}, []string{"a", "b"}, []string{"a", "b"}, []string{}, []int{1, 22}))
	fmt.Println(fmt.Sprintf("%v|%.1f|%g|%v", []float64{1, 2.5}, []float64{1, 2.25}, []float64{1e6, 0.5}, []float64{}))
	fmt.Println(fmt.Sprintf("%d|%s|%t|%f|%x", "hi", 5, 1, "x", true))
	fmt.Println(fmt.Sprintf("%d %d %d", 1))
	fmt.Println(fmt.Sprintf("%d", 1, "extra", float64(2.5), true))
	fmt.Println(fmt.Sprintf("%!|%z|%", 1, 2))
	fmt.Println(fmt.Sprintf("100%%|%5%|%-5%|%c", 1114112))
	fmt.Println(fmt.Sprintf("%*d|%-*d|%.*f|%*s", 5, 42, 5, 42, 2, float64(3.14159), -4, "ab"))
	fmt.Println(fmt.Sprintf("%[2]d %[1]d|%[3]d|%[1]s", 1, 2))
	fmt.Println(fmt.Sprintf("%v %v", []int{}, []string{""}))
	fmt.Println(fmt.Sprintf("%6.2f|%-10.4e|%+08.2f|%x", float64(-3.14159), float64(31415.9), float64(3.14159), -1))
	fmt.Println(fmt.Sprintf("%s", float64(2.5)))
	fmt.Println(fmt.Sprintf("%.3s|%.0s|%.10s", "日本語テキスト", "abc", "short"))
	fmt.Println(fmt.Sprintf("%#v|%#v|%+v|%#g|%#.3g|%#e|%#.0f", "q", 3, 3, float64(1.0), float64(2.0), float64(1.0), float64(3.0)))
	fmt.Println(fmt.Sprintf("%v|%d|%.1f|%s|%v|%v|%x", map[string]int{"b": 2, "a": 1, "é": 3, "B": 0}, map[int]int{3: 1, -1: 2}, map[string]float64{"z": 0.25, "a": 1.5}, map[string]string{"x": "y"}, map[string]int{}, map[bool][]int{true: {1}, false: {}}, map[int]string{255: "hi"}))
	fmt.Println(fmt.Sprintf("%v|%5v|%d", map[float64]float64{2: 1e6, 0.5: 2}, map[int]int{1: 2}, map[string]int{"k": 1}))
}
