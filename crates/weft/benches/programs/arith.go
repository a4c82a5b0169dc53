// Tight arithmetic loop: a multiply-add-modulo recurrence in one goroutine,
// no channels. Args: [iterations] (default 20,000,000). Same as arith.weft.
package main

import (
	"fmt"
	"os"
	"strconv"
)

func main() {
	n := 20000000
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	x := 0
	for i := 0; i < n; i++ {
		x = (x*31 + i) % 1000003
	}
	fmt.Println("iterations", n, "result", x)
}
