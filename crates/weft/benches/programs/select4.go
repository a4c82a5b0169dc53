// Select over 4 buffered channels: four senders each send their share of
// the values on their own channel of capacity 16 and close it; one
// receiver takes them with a 4-way select, setting a channel to nil once
// it is closed and drained. Unlike fanin (unbuffered channels, every
// select parks or meets a parked sender), several cases are usually ready
// at once, so this measures the select's ready path and its random choice.
// Args: [messages] (default 1,000,000, split evenly). Same as select4.weft.
package main

import (
	"fmt"
	"os"
	"strconv"
)

func produce(out chan int, from int, count int) {
	for i := 0; i < count; i++ {
		out <- from + i
	}
	close(out)
}

func main() {
	n := 1000000
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	per := n / 4
	c0 := make(chan int, 16)
	c1 := make(chan int, 16)
	c2 := make(chan int, 16)
	c3 := make(chan int, 16)
	go produce(c0, 0, per)
	go produce(c1, per, per)
	go produce(c2, 2*per, per)
	go produce(c3, 3*per, per)
	open := 4
	count := 0
	sum := 0
	for open > 0 {
		select {
		case v, ok := <-c0:
			if !ok {
				c0 = nil
				open--
			} else {
				count++
				sum += v
			}
		case v, ok := <-c1:
			if !ok {
				c1 = nil
				open--
			} else {
				count++
				sum += v
			}
		case v, ok := <-c2:
			if !ok {
				c2 = nil
				open--
			} else {
				count++
				sum += v
			}
		case v, ok := <-c3:
			if !ok {
				c3 = nil
				open--
			} else {
				count++
				sum += v
			}
		}
	}
	fmt.Println("select4 received", count, "sum", sum)
}
