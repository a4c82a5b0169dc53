// Worker pool: a feeder puts jobs on a buffered channel, a pool of workers
// squares each job modulo 1,000 and sends the result to a second buffered
// channel, and main adds the results. Args: [jobs] [workers] (default
// 500,000 jobs, 8 workers). Same as workerpool.weft.
package main

import (
	"fmt"
	"os"
	"strconv"
)

func worker(jobs chan int, results chan int) {
	for j := range jobs {
		results <- j * j % 1000
	}
}

func feed(jobs chan int, n int) {
	for i := 0; i < n; i++ {
		jobs <- i
	}
	close(jobs)
}

func main() {
	n := 500000
	w := 8
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	if len(os.Args) > 2 {
		w, _ = strconv.Atoi(os.Args[2])
	}
	jobs := make(chan int, 64)
	results := make(chan int, 64)
	for i := 0; i < w; i++ {
		go worker(jobs, results)
	}
	go feed(jobs, n)
	total := 0
	for i := 0; i < n; i++ {
		total += <-results
	}
	fmt.Println("jobs", n, "workers", w, "total", total)
}
