//! Random well-typed Weft programs, built through `weft_ir`'s builder and
//! driven by `arbitrary::Unstructured` bytes (so libFuzzer's mutations steer
//! the program's shape).
//!
//! Two generators:
//! - [`random_program`]: ints, bools and `chan int`, arithmetic (division and
//!   shifts included, so runtime panics happen), `make_chan` (a negative
//!   capacity now and then), send, receive, close, `select` with and without
//!   `default`, `if`, counted loops, `break`/`continue`, `go`, `print`,
//!   `sleep(0)`, `len`/`cap`, `return`. Anything may deadlock or panic: that
//!   is a value the run returns, never a Rust panic.
//! - [`kahn_program`]: a Kahn process network whose output does not depend
//!   on scheduling: every channel has one writing task and one reading task,
//!   only `main` prints and spawns, no `select` with more than one case, no
//!   `default`, no `len`, no timers, no operation that can panic, and a
//!   channel is closed only by its writer as its last act. Kahn's theorem
//!   (with bounded channels modelled as a credit channel back) makes the
//!   printed output, the exit and even the set of blocked tasks at a
//!   deadlock the same for every schedule, so one worker and several must
//!   agree (the `differential` target).
//!
//! Invariants: every generated program passes `weft_ir::verify` (a failure
//! is a generator or verifier bug, and the targets report it), and every
//! run terminates: every loop, drain loops included, is counted with a
//! constant bound whose counter no statement can write, and there are no
//! calls, so every task does a bounded number of steps between blocking
//! operations, and a run ends with `main` or with deadlock detection. (An
//! unbounded drain loop made two tasks ping-pong forever: found by
//! `tests/stress_programs.rs`, case 1144.)

mod kahn;
mod loops;
mod random;

pub use kahn::kahn_program;
pub use loops::loop_program;
pub use random::random_program;

use arbitrary::{Result, Unstructured};
use weft_ir::builder::{BlockId, ProgramBuilder};
use weft_ir::pb::{attr, Type};

/// Size limits for generated programs.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Ops in the whole program (a soft cap: a statement in progress finishes).
    pub max_ops: usize,
    /// Nesting of blocks (`if`, loops, `select` cases, `go`).
    pub max_depth: usize,
    /// The largest constant bound of a counted loop.
    pub max_iters: i64,
    /// Statements per block.
    pub max_block_stmts: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_ops: 300,
            max_depth: 3,
            max_iters: 4,
            max_block_stmts: 6,
        }
    }
}

/// The source file name generated ops point at.
pub const GEN_FILE: &str = "gen.weft";

/// The most tasks a generated program may have at once when run
/// (`go` inside nested loops multiplies).
pub const MAX_TASKS: usize = 2_000;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum K {
    Int,
    Bool,
    Chan,
}

impl K {
    fn ty(self) -> Type {
        match self {
            K::Int => Type::int(),
            K::Bool => Type::bool(),
            K::Chan => Type::chan(Type::int()),
        }
    }
}

/// Variables visible in a block (writable ones only: loop counters stay out).
type Scope = Vec<(String, K)>;

/// Where a statement sits, for `break`, `continue` and `return`.
#[derive(Clone, Copy)]
struct Place {
    depth: usize,
    in_loop: bool,
    breakable: bool,
}

/// The builder plus bookkeeping shared by both generators.
struct Gen {
    b: ProgramBuilder,
    lim: Limits,
    ops: usize,
    line: u32,
}

impl Gen {
    fn new(lim: Limits) -> Gen {
        Gen {
            b: ProgramBuilder::new(),
            lim,
            ops: 0,
            line: 1,
        }
    }

    /// Appends an op with the next source line.
    fn op(
        &mut self,
        blk: BlockId,
        ty: &str,
        ins: &[(&str, Vec<String>)],
        outs: &[(&str, Vec<String>)],
        attrs: Vec<(&str, attr::Value)>,
    ) {
        self.ops += 1;
        self.line += 1;
        let mut o = self.b.op(blk, ty).loc(GEN_FILE, self.line, 2);
        for (slot, args) in ins {
            o = o.input(slot, args.iter().cloned());
        }
        for (slot, args) in outs {
            o = o.output(slot, args.iter().cloned());
        }
        for (n, v) in attrs {
            o = o.attr(n, v);
        }
        o.finish();
    }

