//! Helpers for the interpreter tests: a thin layer over weft-ir's
//! `ProgramBuilder` that numbers source lines, makes constants and runs the
//! result with output captured, and `run_source` for programs written in
//! the language.
#![allow(dead_code)]

use weft_interp::{render_outcome, run_program, Report, RunConfig};
use weft_ir::builder::{BlockId, ProgramBuilder};
use weft_ir::pb::{attr, ProgramDesc, Type};

/// A program under construction; each op gets the next line of `t.weft`.
pub struct P {
    pub b: ProgramBuilder,
    pub line: u32,
}

/// An attribute value for `P::op`.
pub type A = (&'static str, attr::Value);

impl P {
    pub fn new() -> P {
        P {
            b: ProgramBuilder::new(),
            line: 0,
        }
    }

    /// `func main()`: its body block.
    pub fn main(&mut self) -> BlockId {
        self.b.func("main").loc("t.weft", 1, 1).finish()
    }

    pub fn var(&mut self, blk: BlockId, name: &str, ty: Type) -> String {
        self.b.var(blk, name, ty);
        name.to_string()
    }

    /// An op with inputs, outputs and attributes; returns its line.
    pub fn op(
        &mut self,
        blk: BlockId,
        ty: &str,
        ins: &[(&str, &[&str])],
        outs: &[(&str, &[&str])],
        attrs: Vec<A>,
    ) -> u32 {
        self.line += 1;
        let mut o = self.b.op(blk, ty).loc("t.weft", self.line, 2);
        for (slot, args) in ins {
            o = o.input(slot, args.iter().copied());
        }
        for (slot, args) in outs {
            o = o.output(slot, args.iter().copied());
        }
        for (n, v) in attrs {
            o = o.attr(n, v);
        }
        o.finish();
        self.line
    }

    fn konst(&mut self, blk: BlockId, ty: Type, v: attr::Value) -> String {
        let t = self.b.temp(blk, ty);
        self.op(blk, "const", &[], &[("Out", &[&t])], vec![("value", v)]);
        t
    }
    pub fn int(&mut self, blk: BlockId, v: i64) -> String {
        self.konst(blk, Type::int(), attr::Value::I(v))
    }
    pub fn float(&mut self, blk: BlockId, v: f64) -> String {
        self.konst(blk, Type::float(), attr::Value::F(v))
    }
    pub fn string(&mut self, blk: BlockId, v: &str) -> String {
        self.konst(blk, Type::string(), attr::Value::S(v.into()))
    }
    pub fn boolean(&mut self, blk: BlockId, v: bool) -> String {
        self.konst(blk, Type::bool(), attr::Value::B(v))
    }

    /// `Out = X op Y` into a fresh temp of type `ty`.
    pub fn bin(&mut self, blk: BlockId, op: &str, x: &str, y: &str, ty: Type) -> String {
        let t = self.b.temp(blk, ty);
        self.op(
            blk,
            op,
            &[("X", &[x]), ("Y", &[y])],
            &[("Out", &[&t])],
            vec![],
        );
        t
    }

    /// `X = X op Y` in place.
    pub fn upd(&mut self, blk: BlockId, op: &str, x: &str, y: &str) {
        self.op(
            blk,
            op,
            &[("X", &[x]), ("Y", &[y])],
            &[("Out", &[x])],
            vec![],
        );
    }

    pub fn print(&mut self, blk: BlockId, args: &[&str]) -> u32 {
        self.op(blk, "print", &[("Args", args)], &[], vec![])
    }

    pub fn copy(&mut self, blk: BlockId, x: &str, out: &str) {
        self.op(blk, "copy", &[("X", &[x])], &[("Out", &[out])], vec![]);
    }

    /// `go { ... }` capturing `caps`; fills the block with `body`.
    pub fn go(&mut self, blk: BlockId, caps: &[&str], body: impl FnOnce(&mut P, BlockId)) -> u32 {
        let g = self.b.block(blk);
        body(self, g);
        self.op(
            blk,
            "go",
            &[("Captures", caps)],
            &[],
            vec![("block", g.into())],
        )
    }

    /// `for i := 0; i < n; i++ { body }` with `i` declared in `blk`.
    pub fn for_n(&mut self, blk: BlockId, i: &str, n: &str, body: impl FnOnce(&mut P, BlockId)) {
        self.var(blk, i, Type::int());
        self.op(blk, "zero", &[], &[("Out", &[i])], vec![]);
        let cb = self.b.block(blk);
        let c = self.b.temp(blk, Type::bool());
        self.op(
            cb,
            "lt",
            &[("X", &[i]), ("Y", &[n])],
            &[("Out", &[&c])],
            vec![],
        );
        let bb = self.b.block(blk);
        body(self, bb);
        let pb = self.b.block(blk);
        let one = self.int(pb, 1);
        self.upd(pb, "add", i, &one);
        self.op(
            blk,
            "loop",
            &[("Cond", &[&c])],
            &[],
            vec![
                ("cond_block", cb.into()),
                ("body_block", bb.into()),
                ("post_block", pb.into()),
            ],
        );
    }

    pub fn build(self) -> ProgramDesc {
        self.b.build()
    }

    pub fn run(self) -> (String, Report) {
        run_desc(&self.build(), 1, 1)
    }
}

/// Runs with output captured: (stdout, report).
pub fn run_desc(p: &ProgramDesc, workers: usize, seed: u64) -> (String, Report) {
    let r = run_program(
        p,
        RunConfig {
            workers,
            seed,
            capture: true,
            ..RunConfig::default()
        },
    )
    .expect("program loads");
    let report = render_outcome(&r.outcome);
    (String::from_utf8(r.output).expect("utf-8 output"), report)
}

/// What a program compiled from source did (`run_source`).
pub struct SourceRun {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
    /// Loops the JIT compiled (`RunResult::jit_regions`).
    pub jit_regions: usize,
}

/// Compiles `src` as `t.weft` and runs it on one worker with seed 1 and
/// its output captured; the rest of the run's configuration is `config`'s.
pub fn run_source(src: &str, config: RunConfig) -> SourceRun {
    let prog = weft_lang::compile("t.weft", src).unwrap_or_else(|d| panic!("{}", d.render(src)));
    let r = run_program(
        &prog,
        RunConfig {
            workers: 1,
            seed: 1,
            capture: true,
            ..config
        },
    )
    .expect("loads");
    let rep = render_outcome(&r.outcome);
    SourceRun {
        stdout: String::from_utf8_lossy(&r.output).into_owned(),
        stderr: rep.stderr,
        code: rep.code,
        jit_regions: r.jit_regions,
    }
}
