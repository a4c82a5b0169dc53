//! `weft run` under `mpirun` (docs/distributed.md), built with
//! `--features mpi`: the examples that run on several processes, and the
//! failures of a program of several (a panic's `[rank R]` lines, `exit`,
//! a deadlock across processes, `select` on another process's channel),
//! with 2 and 3 processes. Where `mpirun` is missing the tests say so and
//! pass, except in CI (`CI` set), where they fail.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `mpirun` with the flags this machine's MPI needs, or `None`.
fn mpirun() -> Option<Vec<String>> {
    let v = Command::new("mpirun").arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&v.stdout).to_string() + &String::from_utf8_lossy(&v.stderr);
    let mut cmd = vec!["mpirun".to_string()];
    if text.contains("Open MPI") || text.contains("OpenRTE") {
        cmd.push("--oversubscribe".into());
        if std::env::var("USER").as_deref() == Ok("root") || is_root() {
            cmd.push("--allow-run-as-root".into());
        }
    }
    Some(cmd)
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| {
            s.lines()
                .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

/// Runs `weft run ARGS` on `n` processes; `None` when `mpirun` is missing
/// outside CI.
fn run(n: usize, args: &[&str]) -> Option<Output> {
    let Some(cmd) = mpirun() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "mpirun is missing (CI must install MPI: .ci/run)"
        );
        eprintln!("skipped: mpirun is missing (apt-get install mpich)");
        return None;
    };
    let out = Command::new("timeout")
        .arg("300")
        .args(&cmd)
        .args(["-np", &n.to_string()])
        .arg(env!("CARGO_BIN_EXE_weft"))
        .arg("run")
        .args(args)
        .current_dir(root())
        .output()
        .expect("run mpirun");
    Some(out)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Data-parallel training on 2 processes of one device each gives bitwise