    fn fresh(&mut self, blk: BlockId, scope: &mut Scope, k: K) -> String {
        let n = self.b.temp(blk, k.ty());
        scope.push((n.clone(), k));
        n
    }

    fn konst(&mut self, blk: BlockId, scope: &mut Scope, v: i64) -> String {
        let o = self.fresh(blk, scope, K::Int);
        self.op(
            blk,
            "const",
            &[],
            &[("Out", vec![o.clone()])],
            vec![("value", v.into())],
        );
        o
    }

    /// A visible variable of kind `k`; when there is none, a fresh one: a
    /// new channel (3 times in 4) or a nil one for `K::Chan`, else zero.
    fn pick(
        &mut self,
        u: &mut Unstructured,
        blk: BlockId,
        scope: &mut Scope,
        k: K,
    ) -> Result<String> {
        let of: Vec<&String> = scope.iter().filter(|v| v.1 == k).map(|v| &v.0).collect();
        if !of.is_empty() {
            return Ok(of[u.choose_index(of.len())?].clone());
        }
        if k == K::Chan && !u.ratio(1, 4)? {
            let cap = u.int_in_range(0..=2)?;
            let c = self.konst(blk, scope, cap);
            let n = self.fresh(blk, scope, k);
            self.op(
                blk,
                "make_chan",
                &[("Cap", vec![c])],
                &[("Out", vec![n.clone()])],
                vec![],
            );
            return Ok(n);
        }
        let n = self.fresh(blk, scope, k);
        self.op(blk, "zero", &[], &[("Out", vec![n.clone()])], vec![]);
        Ok(n)
    }

    /// An int to write: an existing variable or a fresh one.
    fn dest(
        &mut self,
        u: &mut Unstructured,
        blk: BlockId,
        scope: &mut Scope,
        k: K,
    ) -> Result<String> {
        if u.ratio(1, 3)? && scope.iter().any(|v| v.1 == k) {
            self.pick(u, blk, scope, k)
        } else {
            Ok(self.fresh(blk, scope, k))
        }
    }

    fn room(&self, u: &Unstructured, depth: usize) -> bool {
        self.ops < self.lim.max_ops && depth < self.lim.max_depth && !u.is_empty()
    }

    /// A counted loop `for i := 0; i < n; i++ { body }` (`n` at most `max`) with a fresh counter
    /// that `body` cannot see (so it cannot change it). `body` fills the
    /// body block.
    fn counted_loop(
        &mut self,
        u: &mut Unstructured,
        blk: BlockId,
        scope: &mut Scope,
        max: i64,
        body: impl FnOnce(&mut Gen, &mut Unstructured, BlockId) -> Result<()>,
    ) -> Result<()> {
        let iters = u.int_in_range(0..=max)?;
        let n = self.konst(blk, scope, iters);
        let i = self.b.temp(blk, Type::int());
        self.op(blk, "zero", &[], &[("Out", vec![i.clone()])], vec![]);
        let c = self.b.temp(blk, Type::bool());
        let cb = self.b.block(blk);
        self.op(
            cb,
            "lt",
            &[("X", vec![i.clone()]), ("Y", vec![n])],
            &[("Out", vec![c.clone()])],
            vec![],
        );
        let bb = self.b.block(blk);
        body(self, u, bb)?;
        let pb = self.b.block(blk);
        let one = self.b.temp(pb, Type::int());
        self.op(
            pb,
            "const",
            &[],
            &[("Out", vec![one.clone()])],
            vec![("value", 1i64.into())],
        );
        self.op(
            pb,
            "add",
            &[("X", vec![i.clone()]), ("Y", vec![one])],
            &[("Out", vec![i])],
            vec![],
        );
        self.op(
            blk,
            "loop",
            &[("Cond", vec![c])],
            &[],
            vec![
                ("cond_block", cb.into()),
                ("body_block", bb.into()),
                ("post_block", pb.into()),
            ],
        );
        Ok(())
    }
}
