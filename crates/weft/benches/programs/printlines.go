// Printing: n lines, each a few values, with fmt.Println to os.Stdout
// (unbuffered, as Weft's print). Same as printlines.weft.
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
	for i := 0; i < n; i++ {
		fmt.Println("line", i, "of", n, i%7 == 0)
	}
}
