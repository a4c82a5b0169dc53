//! Placement end to end (docs/language.md, "Placement"), through the
//! `weft` binary. Without a GPU the only device is "cpu", so most runs here
//! ask for simulated devices (`WEFT_SIM_DEVICES=2`: `sim:0` and `sim:1`,
//! docs/tensors.md, "Simulated devices"), which make every rule observable:
//! - `go ... on DEV` places a task, its children inherit the device, `on
//!   "auto"` spreads tasks over the devices in turn, tensors are made on
//!   `here()` and `to(t)` copies there; a device not present panics at
//!   the `go`;
//! - `go f(x) on DEV` with `f` a function value (a named function or a
//!   closure) is placed the same way: its device is evaluated after the
//!   function and the arguments, and a nil `f` panics before the device
//!   is looked at;
//! - `weft build` keeps the placement (an operand of `go`, `go_call` and
//!   `go_value`, shown by `weft dump`), and running the compiled file
//!   prints the same;
//! - an op with no kernel on its device runs on the host, and the trace
//!   shows the fallback by op name between its two copies;
//!   `--strict-placement` makes it a panic naming the op and the device;
//! - the trace names each task's device, and `weft trace` groups the
//!   task rows by device.

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn weft(sim: bool) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_weft"));
    if sim {
        c.env("WEFT_SIM_DEVICES", "2");
    } else {
        c.env_remove("WEFT_SIM_DEVICES");
    }
    c
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("weft-placement-test-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Writes `src` to `name` and runs it with `args` before the file.
fn run(sim: bool, name: &str, src: &str, args: &[&str]) -> Output {
    let file = tmp(name);
    fs::write(&file, src).unwrap();
    weft(sim)
        .current_dir(file.parent().unwrap())
        .arg("run")
        .args(args)
        .arg(name)
        .output()
        .unwrap()
}

/// Runs `src` (as `name`, simulated devices on) with `--workers 1
/// --trace FILE`, and returns the output and the trace.
fn run_traced(name: &str, src: &str) -> (Output, Value) {
    let json = tmp(&format!("{name}.json"));
    let out = run(
        true,
        name,
        src,
        &["--workers", "1", "--trace", json.to_str().unwrap()],
    );
    let doc = serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
    (out, doc)
}

const PLACED: &str = r#"func worker(name string, out chan string) {
	t := randn([]int{2, 2}, 1)
	u := to(ones([]int{2, 2}), "cpu")
	out <- name + " " + here() + " " + device(t) + " " + device(to(u)) + " " + device(u)
	go {
		out <- name + " child " + here()
	}
}

func main() {
	out := make(chan string)
	print(devices(), here())
	go worker("a", out) on "sim:1"
	print(<-out)
	print(<-out)
	for _, n := range []string{"b", "c", "d"} {
		go worker(n, out) on "auto"
		print(<-out)
		print(<-out)
	}
	go {
		out <- "block " + here() + " " + device(zeros([]int{1}))
	} on "sim:0"
	print(<-out)
	go worker("e", out) on "sim:2"
	print(<-out)
}
"#;

const PLACED_OUT: &str = "[cpu sim:0 sim:1] cpu
a sim:1 sim:1 sim:1 cpu
a child sim:1
b sim:0 sim:0 sim:0 cpu
b child sim:0
c sim:1 sim:1 sim:1 cpu
c child sim:1
d sim:0 sim:0 sim:0 cpu
d child sim:0
block sim:0 sim:0
";

const PLACED_ERR: &str =
    "panic: go: device \"sim:2\" not present\n    at placed.weft:25:2 (task 1)\n";

#[test]
fn tasks_run_where_they_are_placed_and_children_inherit() {
    for workers in ["1", "4"] {
        let out = run(true, "placed.weft", PLACED, &["--workers", workers]);
        assert_eq!(text(&out.stdout), PLACED_OUT);
        assert_eq!(text(&out.stderr), PLACED_ERR);
        assert_eq!(out.status.code(), Some(2));
    }
    // Without simulated devices "auto" is the CPU, and "sim:1" is absent.
    let out = run(false, "placed.weft", PLACED, &["--workers", "1"]);
    assert_eq!(text(&out.stdout), "[cpu] cpu\n");
    assert_eq!(
        text(&out.stderr),
        "panic: go: device \"sim:1\" not present\n    at placed.weft:13:2 (task 1)\n"
    );
}