/// the output of one process of 2 devices (the golden file).
#[test]
fn train_digits_on_two_processes_matches_one_process() {
    let Some(out) = run(
        2,
        &[
            "--seed",
            "1",
            "examples/train_digits.weft",
            "--",
            "--epochs",
            "2",
            "--devices",
            "1",
            "--no-times",
        ],
    ) else {
        return;
    };
    let want = std::fs::read_to_string(root().join("examples/train_digits.out")).unwrap();
    assert_eq!(text(&out.stdout), want, "stderr: {}", text(&out.stderr));
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn the_worker_pool_and_the_hierarchy_run_on_several_processes() {
    for n in [2, 3] {
        let Some(out) = run(n, &["examples/distpool.weft"]) else {
            return;
        };
        assert_eq!(text(&out.stdout), "sum of squares 1..40: 22140\n");
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let Some(out) = run(n, &["examples/hierarchy.weft"]) else {
            return;
        };
        let t = 3 * n;
        let want = format!(
            "tasks {t} sum {}.0 want {}.0\n",
            t * (t + 1) / 2,
            t * (t + 1) / 2
        );
        assert_eq!(text(&out.stdout), want);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
}

/// A program in a file of its own, for the failure tests.
fn program(name: &str, src: &str) -> String {
    let dir = std::env::temp_dir().join(format!("weft-mpi-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, src).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn failures_end_every_process() {
    let panics = program(
        "panics.weft",
        "func main() {\n\tw := world()\n\tif rank(w) == size(w)-1 {\n\t\tpanic(\"boom\")\n\t}\n\t<-make(chan int)\n}\n",
    );
    let exits = program(
        "exits.weft",
        "func main() {\n\tif rank(world()) == 0 {\n\t\texit(3)\n\t}\n\t<-make(chan int)\n}\n",
    );
    let selects = program(
        "selects.weft",
        "func main() {\n\tw := world()\n\tcs := allgather(w, make(chan int))\n\tif rank(w) == 1 {\n\t\tselect {\n\t\tcase <-cs[0]:\n\t\t}\n\t}\n\tbarrier(w)\n}\n",
    );
    let deadlock = program(
        "deadlock.weft",
        "func main() {\n\tw := world()\n\tc := make(chan int)\n\tcs := allgather(w, c)\n\tif rank(w) == 0 {\n\t\tbarrier(w)\n\t} else {\n\t\tcs[0] <- 1\n\t}\n}\n",
    );
    for n in [2, 3] {
        let Some(out) = run(n, &[&panics]) else {
            return;
        };
        assert_eq!(out.status.code(), Some(2));
        let r = n - 1;
        assert_eq!(
            text(&out.stderr),
            format!("[rank {r}] panic: boom\n[rank {r}]     at {panics}:4:3 (task 1)\n")
        );
        let Some(out) = run(n, &[&exits]) else {
            return;
        };
        assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
        assert_eq!(text(&out.stderr), "");
        let Some(out) = run(n, &[&selects]) else {
            return;
        };
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(
            text(&out.stderr),
            format!(
                "[rank 1] panic: select on remote channel (owned by rank 0)\n[rank 1]     at {selects}:5:3 (task 1)\n"
            )
        );
        let Some(out) = run(n, &[&deadlock]) else {
            return;
        };
        assert_eq!(out.status.code(), Some(2));
        let mut want = format!(
            "fatal error: all tasks are asleep - deadlock!\nrank 0 task 1 [collective]: {deadlock}:6:3\n"
        );
        for r in 1..n {
            want.push_str(&format!("rank {r} task 1 [chan send]: {deadlock}:8:3\n"));
        }
        assert_eq!(text(&out.stderr), want);
    }
}

/// Maps, func values and strings that are not UTF-8 cross processes
/// (docs/distributed.md, "Values that cross"), through a collective and
/// through another process's channel: a map keeps its entries and its
/// insertion order, a closure its function and captured values, a string
/// its bytes.
#[test]
fn maps_funcs_and_bytes_cross_processes() {
    let src = "type Msg struct { counts map[string]int; f func(int) int; raw string }

func adder(k int) func(int) int {
\treturn func(x int) int { return x + k }
}

func main() {
\tw := world()
\tm := map[string]int{}
\tm[\"zeta\"] = rank(w)
\tm[\"alpha\"] = 100
\tmine := Msg{m, adder(10 * (rank(w) + 1)), \"é\"[0:1]}
\tgot := broadcast(w, mine, 0)
\torder := \"\"
\tfor k, v := range got.counts {
\t\torder += k + \"=\" + str(v) + \" \"
\t}
\tback := broadcast(w, make(chan Msg, 8), 0)
\tif rank(w) != 0 {
\t\tback <- Msg{got.counts, adder(rank(w)), got.raw + \"é\"[1:2]}
\t}
\tall := allgather(w, order + str(got.f(1)) + \" \" + str(len(got.raw)))
\tif rank(w) == 0 {
\t\tprint(all)
\t\tsum := 0
\t\tfor i := 1; i < size(w); i++ {
\t\t\tr := <-back
\t\t\tsum += r.f(1000)
\t\t\tassert(r.raw == \"é\", \"the bytes came back\")
\t\t\tassert(r.counts[\"alpha\"] == 100, \"the map came back\")
\t\t}
\t\tprint(sum)
\t}
\tbarrier(w)
}
";
    let p = program("crossing.weft", src);
    for n in [2, 3] {
        let Some(out) = run(n, &[&p]) else {
            return;
        };
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let each = vec!["zeta=0 alpha=100 11 1"; n].join(" ");
        // ranks 1..n-1 send f = adder(rank): 1000 + rank each
        let sum: usize = (1..n).map(|r| 1000 + r).sum();
        assert_eq!(text(&out.stdout), format!("[{each}]\n{sum}\n"));
    }
}

/// Large tensors (their memory travels beside the value's bytes,
/// docs/distributed.md, "Speed") inside a struct with a small one, from
/// every other process to rank 0's buffered channel: in order per sender,
/// unchanged; then a large one and a close from rank 1 (the close comes
/// after the tensor).
#[test]
fn large_tensors_cross_in_order_and_unchanged() {
    let src = "type Pack struct { k int; big tensor; small tensor }

func main() {
\tw := world()
\tn := size(w)
\tc := broadcast(w, make(chan Pack, 4), 0)
\tdone := broadcast(w, make(chan tensor, 1), 0)
\tif rank(w) != 0 {
\t\tfor i := 0; i < 6; i++ {
\t\t\tc <- Pack{i, randn([]int{512, 512}, 100*rank(w)+i), full([]int{3}, float(i))}
\t\t}
\t} else {
\t\tnext := []int{}
\t\tfor r := 0; r < n; r++ {
\t\t\tnext = append(next, 0)
\t\t}
\t\tfor j := 0; j < 6*(n-1); j++ {
\t\t\tp := <-c
\t\t\tok := false
\t\t\tfor r := 1; r < n; r++ {
\t\t\t\twant := randn([]int{512, 512}, 100*r+p.k)
\t\t\t\tif p.k == next[r] && sum((p.big - want) * (p.big - want)) == 0.0 && sum(p.small) == 3.0*float(p.k) {
\t\t\t\t\tnext[r] = next[r] + 1
\t\t\t\t\tok = true
\t\t\t\t\tbreak
\t\t\t\t}
\t\t\t}
\t\t\tassert(ok, \"a value arrived out of order or changed\")
\t\t}
\t\tprint(\"in order\")
\t}
\tif rank(w) == 1 {
\t\tdone <- randn([]int{300, 300}, 5)
\t\tclose(done)
\t}
\tif rank(w) == 0 {
\t\tt := <-done
\t\td := t - randn([]int{300, 300}, 5)
\t\tprint(sum(d * d))
\t\t_, more := <-done
\t\tprint(more)
\t}
\tbarrier(w)
}
";
    let p = program("tensors.weft", src);
    for n in [2, 3] {
        let Some(out) = run(n, &[&p]) else {
            return;
        };
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "in order\n0.0\nfalse\n");
    }
}

/// A list all-reduce over `world()`: each element is the all-reduce of
/// that element alone (a large tensor among small ones, so the data
/// takes the sliced path), and lists whose shapes differ panic with
/// both lists' shapes, on every process.
#[test]
fn lists_of_tensors_reduce_across_processes() {
    let src = "func main() {
\tw := world()
\tr := float(rank(w))
\tl := []tensor{full([]int{2}, 1.0 / (r + 3.0)), randn([]int{300, 300}, rank(w)), zeros([]int{0})}
\tgot := allreduce_sum(w, l)
\tsame := true
\tfor i, t := range l {
\t\tone := allreduce_sum(w, t)
\t\tsame = same && str(shape(one)) == str(shape(got[i])) && sum((one - got[i]) * (one - got[i])) == 0.0
\t}
\tprint(rank(w), same, len(got), shape(got[1]))
\ts := []int{2}
\tif rank(w) == size(w)-1 {
\t\ts = []int{1, 2}
\t}
\tallreduce_max(w, []tensor{ones([]int{3}), zeros(s)})
}
";
    let p = program("lists.weft", src);
    for n in [2, 3] {
        let Some(out) = run(n, &[&p]) else {
            return;
        };
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        let mut lines: Vec<String> = text(&out.stdout).lines().map(String::from).collect();
        lines.sort();
        let want: Vec<String> = (0..n).map(|r| format!("{r} true 3 [300 300]")).collect();
        assert_eq!(lines, want);
        let msg = format!(
            "panic: allreduce_max: shape mismatch: [[3] [2]] (rank 0) vs [[3] [1 2]] (rank {})",
            n - 1
        );
        let err = text(&out.stderr);
        assert!(err.contains(&msg), "{err}");
    }
}

/// A binary built with MPI also runs alone, as rank 0 of 1.
#[test]
fn alone_a_binary_with_mpi_is_one_process() {
    let p = program(
        "alone.weft",
        "func main() {\n\tw := world()\n\tprint(rank(w), size(w), allreduce_sum(w, 2))\n}\n",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(["run", &p])
        .output()
        .unwrap();
    assert_eq!(text(&out.stdout), "0 1 2\n");
    assert_eq!(out.status.code(), Some(0));
}
