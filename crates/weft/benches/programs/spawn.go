// Spawn: main starts 100,000 goroutines, each sending its number once on
// one unbuffered channel, then receives all the values and sums them; the
// goroutines block in their send until main gets to them. Args: [tasks]
// (default 100,000). Same as spawn.weft.
package main

import (
	"fmt"
	"os"
	"strconv"
)

func send(out chan int, v int) {
	out <- v
}

func main() {
	n := 100000
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	ch := make(chan int)
	for i := 0; i < n; i++ {
		go send(ch, i)
	}
	sum := 0
	for i := 0; i < n; i++ {
		sum += <-ch
	}
	fmt.Println("spawned", n, "sum", sum)
}