#[test]
fn placement_survives_build_and_dump() {
    let src = tmp("placed.weft");
    fs::write(&src, PLACED).unwrap();
    let pb = tmp("placed.pb");
    let built = weft(false)
        .arg("build")
        .arg(&src)
        .arg("-o")
        .arg(&pb)
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", text(&built.stderr));
    let dump = text(&weft(false).arg("dump").arg(&pb).output().unwrap().stdout);
    let placed: Vec<&str> = dump
        .lines()
        .filter(|l| l.contains("go_call(") || l.contains(" go("))
        .collect();
    assert_eq!(placed.len(), 5, "{dump}");
    // Four go statements have `on`; the go block inside `worker` has not.
    assert_eq!(placed.iter().filter(|l| l.contains("Device: ")).count(), 4);
    assert!(dump.contains("= here()"));
    let out = weft(true)
        .current_dir(pb.parent().unwrap())
        .args(["run", "placed.pb", "--workers", "1"])
        .output()
        .unwrap();
    assert_eq!(text(&out.stdout), PLACED_OUT);
    assert_eq!(
        text(&out.stderr),
        PLACED_ERR.replace("placed.weft", &src.display().to_string())
    );
    assert_eq!(out.status.code(), Some(2));
}

const VALUES: &str = r#"func worker(name string, out chan string) {
	out <- name + " " + here() + " " + device(zeros([]int{1}))
	go {
		out <- name + " child " + here()
	}
}

func say(s string) string {
	print(s)
	return s
}

func main() {
	out := make(chan string)
	f := worker
	go f("named", out) on "sim:1"
	print(<-out)
	print(<-out)
	k := "closure"
	g := func(out chan string) {
		out <- k + " " + here()
	}
	go g(out) on "sim:0"
	print(<-out)
	fs := []func(string, chan string){worker}
	go fs[0]("auto", out) on "auto"
	print(<-out)
	print(<-out)
	go func(out chan string) {
		out <- "literal " + here()
	}(out) on "sim:1"
	print(<-out)
	go {
		go f("inherited", out)
	} on "sim:0"
	print(<-out)
	print(<-out)
	go fs[len(say("function"))-8](say("argument"), out) on say("sim:1")
	print(<-out)
	print(<-out)
	var h func(string, chan string)
	if len(args()) > 0 {
		go h("nil", out) on "sim:7"
	}
	go f("absent", out) on "sim:7"
}
"#;

#[test]
fn a_function_value_is_placed_as_a_call() {
    let want = "named sim:1 sim:1
named child sim:1
closure sim:0
auto sim:0 sim:0
auto child sim:0
literal sim:1
inherited sim:0 sim:0
inherited child sim:0
function
argument
sim:1
argument sim:1 sim:1
argument child sim:1
";
    for workers in ["1", "4"] {
        let out = run(true, "values.weft", VALUES, &["--workers", workers]);
        assert_eq!(text(&out.stdout), want);
        assert_eq!(
            text(&out.stderr),
            "panic: go: device \"sim:7\" not present\n    at values.weft:45:2 (task 1)\n"
        );
        assert_eq!(out.status.code(), Some(2));
        // A nil function value panics before its device is looked at.
        let out = weft(true)
            .current_dir(tmp("values.weft").parent().unwrap())
            .args(["run", "--workers", workers, "values.weft", "--", "x"])
            .output()
            .unwrap();
        assert_eq!(text(&out.stdout), want);
        assert_eq!(
            text(&out.stderr),
            "panic: call of nil function\n    at values.weft:43:3 (task 1)\n"
        );
        assert_eq!(out.status.code(), Some(2));
    }
    // Built and dumped, each `go` of a function value keeps its device.
    let src = tmp("values.weft");
    fs::write(&src, VALUES).unwrap();
    let pb = tmp("values.pb");
    let built = weft(false)
        .arg("build")
        .arg(&src)
        .arg("-o")
        .arg(&pb)
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", text(&built.stderr));
    let dump = text(&weft(false).arg("dump").arg(&pb).output().unwrap().stdout);
    // Eight `go` of a function value, seven with `on` (not the one in the
    // go block, whose task inherits).
    let placed: Vec<&str> = dump.lines().filter(|l| l.contains("go_value(")).collect();
    assert_eq!(placed.len(), 8, "{dump}");
    assert_eq!(placed.iter().filter(|l| l.contains("Device: ")).count(), 7);
    let out = weft(true)
        .current_dir(pb.parent().unwrap())
        .args(["run", "values.pb", "--workers", "1"])
        .output()
        .unwrap();
    assert_eq!(text(&out.stdout), want);
}

