// MPMC: 4 producers and 4 consumers share one channel of capacity 128;
// the producers split the values 0..n-1 between them, each consumer sums
// what it receives and sends its sum to main, which adds the four sums.
// A closer goroutine waits for the producers' done signals and closes the
// channel. Args: [values] (default 1,000,000). Same as mpmc.weft.
package main

import (
	"fmt"
	"os"
	"strconv"
)

func produce(out chan int, from int, count int, done chan int) {
	for i := 0; i < count; i++ {
		out <- from + i
	}
	done <- 1
}

func consume(in chan int, sums chan int) {
	s := 0
	for v := range in {
		s += v
	}
	sums <- s
}

func closer(ch chan int, done chan int, producers int) {
	for i := 0; i < producers; i++ {
		<-done
	}
	close(ch)
}

func main() {
	n := 1000000
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	producers := 4
	consumers := 4
	per := n / producers
	ch := make(chan int, 128)
	done := make(chan int)
	sums := make(chan int)
	for p := 0; p < producers; p++ {
		go produce(ch, p*per, per, done)
	}
	for c := 0; c < consumers; c++ {
		go consume(ch, sums)
	}
	go closer(ch, done, producers)
	total := 0
	for c := 0; c < consumers; c++ {
		total += <-sums
	}
	fmt.Println("mpmc", producers*per, "producers", producers, "consumers", consumers, "sum", total)
}
