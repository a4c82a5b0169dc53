// Daisy chain: a chain of goroutines, each receiving from its right
// neighbour and passing the value plus one to its left; the leftmost end is
// read by main. Args: [tasks] [rounds] (default 10,000 tasks, 10 rounds);
// every round sends one value down the whole chain. Same as daisychain.weft.
package main

import (
	"fmt"
	"os"
	"strconv"
)

func whisper(left chan int, right chan int, rounds int) {
	for r := 0; r < rounds; r++ {
		left <- 1 + <-right
	}
}

func main() {
	n := 10000
	rounds := 10
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	if len(os.Args) > 2 {
		rounds, _ = strconv.Atoi(os.Args[2])
	}
	leftmost := make(chan int)
	right := leftmost
	left := leftmost
	for i := 0; i < n; i++ {
		right = make(chan int)
		go whisper(left, right, rounds)
		left = right
	}
	total := 0
	for r := 0; r < rounds; r++ {
		right <- r
		total += <-leftmost
	}
	fmt.Println("chain", n, "rounds", rounds, "total", total)
}
