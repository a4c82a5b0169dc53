// The concurrent prime sieve (Hoare, CSP 1978; the Go tour's version): a
// generator feeds a chain of filter goroutines, one per prime found so far.
// Args: [count] (default 1,000): prints the count-th prime. Same as sieve.weft.
package main

import (
	"fmt"
	"os"
	"strconv"
)

func generate(ch chan int) {
	for i := 2; ; i++ {
		ch <- i
	}
}

func filter(in chan int, out chan int, prime int) {
	for {
		i := <-in
		if i%prime != 0 {
			out <- i
		}
	}
}

func main() {
	n := 1000
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	ch := make(chan int)
	go generate(ch)
	prime := 0
	for i := 0; i < n; i++ {
		prime = <-ch
		ch1 := make(chan int)
		go filter(ch, ch1, prime)
		ch = ch1
	}
	fmt.Println("prime", n, "is", prime)
}
