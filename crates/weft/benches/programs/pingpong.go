// Ping-pong: two goroutines pass a counter back and forth over two
// unbuffered channels; each pass is one message. Args: [messages]
// (default 1,000,000). Same algorithm and output as pingpong.weft.
package main

import (
	"fmt"
	"os"
	"strconv"
)

func pong(in chan int, out chan int) {
	for v := range in {
		out <- v + 1
	}
}

func main() {
	n := 1000000
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	ping := make(chan int)
	back := make(chan int)
	go pong(ping, back)
	v := 0
	for i := 0; i < n/2; i++ {
		ping <- v + 1
		v = <-back
	}
	close(ping)
	fmt.Println("messages", v)
}
