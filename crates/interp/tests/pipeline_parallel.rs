//! Model parallelism end to end (docs/pipeline.md, "Model parallelism"):
//! `examples/pipeline_parallel.weft`, the digits network split into two
//! stages over channels with a GPipe schedule, run through the library.
//! Its 40 default epochs reach 95% test accuracy; a step is the same
//! update as the sequential program's, so a short run prints the same
//! losses and accuracy as `examples/train_digits_seq.weft`, whatever the
//! number of micro-batches; its timings have the documented form, with
//! bubbles between 0 and 1 and the formula's value. Timings are checked
//! for form only, never for value.

use std::path::PathBuf;

use weft_interp::{render_outcome, run_program, RunConfig};

/// Runs an example with `args`; returns its output lines (exit code 0 asserted).
fn run(example: &str, workers: usize, args: &[&str]) -> Vec<String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(example);
    let src = std::fs::read_to_string(&path).expect("example exists");
    let prog = weft_lang::compile(&format!("examples/{example}"), &src)
        .unwrap_or_else(|d| panic!("{}", d.render(&src)));
    let cfg = RunConfig {
        workers,
        seed: 1,
        args: args.iter().map(|s| s.to_string()).collect(),
        capture: true,
        ..RunConfig::default()
    };
    let r = run_program(&prog, cfg).expect("program loads");
    let rep = render_outcome(&r.outcome);
    let out = String::from_utf8(r.output).expect("utf-8 output");
    assert_eq!(rep.code, 0, "stderr:\n{}\nstdout:\n{out}", rep.stderr);
    out.lines().map(String::from).collect()
}

/// The words of the first line starting with `prefix`.
fn words<'a>(lines: &'a [String], prefix: &str) -> Vec<&'a str> {
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

/// The lines a model's learning shows: losses and the accuracy.
fn learning(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l.starts_with("epoch ") || l.starts_with("test accuracy"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

#[test]
fn forty_epochs_reach_95_percent_and_the_timings_have_their_form() {
    let lines = run("pipeline_parallel.weft", 2, &[]);
    assert_eq!(
        words(&lines, "devices"),
        "devices [cpu cpu] stages 2, schedule GPipe, batch 32 in 4 micro-batches of 8 rows, epochs 40"
            .split_whitespace()
            .collect::<Vec<_>>()
    );
    let losses: Vec<f64> = (1..=40)
        .map(|e| num(words(&lines, &format!("epoch {e} "))[3]))
        .collect();
    assert!(losses[39] < losses[0] / 10.0, "{losses:?}");
    let acc = num(words(&lines, "accuracy")[1]);
    assert!(acc >= 0.95, "test accuracy {acc}");
    let busy = words(&lines, "busy stage 0 ms");
    assert!(num(busy[4]) > 0.0 && num(busy[8]) > 0.0, "{busy:?}");
    let wall = words(&lines, "wall ms");
    assert_eq!((wall[3], wall[4]), ("steps", "1760"));
    assert!(num(wall[2]) > 0.0 && num(wall[8]) > 0.0, "{wall:?}");
    // bubble stage 0 B0 stage 1 B1 | schedule with these stage times S0 S1 | formula (p-1)/(m+p-1) F
    let b = words(&lines, "bubble");
    for i in [3, 6, 13, 14] {
        assert!((0.0..=1.0).contains(&num(b[i])), "{b:?}");
    }
    assert_eq!(b[b.len() - 1], "0.2");
}

#[test]
fn a_step_is_the_sequential_update_whatever_the_micro_batches() {
    let seq = learning(&run(
        "train_digits_seq.weft",
        1,
        &["--epochs", "5", "--no-times"],
    ));
    assert_eq!(seq.len(), 6);
    for (micro, workers) in [("1", 1), ("2", 4), ("4", 2), ("8", 1)] {
        let args = ["--epochs", "5", "--no-times", "--micro", micro];
        let got = learning(&run("pipeline_parallel.weft", workers, &args));
        assert_eq!(got, seq, "--micro {micro}");
    }
}

#[test]
fn bad_arguments_panic() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/pipeline_parallel.weft");
    let src = std::fs::read_to_string(&path).unwrap();
    let prog = weft_lang::compile("pipeline_parallel.weft", &src).unwrap();
    for (args, msg) in [
        (
            vec!["--micro", "5"],
            "assertion failed: --micro must divide the batch",
        ),
        (vec!["--frobnicate"], "unknown argument --frobnicate"),
    ] {
        let cfg = RunConfig {
            workers: 1,
            args: args.iter().map(|s| s.to_string()).collect(),
            capture: true,
            ..RunConfig::default()
        };
        let r = run_program(&prog, cfg).unwrap();
        let rep = render_outcome(&r.outcome);
        assert_eq!(rep.code, 2);
        assert!(
            rep.stderr.starts_with(&format!("panic: {msg}")),
            "{}",
            rep.stderr
        );
    }
}
