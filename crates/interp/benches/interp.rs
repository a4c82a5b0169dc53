//! Interpreter benchmarks: dispatch (a counting loop with a constant bound,
//! a recurrence with a variable bound, recursive calls) and
//! task switching (ping-pong, a daisy chain), each a small Weft program run
//! through `run_program` with one worker. Compiled in CI, timed by hand:
//! `cargo bench --bench interp`.

use criterion::{criterion_group, criterion_main, Criterion};
use weft_interp::{run_program, RunConfig};

const LOOP: &str = "
func main() {
	s := 0
	for i := 0; i < 1000000; i++ {
		s += i % 7
	}
	print(s)
}";

const ARITH: &str = "
func main() {
	n := 1000000
	x := 0
	for i := 0; i < n; i++ {
		x = (x*31 + i) % 1000003
	}
	print(x)
}";

const FIB: &str = "
func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}
func main() { print(fib(25)) }";

const PINGPONG: &str = "
func main() {
	ping := make(chan int)
	pong := make(chan int)
	go {
		for v := range ping {
			pong <- v + 1
		}
	}
	x := 0
	for i := 0; i < 100000; i++ {
		ping <- x
		x = <-pong
	}
	print(x)
}";

const DAISY: &str = "
func whisper(left chan int, right chan int) { left <- 1 + <-right }
func main() {
	leftmost := make(chan int)
	right := leftmost
	left := leftmost
	for i := 0; i < 10000; i++ {
		right = make(chan int)
		go whisper(left, right)
		left = right
	}
	go { right <- 1 }
	print(<-leftmost)
}";

fn bench(c: &mut Criterion) {
    for (name, src, workers) in [
        ("loop_1m", LOOP, 1),
        ("arith_1m", ARITH, 1),
        ("fib_25", FIB, 1),
        ("pingpong_100k", PINGPONG, 1),
        ("daisy_10k", DAISY, 1),
        ("pingpong_100k_w2", PINGPONG, 2),
    ] {
        let prog = weft_lang::compile("bench.weft", src).expect("bench program compiles");
        c.bench_function(name, |b| {
            b.iter(|| {
                run_program(
                    &prog,
                    RunConfig {
                        workers,
                        seed: 1,
                        capture: true,
                        ..RunConfig::default()
                    },
                )
                .expect("runs")
            })
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches);
