// SPSC, capacity 1: one producer sends 0..n-1 on a channel of capacity
// 1 and closes it; main receives every value and sums them.
// Args: [values] (default 2,000,000). Same as spsc1.weft.
package main

import (
	"fmt"
	"os"
	"strconv"
)

func produce(out chan int, n int) {
	for i := 0; i < n; i++ {
		out <- i
	}
	close(out)
}

func main() {
	n := 2000000
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	ch := make(chan int, 1)
	go produce(ch, n)
	count := 0
	sum := 0
	for v := range ch {
		count++
		sum += v
	}
	fmt.Println("spsc cap", cap(ch), "received", count, "sum", sum)
}