const FALLBACK: &str = r#"func work(out chan float) {
	x := ones([]int{4, 3})
	w := ones([]int{3, 2})
	y := matmul(x, w) + ones([]int{4, 2})
	z := gather(y, []int{3, 0})
	out <- get(z, 0, 0)
}

func main() {
	out := make(chan float)
	go work(out) on "sim:0"
	print(<-out)
}
"#;

#[test]
fn a_host_fallback_is_traced_by_op_name_and_strict_placement_refuses_it() {
    let (out, doc) = run_traced("fallback.weft", FALLBACK);
    assert_eq!(text(&out.stdout), "4.0\n");
    assert_eq!(out.status.code(), Some(0));
    let ev = doc["traceEvents"].as_array().unwrap();
    let spans: Vec<(String, String, u64)> = ev
        .iter()
        .filter(|e| e["ph"] == "X" && e["pid"] == 1)
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or("").to_string();
            (s("name"), s("cat"), e["tid"].as_u64().unwrap())
        })
        .collect();
    let of = |cat: &str| -> Vec<&str> {
        spans
            .iter()
            .filter(|s| s.1 == cat)
            .map(|s| s.0.as_str())
            .collect()
    };
    // matmul and + run on the device; gather has no kernel there. The
    // tensors made by ones() are copied to the device.
    assert_eq!(of("fallback"), ["gather on cpu (no kernel on sim:0)"]);
    assert_eq!(
        of("copy"),
        [
            "copy cpu→sim:0",
            "copy cpu→sim:0",
            "copy cpu→sim:0",
            "copy sim:0→cpu",
            "copy cpu→sim:0"
        ]
    );
    assert!(spans.iter().all(|s| s.1 != "fallback" || s.2 == 2));
    // Each track says its device.
    let devices: Vec<(u64, &str)> = ev
        .iter()
        .filter(|e| e["name"] == "thread_name" && e["pid"] == 1)
        .map(|e| {
            (
                e["tid"].as_u64().unwrap(),
                e["args"]["device"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(devices, [(1, "cpu"), (2, "sim:0")]);

    let strict = run(true, "fallback.weft", FALLBACK, &["--strict-placement"]);
    assert_eq!(text(&strict.stdout), "");
    assert_eq!(
        text(&strict.stderr),
        "panic: strict placement: gather has no kernel on sim:0\n    at fallback.weft:5:7 (task 2)\n"
    );
    assert_eq!(strict.status.code(), Some(2));
    // On the CPU nothing falls back: strict placement changes nothing.
    let cpu = FALLBACK.replace(" on \"sim:0\"", "");
    let out = run(false, "cpu.weft", &cpu, &["--strict-placement"]);
    assert_eq!(
        (text(&out.stdout).as_str(), out.status.code()),
        ("4.0\n", Some(0))
    );
}

#[test]
fn weft_trace_groups_task_rows_by_device() {
    let src = r#"func work(out chan int) {
	sleep(1)
	out <- 1
}

func main() {
	out := make(chan int)
	go work(out) on "sim:1"
	go work(out) on "sim:0"
	go work(out)
	go work(out) on "sim:1"
	for range 4 {
		<-out
	}
}
"#;
    let json = tmp("grouped.json");
    let out = run(
        true,
        "grouped.weft",
        src,
        &["--trace", json.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let svg = tmp("grouped.svg");
    let drawn = weft(false)
        .arg("trace")
        .arg(&json)
        .arg("-o")
        .arg(&svg)
        .output()
        .unwrap();
    assert!(drawn.status.success(), "{}", text(&drawn.stderr));
    let svg = fs::read_to_string(&svg).unwrap();
    // Row labels in drawing order: a header per device, in the order of
    // the devices' first tasks, then that device's tasks by number.
    let labels: Vec<&str> = svg
        .lines()
        .filter(|l| l.starts_with("<text x=\"8\" y=") || l.contains("font-weight=\"bold\">on "))
        .filter(|l| !l.contains("weft trace:"))
        .filter_map(|l| {
            l.rsplit_once("\">")
                .map(|(_, t)| t.trim_end_matches("</text>"))
        })
        .collect();
    let want = [
        "on cpu", "main #1", "work #4", "on sim:1", "work #2", "work #5", "on sim:0", "work #3",
    ];
    assert_eq!(&labels[..want.len()], want, "{labels:?}");
}

/// The model-parallel example with its stages on two (simulated) devices
/// learns exactly as on the CPU: its golden output, but for the devices.
#[test]
fn the_pipeline_example_runs_its_stages_on_two_devices() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let want = fs::read_to_string(root.join("examples/pipeline_parallel.out")).unwrap();
    let out = weft(true)
        .current_dir(&root)
        .args([
            "run",
            "examples/pipeline_parallel.weft",
            "--seed",
            "1",
            "--workers",
            "2",
        ])
        .args([
            "--",
            "--epochs",
            "2",
            "--no-times",
            "--devices",
            "sim:0",
            "sim:1",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let got = text(&out.stdout);
    assert_eq!(
        got.replacen("devices [sim:0 sim:1]", "devices [cpu cpu]", 1),
        want
    );
}

/// The `main` of the two-member tests below: `member` on `sim:0` and on
/// `sim:1` over one group, their lines printed in order, then `more`.
const TWO_MEMBERS: &str = r#"
func main() {
	cs := group(2)
	out := make(chan string)
	go member(cs[0], "sim:0", out)
	go member(cs[1], "sim:1", out)
	a := <-out
	b := <-out
	if a > b {
		a, b = b, a
	}
	print(a)
	print(b)
	more(out)
}
"#;

/// An all-reduce over a group of one hands back the member's own tensor,
/// on the device where it lives, without a trip through the host: the
/// trace has the one copy that put the tensor there and no other, and a
/// group of two (whose sum does go through the host) gives the sum back on
/// each member's device.
#[test]
fn an_all_reduce_over_a_group_of_one_keeps_a_device_tensor_where_it_is() {
    const ONE: &str = r#"func main() {
	c := group(1)[0]
	x := to(ones([]int{2, 2}), "sim:0")
	for i := 0; i < 3; i++ {
		x = allreduce_sum(c, x)
	}
	y := allreduce_max(c, x)
	print(device(y), shape(y))
	print(get(y, 1, 1))
}
"#;
    let (out, doc) = run_traced("group_of_one.weft", ONE);
    assert_eq!(text(&out.stderr), "");
    assert_eq!(text(&out.stdout), "sim:0 [2 2]\n1.0\n");
    let copies: Vec<&str> = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"] == "copy")
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    // `to` and `get` (which reads one value on the host; not a span).
    assert_eq!(copies, ["copy cpu→sim:0"]);

    const TWO: &str = r#"func member(c comm, dev string, out chan string) {
	x := to(full([]int{2}, float(rank(c) + 1)), dev)
	s := allreduce_sum(c, x)
	out <- device(s) + " " + str(get(s, 1))
}

func more(out chan string) {}
"#;
    let src = format!("{TWO}{TWO_MEMBERS}");
    let out = run(true, "group_of_two.weft", &src, &["--workers", "2"]);
    assert_eq!(text(&out.stderr), "");
    assert_eq!(text(&out.stdout), "sim:0 3.0\nsim:1 3.0\n");
}

/// A list all-reduce leaves each result where the member's own tensor
/// was: here the first on the member's device, the second on the host,
/// over a group of two (through the host) and a group of one (the list
/// itself).
#[test]
fn a_list_all_reduce_keeps_each_tensor_on_its_own_device() {
    const SRC: &str = r#"func member(c comm, dev string, out chan string) {
	x := to(full([]int{2}, float(rank(c) + 1)), dev)
	h := full([]int{3}, 10.0)
	s := allreduce_sum(c, []tensor{x, h})
	out <- device(s[0]) + " " + str(get(s[0], 1)) + " " + device(s[1]) + " " + str(get(s[1], 2))
}

func more(out chan string) {
	go member(group(1)[0], "sim:1", out)
	print(<-out)
}
"#;
    let src = format!("{SRC}{TWO_MEMBERS}");
    let out = run(true, "list_two.weft", &src, &["--workers", "2"]);
    assert_eq!(text(&out.stderr), "");
    assert_eq!(
        text(&out.stdout),
        "sim:0 3.0 cpu 20.0\nsim:1 3.0 cpu 20.0\nsim:1 1.0 cpu 10.0\n"
    );
}
