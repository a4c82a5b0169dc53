//! The `weft` command line: argument parsing (clap) and the commands of
//! docs/language.md, "Errors and exit codes" (`run`, `check`, `build`,
//! `dump`, `test`; `test` is `testing.rs`) plus `trace`.
//!
//! Exit codes: 0 success (and `--help`, `--version`); 1 the program does not
//! compile or a file cannot be read or written; 2 a runtime panic or
//! deadlock; 64 a usage error (`EX_USAGE` of `sysexits.h`: an unknown flag,
//! a missing argument, a bad number; clap's message on stderr); 70 an
//! internal error, a bug in Weft rather than in the program (`weft:
//! internal error: ...; this is a bug in Weft, please report it`);
//! `exit(code)` exits with `code`. The run's report (stderr text and code)
//! comes from `weft_interp::render_outcome`.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};
use weft_ir::pb::ProgramDesc;

/// The exit code of a usage error (`EX_USAGE` of BSD's `sysexits.h`), apart
/// from a program's panic (2).
pub const EXIT_USAGE: i32 = 64;

/// Parses the process's arguments. A usage error is printed (on stderr)
/// and becomes `Err(EXIT_USAGE)`; `--help` and `--version` print on stdout
/// and become `Err(0)`. clap's own `Error::exit` would use 2 for both
/// usage errors and nothing else, the code of a program's panic.
pub fn parse() -> Result<Cli, i32> {
    Cli::try_parse().map_err(|e| {
        let code = if e.use_stderr() { EXIT_USAGE } else { 0 };
        // Printing fails only when stdout or stderr is closed; the exit
        // code still tells.
        let _ = e.print();
        code
    })
}

/// Weft: a CSP-style concurrent dataflow engine.
#[derive(Debug, Parser)]
#[command(name = "weft", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compile and run a `.weft` file, or run a compiled program file.
    Run(RunArgs),
    /// Parse and type-check a `.weft` file only.
    Check(FileArg),
    /// Write the compiled program (a protobuf `ProgramDesc`).
    Build(BuildArgs),
    /// Print the program's IR in readable text.
    Dump(FileArg),
    /// Draw a `--trace` timeline as an SVG picture.
    Trace(TraceArgs),
    /// Run the `test_` functions of a `.weft` file under many schedules.
    Test(crate::testing::TestArgs),
}

#[derive(Debug, Args)]
pub struct TraceArgs {
    /// A trace written by `weft run --trace`.
    pub file: PathBuf,
    /// Where to write the SVG picture.
    #[arg(short, long, value_name = "OUT.svg")]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct FileArg {
    /// A `.weft` source file or a compiled program file.
    pub file: PathBuf,
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The `.weft` source file to compile.
    pub file: PathBuf,
    /// Where to write the compiled program.
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// A `.weft` source file or a compiled program file.
    pub file: PathBuf,
    /// Number of worker threads (default: one per CPU).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub workers: Option<u32>,
    /// Seed for `rand`, `perm`, select choices and scheduling.
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
    /// Write a Chrome trace-event timeline of tasks and ops to this file.
    #[arg(long, value_name = "OUT.json")]
    pub trace: Option<PathBuf>,
    /// The most tasks alive at once; past it `go` panics naming the limit.
    #[arg(long, value_name = "N", default_value_t = 10_000_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_tasks: u64,
    /// Memory ceiling in MiB (default: three quarters of the machine's
    /// memory); past it the program panics naming the limit.
    #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_memory: Option<u64>,
    /// Panic when a tensor op has no kernel on its device, instead of
    /// running it on the host (naming the op and the device).
    #[arg(long)]
    pub strict_placement: bool,
    /// Arguments for the program, after `--` (see `args()`).
    #[arg(last = true, value_name = "ARGS")]
    pub args: Vec<String>,
}

/// Runs the command line and returns the process exit code.
pub fn main_with(cli: Cli) -> i32 {
    match cli.command {
        Command::Check(a) => match check(&a.file) {
            Ok(()) => 0,
            Err(code) => code,
        },
        Command::Dump(a) => match load(&a.file) {
            Ok(prog) => {
                let text = weft_ir::dump(&prog);
                let mut out = std::io::stdout().lock();
                match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
                    Ok(()) => 0,
                    Err(e) => fail(format!("cannot write output: {e}")),
                }
            }
            Err(code) => code,
        },
        Command::Build(a) => match load(&a.file) {
            Ok(prog) => match std::fs::write(&a.output, weft_ir::encode(&prog)) {
                Ok(()) => 0,
                Err(e) => fail(format!("cannot write {}: {e}", a.output.display())),
            },
            Err(code) => code,
        },
        Command::Trace(a) => match crate::tracesvg::render_file(&a.file, &a.output) {
            Ok(()) => 0,
            Err(e) => fail(e.to_string()),
        },
        Command::Run(a) => match load(&a.file) {
            Ok(prog) => run(&prog, &a),
            Err(code) => code,
        },
        Command::Test(a) => match crate::testing::check_flags(&a) {
            Err(crate::testing::Usage(msg)) => {
                eprintln!("weft: {msg}");
                EXIT_USAGE
            }
            Ok(flags) => match read_source(&a.file) {
                Ok(src) => crate::testing::test(&a, flags, &src),
                Err(code) => code,
            },
        },
    }
}

