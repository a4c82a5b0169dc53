//! Data in and out through the `weft` binary (docs/language.md, "Input and
//! output"): `examples/csv_pipeline.weft` on a CSV of a few MB that this
//! test writes, checked against statistics computed here; `lines("-")` on a
//! pipe, waited for in a `select` with a timer; and output that a signal
//! cannot lose: a program killed with SIGKILL has written every line it
//! printed.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn weft() -> Command {
    Command::new(env!("CARGO_BIN_EXE_weft"))
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("weft-data-io-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A CSV of `rows` rows of 4 columns from a fixed sequence, and what
/// `csv_pipeline.weft` must print for it: the values as the pipeline sees
/// them (parsed, stored in an f32 tensor, read back as f64), summed in the
/// same order.
fn sample(rows: usize) -> (String, String) {
    let mut text = String::from("a,b,c,d\n");
    let cols = 4;
    let (mut sums, mut squares) = (vec![0.0f64; cols], vec![0.0f64; cols]);
    let (mut lo, mut hi) = (vec![f64::INFINITY; cols], vec![f64::NEG_INFINITY; cols]);
    let mut x: u64 = 7;
    for _ in 0..rows {
        for j in 0..cols {
            x = (x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407))
                >> 1;
            let v = ((x >> 20) % 100_000) as f64 / 100.0 - (j * 300) as f64;
            if j > 0 {
                text.push(',');
            }
            let field = format!("{v:.2}");
            text.push_str(&field);
            let seen = field.parse::<f64>().unwrap() as f32 as f64;
            sums[j] += seen;
            squares[j] += seen * seen;
            lo[j] = lo[j].min(seen);
            hi[j] = hi[j].max(seen);
        }
        text.push('\n');
    }
    let batches = rows.div_ceil(512);
    let mut want = format!("{rows} rows in {batches} batches\n");
    for j in 0..cols {
        let mean = sums[j] / rows as f64;
        let sd = (squares[j] / rows as f64 - mean * mean).max(0.0).sqrt();
        writeln!(
            want,
            "col {j}: mean {mean:10.4}  sd {sd:9.4}  min {:8.2}  max {:8.2}",
            lo[j], hi[j]
        )
        .unwrap();
    }
    (text, want)
}

#[test]
fn csv_pipeline_on_a_few_megabytes() {
    let dir = temp_dir("csv");
    let path = dir.join("data.csv");
    let (text, want) = sample(100_000);
    assert!(text.len() > 2_000_000, "{} bytes", text.len());
    std::fs::write(&path, &text).unwrap();
    let out = weft()
        .arg("run")
        .arg(root().join("examples/csv_pipeline.weft"))
        .arg("--")
        .arg(&path)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "",
        "exit {:?}",
        out.status
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), want);
    assert!(out.status.success());
}

/// `lines("-")` on a pipe: lines arrive while a `select` also waits on a
/// timer, and the channel closes at the end of input; a program waiting on
/// input is not deadlocked.
#[test]
fn lines_of_standard_input_in_a_select() {
    let dir = temp_dir("stdin");
    let prog = dir.join("echo.weft");
    std::fs::write(
        &prog,
        r#"func main() {
	in := lines("-")
	ticks := 0
	for {
		select {
		case l, ok := <-in:
			if !ok {
				print("eof")
				return
			}
			print("got", l)
		case <-after(5):
			ticks++
		}
	}
}
"#,
    )
    .unwrap();
    let mut child = weft()
        .arg("run")
        .arg(&prog)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    // One line at a time, each answered before the next is written: the
    // program waits for input on the poller between them.
    for word in ["alpha", "beta", "gamma"] {
        writeln!(stdin, "{word}").unwrap();
        stdin.flush().unwrap();
        let mut got = String::new();
        stdout.read_line(&mut got).unwrap();
        assert_eq!(got, format!("got {word}\n"));
    }
    drop(stdin);
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "eof\n");
    assert!(child.wait().unwrap().success());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every line a program printed is in its output file when a SIGKILL ends
/// it: the program prints N lines to a file, says so on standard error,
/// then blocks reading standard input; the test kills it once it has said
/// so and checks all N lines.
#[test]
fn a_killed_program_has_written_every_line() {
    let dir = temp_dir("kill");
    let prog = dir.join("print.weft");
    let n = 20_000;
    std::fs::write(
        &prog,
        format!(
            r#"func main() {{
	for i := 0; i < {n}; i++ {{
		print("line", i, sprintf("%08d", i * 7))
	}}
	write_file("/dev/stderr", "ready\n")
	for l := range lines("-") {{
		print(l)
	}}
}}
"#
        ),
    )
    .unwrap();
    let out_path = dir.join("out.txt");
    let out = std::fs::File::create(&out_path).unwrap();
    let mut child = weft()
        .arg("run")
        .arg(&prog)
        .stdin(Stdio::piped())
        .stdout(out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut ready)
        .unwrap();
    assert_eq!(ready, "ready\n");
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert!(!status.success());
    let text = std::fs::read_to_string(&out_path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), n);
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(*l, format!("line {i} {:08}", i * 7));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A read error of `lines` (a directory opens and its first read fails)
/// panics in the task that receives next, at its receive, however the
/// receive finds the channel closed: already closed (the reader ran first),
/// while it waits, in a `select`, and with `v, ok :=` as with a plain
/// receive.
#[test]
fn a_read_error_of_lines_panics_in_the_receiver() {
    let dir = temp_dir("read-error");
    let cases = [
        // Closed before the receive: the reader has long finished.
        (
            "closed",
            "\tc := lines(\"/\")\n\tsleep(50)\n\tl := <-c\n",
            "4:7",
        ),
        // Waiting when the reader closes (one worker: main runs first).
        ("waiting", "\tc := lines(\"/\")\n\tl, ok := <-c\n", "3:11"),
        (
            "select",
            "\tc := lines(\"/\")\n\tselect {\n\tcase l := <-c:\n\t\tprint(l)\n\t}\n",
            "4:2",
        ),
    ];
    for (name, body, at) in cases {
        let prog = dir.join(format!("{name}.weft"));
        std::fs::write(
            &prog,
            format!("func main() {{\n{body}\tprint(\"never\")\n}}\n"),
        )
        .unwrap();
        let out = weft()
            .args(["run", "--workers", "1"])
            .arg(&prog)
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{name}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!(
                "panic: lines: /: is a directory\n    at {}:{at} (task 1)\n",
                prog.display()
            ),
            "{name}"
        );
        assert_eq!(out.status.code(), Some(2), "{name}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
