//! Programs of several processes (docs/language.md, "Several processes"),
//! each process simulated by a thread with its own run, joined in memory
//! by `weft_mpi::in_memory` (the same protocol as under `mpirun`, which
//! `crates/weft/tests/mpi.rs` runs for real): `world()`'s collectives,
//! channels that cross processes, `select` on another process's channel,
//! a deadlock across processes, a panic or `exit` that ends every process,
//! and the end of the program when every `main` returned.

use std::sync::Arc;

use weft_interp::{render_result, run_program, Joined, ProcHost, RunConfig};

/// What one process printed and how it ended.
#[derive(Debug)]
struct Proc {
    out: String,
    err: String,
    code: i32,
}

fn run(src: &str, n: usize) -> Vec<Proc> {
    let prog = weft_lang::compile("p.weft", src).expect("compiles");
    let hosts: Vec<Arc<ProcHost>> = (0..n).map(|_| Arc::new(ProcHost::default())).collect();
    let worlds = weft_mpi::in_memory(
        hosts
            .iter()
            .map(|h| h.clone() as Arc<dyn weft_mpi::Host>)
            .collect(),
    )
    .expect("worlds");
    let threads: Vec<_> = worlds
        .into_iter()
        .zip(hosts)
        .map(|(world, host)| {
            let prog = prog.clone();
            std::thread::spawn(move || {
                let cfg = RunConfig {
                    workers: 2,
                    capture: true,
                    joined: Some(Joined { world, host }),
                    ..RunConfig::default()
                };
                let r = run_program(&prog, cfg).expect("runs");
                let rep = render_result(&r);
                Proc {
                    out: String::from_utf8_lossy(&r.output).into_owned(),
                    err: rep.stderr,
                    code: rep.code,
                }
            })
        })
        .collect();
    threads
        .into_iter()
        .map(|t| t.join().expect("a process's thread"))
        .collect()
}

fn codes(ps: &[Proc]) -> Vec<i32> {
    ps.iter().map(|p| p.code).collect()
}

#[test]
fn collectives_over_the_world_agree_on_every_process() {
    let src = r#"
type P struct {
	name string
	xs   []int
}

func main() {
	w := world()
	r := rank(w)
	print("size", size(w), w)
	print(allreduce_sum(w, r+1), allreduce_prod(w, r+2), allreduce_max(w, 10-r), allreduce_min(w, float(r)+0.5))
	t := allreduce_sum(w, full([]int{2, 3}, float(r)+0.25))
	print(t, sum(t))
	p := broadcast(w, P{"from" + str(r), []int{r, r * 2}}, size(w)-1)
	print(p)
	print(allgather(w, "r"+str(r)))
	barrier(w)
}
"#;
    for n in [2, 3] {
        let ps = run(src, n);
        assert_eq!(codes(&ps), vec![0; n], "{ps:#?}");
        let first = &ps[0].out;
        for p in &ps[1..] {
            // Every line but the one that names the member's rank.
            let strip = |s: &str| s.lines().skip(1).collect::<Vec<_>>().join("\n");
            assert_eq!(strip(&p.out), strip(first));
        }
        let lines: Vec<&str> = first.lines().collect();
        assert_eq!(lines[0], format!("size {n} comm(rank 0 of {n})"));
        let sum: usize = (1..=n).sum();
        let prod: usize = (2..=n + 1).product();
        assert_eq!(lines[1], format!("{sum} {prod} 10 0.5"));
        let tsum = (0..n).map(|r| r as f64 + 0.25).sum::<f64>() * 6.0;
        assert_eq!(lines[2], format!("tensor[2,3]@cpu {tsum:?}"));
        let last = n - 1;
        assert_eq!(lines[3], format!("{{from{last} [{last} {}]}}", last * 2));
        let all: Vec<String> = (0..n).map(|r| format!("r{r}")).collect();
        assert_eq!(lines[4], format!("[{}]", all.join(" ")));
    }
}

#[test]
fn channels_cross_processes_and_keep_go_rules() {
    let src = r#"
type Msg struct {
	from  int
	reply chan string
	t     tensor
}

func main() {
	w := world()
	r := rank(w)
	inbox := make(chan Msg, 2)
	boxes := allgather(w, inbox)
	if r == 0 {
		for i := 1; i < size(w); i++ {
			m := <-inbox
			m.reply <- "hello " + str(m.from) + " " + str(sum(m.t))
		}
		// A channel that comes back to its owner is the channel itself.
		back := broadcast(w, inbox, 0)
		print(back == inbox, cap(boxes[0]), len(inbox))
		done := make(chan int)
		fin := make(chan int)
		go {
			for v := range done {
				print("got", v)
			}
			print("done closed")
			fin <- 1
		}
		ds := broadcast(w, done, 0)
		barrier(w)
		barrier(w)
		<-fin
	} else {
		reply := make(chan string)
		boxes[0] <- Msg{r, reply, full([]int{2}, float(r))}
		print(<-reply)
		back := broadcast(w, inbox, 0)
		print(back == boxes[0])
		ds := broadcast(w, make(chan int), 0)
		barrier(w)
		if r == 1 {
			ds <- 7
			ds <- 8
			close(ds)
		}
		barrier(w)
	}
}
"#;
    for n in [2, 3] {
        let ps = run(src, n);
        assert_eq!(codes(&ps), vec![0; n], "{ps:#?}");
        assert!(ps[0].out.contains("true 2 0\n"), "{}", ps[0].out);
        assert!(
            ps[0].out.contains("got 7\ngot 8\ndone closed\n"),
            "{}",
            ps[0].out
        );
        for (r, p) in ps.iter().enumerate().skip(1) {
            assert_eq!(p.out, format!("hello {r} {}.0\ntrue\n", 2 * r), "rank {r}");
        }
    }
}

