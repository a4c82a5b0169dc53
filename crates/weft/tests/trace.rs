//! `weft run --trace` and `weft trace` end to end (issue 26): wait spans
//! start when a task parks and end at its wake or at the end of the run,
//! tracks carry names a reader understands, and the picture tells its
//! legend entries apart.

use std::collections::HashSet;
use std::fs;
use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn weft() -> Command {
    Command::new(env!("CARGO_BIN_EXE_weft"))
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("weft-trace-test-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Runs `weft run FILE --workers 1 --trace` from the repository root;
/// returns the exit code and the trace's events.
fn traced(file: &str, name: &str) -> (i32, Vec<Value>) {
    let json = tmp(&format!("{name}.json"));
    let out = weft()
        .current_dir(root())
        .args(["run", file, "--workers", "1", "--seed", "1", "--trace"])
        .arg(&json)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
    let events = doc["traceEvents"].as_array().unwrap().clone();
    (out.status.code().unwrap_or(-1), events)
}

fn thread_names(ev: &[Value]) -> Vec<(u64, String)> {
    ev.iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 1)
        .map(|e| {
            let name = e["args"]["name"].as_str().unwrap().to_string();
            (e["tid"].as_u64().unwrap(), name)
        })
        .collect()
}

/// The task's spans named `name`, or starting with it when it ends with a
/// space ("wait: "): (start, end) in µs.
fn spans(ev: &[Value], tid: u64, name: &str) -> Vec<(f64, f64)> {
    let matches = |n: &str| n == name || (name.ends_with(' ') && n.starts_with(name));
    ev.iter()
        .filter(|e| e["ph"] == "X" && e["pid"] == 1 && e["tid"] == tid)
        .filter(|e| matches(e["name"].as_str().unwrap()))
        .map(|e| {
            let ts = e["ts"].as_f64().unwrap();
            (ts, ts + e["dur"].as_f64().unwrap())
        })
        .collect()
}

fn last_end(ev: &[Value]) -> f64 {
    ev.iter()
        .filter_map(|e| Some(e["ts"].as_f64()? + e["dur"].as_f64().unwrap_or(0.0)))
        .fold(0.0, f64::max)
}

#[test]
fn sleepers_wait_from_the_start_and_tracks_read_as_functions() {
    let src = tmp("sleepers.weft");
    fs::write(
        &src,
        "func nap(ms int, done chan int) {\n\
         \tsleep(ms)\n\
         \tdone <- ms\n\
         }\n\
         \n\
         func main() {\n\
         \tdone := make(chan int)\n\
         \tgo nap(10, done)\n\
         \tgo nap(20, done)\n\
         \tgo {\n\
         \t\tdone <- 0\n\
         \t}\n\
         \tprint(<-done, <-done, <-done)\n\
         }\n",
    )
    .unwrap();
    let (code, ev) = traced(src.to_str().unwrap(), "sleepers");
    assert_eq!(code, 0);
    let names = thread_names(&ev);
    assert_eq!(
        names,
        [
            (1, "main #1".to_string()),
            (2, "nap #2".to_string()),
            (3, "nap #3".to_string()),
            (4, "go block in main, line 10 #4".to_string()),
        ]
    );
    // Both sleepers parked at once: each wait starts where its first poll
    // ended, before the other sleeper woke.
    let w2 = spans(&ev, 2, "wait: sleep");
    let w3 = spans(&ev, 3, "wait: sleep");
    assert_eq!((w2.len(), w3.len()), (1, 1), "{w2:?} {w3:?}");
    for (task, w) in [(2, w2[0]), (3, w3[0])] {
        let first_run = spans(&ev, task, "run")[0];
        assert!((w.0 - first_run.1).abs() < 1e-3, "task {task}: {w:?}");
    }
    assert!(
        w3[0].0 < w2[0].1,
        "the 20 ms wait began before the 10 ms one ended"
    );
    assert!(w2[0].1 - w2[0].0 >= 10_000.0 && w3[0].1 - w3[0].0 >= 20_000.0);
}

#[test]
fn a_deadlock_keeps_every_blocked_task_waiting_to_the_end_and_draws() {
    let (code, ev) = traced("examples/deadlock.weft", "deadlock");
    assert_eq!(code, 2);
    let end = last_end(&ev);
    let names = thread_names(&ev);
    assert_eq!(names.len(), 4);
    for (tid, name) in &names {
        assert!(
            name == "main #1" || name.starts_with("go block in main, line "),
            "{name}"
        );
        let waits = spans(&ev, *tid, "wait: ");
        let last = waits.last().unwrap_or_else(|| panic!("{name} never waits"));
        if *tid != 2 {
            // Everyone but the sender, which finished, is blocked at the end.
            assert!((last.1 - end).abs() < 1e-3, "{name}: {last:?} vs {end}");
        }
    }

    // The picture: readable row labels, one look per legend entry.
    let json = tmp("deadlock.json");
    let svg = tmp("deadlock.svg");
    let out = weft()
        .args(["trace"])
        .arg(&json)
        .arg("-o")
        .arg(&svg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pic = fs::read_to_string(&svg).unwrap();
    assert!(pic.contains(">main #1</text>"));
    assert!(pic.contains(">go block in main, line 7 #2</text>"));
    let fills: Vec<&str> = pic
        .lines()
        .filter(|l| l.starts_with(r#"<rect class="key""#))
        .map(|l| {
            l.split(" fill=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
        })
        .collect();
    assert!(fills.len() >= 4, "{fills:?}");
    assert_eq!(fills.iter().collect::<HashSet<_>>().len(), fills.len());
}
