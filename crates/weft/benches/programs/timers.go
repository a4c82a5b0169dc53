// Timers: 10,000 goroutines each sleep 1 ms and wake up, 100 times over,
// then report how many times they woke; main adds the reports. At least
// 100 ms of sleeping, so it measures the timer queue and the wake-ups, not
// the work. Args: [tasks] [sleeps] (default 10,000 goroutines, 100 sleeps
// each). Same as timers.weft (sleep(1)).
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

func sleeper(sleeps int, done chan int) {
	woke := 0
	for i := 0; i < sleeps; i++ {
		time.Sleep(time.Millisecond)
		woke++
	}
	done <- woke
}

func main() {
	n := 10000
	sleeps := 100
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	if len(os.Args) > 2 {
		sleeps, _ = strconv.Atoi(os.Args[2])
	}
	done := make(chan int)
	for i := 0; i < n; i++ {
		go sleeper(sleeps, done)
	}
	total := 0
	for i := 0; i < n; i++ {
		total += <-done
	}
	fmt.Println("timers", n, "sleeps", sleeps, "woke", total)
}
