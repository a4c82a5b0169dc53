// Go side of the runtime benchmarks (benches/runtime.rs runs it and prints
// the figures beside Weft's and tokio's). Each scenario matches one in
// benches/runtime.rs; the output is one "name value unit" line per figure.
//
//	go run ./crates/rt/benches/go            # all scenarios
//	go run ./crates/rt/benches/go -reps 5
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func rssKB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v
		}
	}
	return 0
}

// 100,000 goroutines blocked on a channel receive at once.
func blocked(n int) (totalKB int64, perTaskB float64) {
	runtime.GC()
	before := rssKB()
	release := make(chan struct{})
	var started sync.WaitGroup
	var done sync.WaitGroup
	started.Add(n)
	done.Add(n)
	for i := 0; i < n; i++ {
		go func() {
			started.Done()
			<-release
			done.Done()
		}()
	}
	started.Wait()
	time.Sleep(10 * time.Millisecond)
	after := rssKB()
	close(release)
	done.Wait()
	return after - before, float64(after-before) * 1024 / float64(n)
}

// 1,000,000 short goroutines spawned and finished.
func spawn(n int) time.Duration {
	t0 := time.Now()
	var left int64 = int64(n)
	fin := make(chan struct{})
	for i := 0; i < n; i++ {
		go func() {
			if atomic.AddInt64(&left, -1) == 0 {
				close(fin)
			}
		}()
	}
	<-fin
	return time.Since(t0)
}

// A daisy chain of n goroutines passing a value (Pike's "whispers").
func daisy(n int) time.Duration {
	t0 := time.Now()
	leftmost := make(chan int)
	right := leftmost
	left := leftmost
	for i := 0; i < n; i++ {
		right = make(chan int)
		go func(l, r chan int) { l <- 1 + <-r }(left, right)
		left = right
	}
	go func(c chan int) { c <- 1 }(right)
	v := <-leftmost
	if v != n+1 {
		panic("daisy chain lost a value")
	}
	return time.Since(t0)
}

// Ping-pong between two goroutines over unbuffered channels; time per hand-off.
func pingpong(rounds int) time.Duration {
	ping := make(chan int)
	pong := make(chan int)
	go func() {
		for v := range ping {
			pong <- v + 1
		}
		close(pong)
	}()
	t0 := time.Now()
	v := 0
	for i := 0; i < rounds; i++ {
		ping <- v
		v = <-pong
	}
	el := time.Since(t0)
	close(ping)
	return el / time.Duration(2*rounds)
}

func best(reps int, f func() time.Duration) time.Duration {
	b := time.Duration(1 << 62)
	for i := 0; i < reps; i++ {
		if d := f(); d < b {
			b = d
		}
	}
	return b
}

func main() {
	reps := flag.Int("reps", 3, "repetitions (best is reported)")
	flag.Parse()
	kb, per := blocked(100_000)
	fmt.Printf("blocked_100k_total %.1f MB\n", float64(kb)/1024)
	fmt.Printf("blocked_100k_per_task %.0f B\n", per)
	fmt.Printf("spawn_1m %.1f ms\n", best(*reps, func() time.Duration { return spawn(1_000_000) }).Seconds()*1000)
	fmt.Printf("daisy_10k %.2f ms\n", best(*reps, func() time.Duration { return daisy(10_000) }).Seconds()*1000)
	fmt.Printf("pingpong %.3f us\n", best(*reps, func() time.Duration { return pingpong(200_000) }).Seconds()*1e6)
	fmt.Printf("gomaxprocs %d\n", runtime.GOMAXPROCS(0))
}
