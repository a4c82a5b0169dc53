//! The training pipeline end to end: `examples/train_digits.weft` (reader,
//! transfer and training tasks over channels, gradients averaged with
//! `allreduce_sum`)
//! and `examples/train_digits_seq.weft` (the same work in one task) are run
//! through the library with their full default of 40 epochs and must reach
//! 95% test accuracy; their output must have the documented structure
//! (docs/pipeline.md): a header line, one `epoch` line per epoch with a
//! falling loss, busy times per stage, the accuracy, wall time and overlap.
//! Timings are checked for form only, never for value.

use std::path::PathBuf;

use weft_interp::{render_outcome, run_program, RunConfig};

/// Runs an example with `args`, returns its output lines (exit code 0 asserted).
fn run(example: &str, workers: usize, seed: u64, args: &[&str]) -> Vec<String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(example);
    let src = std::fs::read_to_string(&path).expect("example exists");
    let prog = weft_lang::compile(&format!("examples/{example}"), &src)
        .unwrap_or_else(|d| panic!("{}", d.render(&src)));
    let r = run_program(
        &prog,
        RunConfig {
            workers,
            seed,
            args: args.iter().map(|s| s.to_string()).collect(),
            capture: true,
            ..RunConfig::default()
        },
    )
    .expect("program loads");
    let rep = render_outcome(&r.outcome);
    let out = String::from_utf8(r.output).expect("utf-8 output");
    assert_eq!(
        rep.code, 0,
        "exit code; stderr:\n{}\nstdout:\n{out}",
        rep.stderr
    );
    out.lines().map(String::from).collect()
}

/// The words of the first line starting with `prefix`.
fn line<'a>(lines: &'a [String], prefix: &str) -> Vec<&'a str> {
    lines
        .iter()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starting {prefix:?} in\n{}", lines.join("\n")))
        .split_whitespace()
        .collect()
}

fn num(word: &str) -> f64 {
    word.parse()
        .unwrap_or_else(|_| panic!("{word:?} is not a number"))
}

/// Checks the epoch lines (`epoch E loss L [ms T]`) and returns the losses.
fn epoch_losses(lines: &[String], epochs: usize, timed: bool) -> Vec<f64> {
    let rows: Vec<Vec<&str>> = lines
        .iter()
        .filter(|l| l.starts_with("epoch "))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows.len(),
        epochs,
        "one line per epoch:\n{}",
        lines.join("\n")
    );
    let mut losses = Vec::new();
    for (i, w) in rows.iter().enumerate() {
        assert_eq!(w.len(), if timed { 6 } else { 4 }, "epoch line {w:?}");
        assert_eq!(w[1], (i + 1).to_string());
        assert_eq!(w[2], "loss");
        let loss = num(w[3]);
        assert!(loss.is_finite() && loss > 0.0, "loss {loss}");
        if timed {
            assert_eq!(w[4], "ms");
            assert!(num(w[5]) >= 0.0);
        }
        losses.push(loss);
    }
    losses
}

/// `accuracy A` and the `test accuracy R / N` line agree; returns A.
fn accuracy(lines: &[String]) -> f64 {
    let t = line(lines, "test accuracy");
    assert_eq!(t[3], "/");
    assert_eq!(t[4], "360", "a 360-sample test split");
    let right = num(t[2]);
    let acc = num(line(lines, "accuracy")[1]);
    assert!((acc - right / 360.0).abs() < 1e-4, "{acc} vs {right}/360");
    acc
}

#[test]
fn pipeline_reaches_95_percent_with_timings() {
    let lines = run("train_digits.weft", 2, 1, &[]);
    assert_eq!(
        lines[0],
        "devices [cpu] train 1437 test 360 batch 32 epochs 40"
    );
    let losses = epoch_losses(&lines, 40, true);
    assert!(losses[39] < losses[0] / 5.0, "loss falls: {losses:?}");
    for stage in ["busy reader ms", "busy transfer 0 ms", "busy train 0 ms"] {
        assert!(num(line(&lines, stage).last().unwrap()) > 0.0, "{stage}");
    }
    let acc = accuracy(&lines);
    assert!(acc >= 0.95, "test accuracy {acc}");
    let wall = line(&lines, "wall ms");
    assert!(num(wall[2]) > 0.0 && wall[3..6] == ["per", "epoch", "ms"]);
    let overlap = num(line(&lines, "overlap")[1]);
    assert!(
        overlap >= 0.99,
        "wall time cannot be under the busiest stage's: {overlap}"
    );
}

#[test]
fn two_devices_train_the_same_model() {
    let one = run("train_digits.weft", 2, 3, &["--no-times"]);
    let two = run("train_digits.weft", 2, 3, &["--devices", "2", "--no-times"]);
    assert_eq!(
        two[0],
        "devices [cpu cpu] train 1437 test 360 batch 32 epochs 40"
    );
    assert_eq!(
        two.len(),
        1 + 40 + 2,
        "no timing lines:\n{}",
        two.join("\n")
    );
    // Two shards of 16 with averaged gradients are the batch of 32 up to
    // rounding, so both runs learn the same model.
    let (l1, l2) = (epoch_losses(&one, 40, false), epoch_losses(&two, 40, false));
    for (a, b) in l1.iter().zip(&l2) {
        assert!((a - b).abs() < 0.01, "losses {l1:?} vs {l2:?}");
    }
    let (a1, a2) = (accuracy(&one), accuracy(&two));
    assert!(a2 >= 0.95, "two devices: test accuracy {a2}");
    assert!((a1 - a2).abs() <= 0.01, "one device {a1}, two {a2}");
}

#[test]
fn sequential_version_reaches_95_percent() {
    let lines = run("train_digits_seq.weft", 1, 1, &[]);
    epoch_losses(&lines, 40, true);
    let acc = accuracy(&lines);
    assert!(acc >= 0.95, "test accuracy {acc}");
    let busy = line(&lines, "busy read ms");
    assert_eq!(busy[4..6], ["copy", "ms"]);
    assert_eq!(busy[7..9], ["train", "ms"]);
}

#[test]
fn the_seed_picks_the_split_and_the_order() {
    let a = run("train_digits.weft", 1, 1, &["--epochs", "1", "--no-times"]);
    let b = run("train_digits.weft", 1, 1, &["--epochs", "1", "--no-times"]);
    let c = run("train_digits.weft", 1, 2, &["--epochs", "1", "--no-times"]);
    assert_eq!(a, b, "same seed, same output");
    assert_ne!(a, c, "another seed shuffles differently");
}

#[test]
fn unknown_argument_panics() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/train_digits.weft");
    let src = std::fs::read_to_string(&path).unwrap();
    let prog = weft_lang::compile("examples/train_digits.weft", &src).unwrap();
    let r = run_program(
        &prog,
        RunConfig {
            workers: 1,
            args: vec!["--bogus".into()],
            capture: true,
            ..RunConfig::default()
        },
    )
    .unwrap();
    let rep = render_outcome(&r.outcome);
    assert_eq!(rep.code, 2);
    assert!(
        rep.stderr.starts_with("panic: unknown argument --bogus"),
        "{}",
        rep.stderr
    );
}