fn run(prog: &ProgramDesc, a: &RunArgs) -> i32 {
    // A CUDA build without a usable GPU says so once, when the program
    // first asks for devices, and runs on the CPU. Only on a terminal: a
    // run's captured stderr holds the messages of docs/language.md and nothing else.
    if std::io::stderr().is_terminal() {
        weft_tensor::device::set_note_sink(|note| eprintln!("weft: note: {note}"));
    }
    // The trace file is created before the program runs, so a path that
    // cannot be written is an error now, not a trace silently missing after
    // the run; the runtime writes the timeline into it when the run ends.
    if let Some(path) = &a.trace {
        if let Err(e) = std::fs::File::create(path) {
            return fail(format!("cannot write trace {}: {e}", path.display()));
        }
    }
    // Under `mpirun` (built with `--features mpi`): this process joins the
    // others (docs/distributed.md).
    let joined = match weft_interp::join_processes() {
        Ok(j) => j,
        Err(e) => {
            eprintln!("weft: {e}");
            return weft_interp::EXIT_INTERNAL;
        }
    };
    let cfg = weft_interp::RunConfig {
        joined,
        workers: a
            .workers
            .map(|w| w as usize)
            .unwrap_or(weft_interp::RunConfig::default().workers),
        seed: a.seed,
        trace: a.trace.clone(),
        args: a.args.clone(),
        max_tasks: Some(a.max_tasks as usize),
        max_memory: a
            .max_memory
            .map(|m| (m as usize).saturating_mul(1 << 20))
            .or_else(weft_rt::memlimit::default_limit),
        strict_placement: a.strict_placement,
        ..Default::default()
    };
    match weft_interp::run_program(prog, cfg) {
        Ok(result) => {
            let report = weft_interp::render_result(&result);
            if !report.stderr.is_empty() {
                let mut err = std::io::stderr().lock();
                let _ = err.write_all(report.stderr.as_bytes());
                let _ = err.flush();
            }
            report.code
        }
        Err(e) => fail(e.to_string()),
    }
}

/// Prints `weft: MSG` on stderr and returns exit code 1.
fn fail(msg: String) -> i32 {
    eprintln!("weft: {msg}");
    1
}

/// Reads FILE as source (compiled and checked) or as a compiled program
/// (decoded and verified). Errors are printed; the exit code is returned.
///
/// A file ending in `.weft` is source. Any other file is decoded as a
/// program; if that fails and the file is UTF-8 text, it is compiled as source.
pub fn load(path: &Path) -> Result<ProgramDesc, i32> {
    match read(path)? {
        Loaded::Program(prog) => Ok(prog),
        Loaded::Source { shown, src } => match weft_lang::compile(&shown, &src) {
            Ok(prog) => Ok(prog),
            Err(diags) => Err(report(&diags, &src)),
        },
    }
}

/// `weft check FILE`: a compiled program is decoded and verified; source is
/// parsed and type-checked only. Lowering cannot fail on a checked program
/// (every lowered program verifies), so checking stops there: a 50 MB
/// source checks in a fraction of the time and memory of a full compile.
fn check(path: &Path) -> Result<(), i32> {
    match read(path)? {
        Loaded::Program(_) => Ok(()),
        Loaded::Source { shown, src } => {
            weft_lang::check(&shown, &src).map_err(|diags| report(&diags, &src))
        }
    }
}

/// Reads FILE as source text (`weft test`); a compiled program is refused.
/// Errors are printed; the exit code is returned.
fn read_source(path: &Path) -> Result<String, i32> {
    match read(path)? {
        Loaded::Source { src, .. } => Ok(src),
        Loaded::Program(_) => Err(fail(format!(
            "{}: weft test needs a .weft source file, not a compiled program",
            path.display()
        ))),
    }
}

/// Prints a source file's diagnostics; returns exit code 1.
fn report(diags: &weft_lang::Diagnostics, src: &str) -> i32 {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(diags.render(src).as_bytes());
    let _ = err.flush();
    1
}

/// A file as `load` reads it: a verified program, or source text.
enum Loaded {
    Program(ProgramDesc),
    Source { shown: String, src: String },
}

/// Reads FILE: a `.weft` file is source; any other is decoded and
/// verified as a program, or taken as source if it is UTF-8 text that does
/// not decode.
fn read(path: &Path) -> Result<Loaded, i32> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| fail(format!("cannot read {shown}: {e}")))?;
    let is_source = path.extension().is_some_and(|e| e == "weft");
    if !is_source {
        match weft_ir::decode(&bytes) {
            Ok(prog) => {
                return match weft_ir::verify(&prog) {
                    Ok(()) => Ok(Loaded::Program(prog)),
                    Err(e) => Err(fail(format!("{shown}: invalid program: {e}"))),
                };
            }
            Err(e) => {
                if std::str::from_utf8(&bytes).is_err() {
                    return Err(fail(format!("{shown}: {e}")));
                }
            }
        }
    }
    let src = match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(not_utf8(&shown, e.as_bytes(), e.utf8_error()).as_bytes());
            let _ = err.flush();
            return Err(1);
        }
    };
    Ok(Loaded::Source { shown, src })
}

/// The compile error of a source file that is not UTF-8, at its first
/// invalid byte, in the form of docs/language.md, "Compile errors":
/// `FILE:LINE:COL: error: source is not valid UTF-8 (byte 0xNN)`, the line
/// (each invalid sequence shown as U+FFFD) and a caret under that byte.
fn not_utf8(shown: &str, bytes: &[u8], e: std::str::Utf8Error) -> String {
    let at = e.valid_up_to();
    // Everything before `at` is valid, so it keeps its offsets in the lossy
    // text, where the invalid sequence becomes one U+FFFD.
    let lossy = String::from_utf8_lossy(bytes);
    let mut diags = weft_lang::Diagnostics::new(shown);
    diags.error(
        weft_lang::Span::new(at, at + '\u{FFFD}'.len_utf8()),
        format!("source is not valid UTF-8 (byte 0x{:02x})", bytes[at]),
    );
    diags.render(&lossy)
}