#[test]
fn a_send_on_a_closed_remote_channel_panics_on_the_sender_and_ends_everyone() {
    let src = r#"
func main() {
	w := world()
	c := make(chan int, 1)
	cs := allgather(w, c)
	if rank(w) == 0 {
		close(c)
		barrier(w)
		<-make(chan int)
	} else {
		barrier(w)
		cs[0] <- 1
	}
}
"#;
    let ps = run(src, 2);
    assert_eq!(codes(&ps), vec![2, 2], "{ps:#?}");
    assert_eq!(ps[0].err, "");
    assert_eq!(
        ps[1].err,
        "[rank 1] panic: send on closed channel\n[rank 1]     at p.weft:12:3 (task 1)\n"
    );
}

#[test]
fn select_on_a_remote_channel_panics() {
    let src = r#"
func main() {
	w := world()
	cs := allgather(w, make(chan int))
	if rank(w) == 1 {
		select {
		case v := <-cs[0]:
			print(v)
		}
	}
	barrier(w)
}
"#;
    let ps = run(src, 2);
    assert_eq!(codes(&ps), vec![2, 2], "{ps:#?}");
    assert_eq!(
        ps[1].err,
        "[rank 1] panic: select on remote channel (owned by rank 0)\n[rank 1]     at p.weft:6:3 (task 1)\n"
    );
}

#[test]
fn a_deadlock_across_processes_is_reported_by_rank_0() {
    // Rank 0 waits for three values; the others each send one, through
    // an unbuffered remote channel: the last sends never complete.
    let src = r#"
func main() {
	w := world()
	c := make(chan int)
	cs := allgather(w, c)
	if rank(w) == 0 {
		<-c
		x := allreduce_sum(w, 1)
		print(x)
	} else {
		cs[0] <- rank(w)
		cs[0] <- rank(w)
	}
}
"#;
    for n in [2, 3] {
        let ps = run(src, n);
        assert_eq!(codes(&ps), vec![2; n], "{ps:#?}");
        let mut want = String::from("fatal error: all tasks are asleep - deadlock!\n");
        want.push_str("rank 0 task 1 [collective]: p.weft:8:8\n");
        for r in 1..n {
            want.push_str(&format!("rank {r} task 1 [chan send]: p.weft:12:3\n"));
        }
        if n == 3 {
            // One of ranks 1 and 2 got its first value taken; which one
            // depends on the schedule.
            let alt = want.replace(
                "rank 1 task 1 [chan send]: p.weft:12:3\n",
                "rank 1 task 1 [chan send]: p.weft:11:3\n",
            );
            let alt2 = want.replace(
                "rank 2 task 1 [chan send]: p.weft:12:3\n",
                "rank 2 task 1 [chan send]: p.weft:11:3\n",
            );
            assert!(ps[0].err == alt || ps[0].err == alt2, "{}", ps[0].err);
        } else {
            assert_eq!(ps[0].err, want);
        }
        for p in &ps[1..] {
            assert_eq!(p.err, "");
        }
    }
}

#[test]
fn exit_in_one_process_ends_every_process_with_its_code() {
    let src = r#"
func main() {
	w := world()
	if rank(w) == 1 {
		exit(3)
	}
	<-make(chan int)
}
"#;
    let ps = run(src, 3);
    assert_eq!(codes(&ps), vec![3, 3, 3], "{ps:#?}");
    assert!(ps.iter().all(|p| p.err.is_empty()));
}

#[test]
fn the_program_ends_when_every_main_returned() {
    // Rank 0's main returns at once; its task keeps serving the others,
    // which return once it has told them the total.
    let src = r#"
func serve(c chan int, replies chan int, n int, senders int) {
	total := 0
	for i := 0; i < n; i++ {
		total += <-c
	}
	print("served", total)
	for i := 0; i < senders; i++ {
		replies <- total
	}
}

func main() {
	w := world()
	c := make(chan int)
	r := make(chan int)
	cs := allgather(w, c)
	rs := allgather(w, r)
	if rank(w) == 0 {
		go serve(c, r, 3*(size(w)-1), size(w)-1)
	} else {
		for i := 1; i <= 3; i++ {
			cs[0] <- i
		}
		print("total", <-rs[0])
	}
}
"#;
    let ps = run(src, 3);
    assert_eq!(codes(&ps), vec![0, 0, 0], "{ps:#?}");
    assert_eq!(ps[0].out, "served 12\n");
    assert_eq!(ps[1].out, "total 12\n");
    assert_eq!(ps[2].out, "total 12\n");
}

#[test]
fn alone_the_world_is_one_process() {
    let prog = weft_lang::compile(
        "p.weft",
        "func main() {\n\tw := world()\n\tprint(rank(w), size(w), allreduce_sum(w, 5))\n}\n",
    )
    .expect("compiles");
    let cfg = RunConfig {
        capture: true,
        ..RunConfig::default()
    };
    let r = run_program(&prog, cfg).expect("runs");
    assert_eq!(String::from_utf8_lossy(&r.output), "0 1 5\n");
    assert_eq!(r.rank, None);
}
