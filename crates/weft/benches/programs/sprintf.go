// Formatting: n fmt.Sprintf calls of a few verbs; prints the total length.
// Same as sprintf.weft.
package main

import (
	"fmt"
	"os"
	"strconv"
)

func main() {
	n := 1000000
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	total := 0
	for i := 0; i < n; i++ {
		s := fmt.Sprintf("%d|%8.3f|%-6s|%x|%v", i, float64(i)/7.0, "ab", i, i%3 == 0)
		total += len(s)
	}
	fmt.Println("sprintf", n, "total", total)
}
