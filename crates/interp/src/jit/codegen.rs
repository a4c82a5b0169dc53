//! Machine code for a region (`region::Plan`), made with Cranelift.
//!
//! The function made is `fn(buf: *mut i64, budget: *mut i64, entry: i64)
//! -> i64`: it loads the region's slots from `buf` into variables (SSA
//! values, so they live in registers), jumps to the op of instruction
//! `entry` (the header unless `entry` is another entry of the plan), runs
//! until it leaves the region, and stores the slots it writes and the
//! budget back before it returns the status: the program counter to go
//! on at in the low 32 bits, and [`SPENT`] when a back edge left the
//! budget at a multiple of [`LIFO_CHECK`]. Leaving the region is jumping
//! out of it, or reaching an instruction that would fail (it is not run:
//! the interpreter runs it and fails as it always does), or a channel
//! operation that would wait (the interpreter runs it and parks).
//!
//! A channel operation is a call of one of `mod.rs`'s helpers,
//! the channel's address in its slot: a send returns 0 when it completed;
//! a receive returns 0 with the value at the address it was given, or
//! [`ODD`] when it took a value that is not what the channel's type says
//! (kept by the helper for the driver, which completes the receive), and
//! anything else from either means "not now".
//!
//! A `select` (receives only) is a call of `select_recv` with the cases'
//! channel addresses in a stack slot of the region's: a case that fired
//! with a value goes on at its block with the value and `ok` set; none
//! ready goes to `default`, or without one leaves with [`PARK`] (the
//! interpreter parks the select at once, without probing again); a case
//! that fired on a closed channel, or with a value of another type, leaves
//! with [`HANDOFF`] and the case's index, for the interpreter to complete.

use std::collections::{BTreeSet, HashMap};
use std::mem::ManuallyDrop;
use std::sync::OnceLock;

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::I64;
use cranelift_codegen::ir::{
    AbiParam, Block, InstBuilder, MemFlags, SigRef, Signature, StackSlotData, StackSlotKind,
    Value as V,
};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Module};

use super::super::code::{CmpOp, IntOp};
use super::region::{Op, Plan, Scalar, SelectPlan, MAX_CASES, MAX_SLOTS};

/// Budget units between two `release_lifo` calls: `exec::LIFO_CHECK`.
pub(super) const LIFO_CHECK: i64 = 64;
/// The status bit of a back edge that left the budget at a multiple of
/// `LIFO_CHECK` (the program counter is then the back edge's target).
const SPENT: i64 = 1 << 32;
/// The status bit of a receive that took a value of another type than its
/// channel's (the program counter is the receive's): a helper's result too.
pub(super) const ODD: i64 = 1 << 33;
/// The status bit of a `select` that found no case ready (the program
/// counter is the select's): the interpreter parks it.
const PARK: i64 = 1 << 34;
/// The status bit of a `select` whose case (bits 40 to 47) fired with an
/// outcome the interpreter completes (the program counter is the
/// select's): a receive on a closed channel, or a value of another type.
const HANDOFF: i64 = 1 << 35;
/// Where a `HANDOFF` status keeps the case index.
const CASE_SHIFT: i64 = 40;
/// `select_recv`'s result for "no case ready".
pub(super) const NONE_READY: i64 = -1;
/// `select_recv`'s result bit (with the case index in the low byte) for a
/// case the interpreter must complete.
pub(super) const SEL_HANDOFF: i64 = 1 << 9;

/// The `early` score of a new region, and its ceiling.
pub(super) const EARLY_START: u32 = 2;
pub(super) const EARLY_MAX: u32 = 4;

/// The compiled code's signature.
type Entry = unsafe extern "C" fn(*mut i64, *mut i64, i64) -> i64;

/// A channel helper: the channel's address, then the value to send or the
/// address to receive into.
type Helper = extern "C" fn(i64, i64) -> i64;

/// The select helper: the address of the channel addresses, the count of
/// cases with flags, the address to receive into.
type SelectHelper = extern "C" fn(i64, i64, i64) -> i64;

/// How a run of a region's code ended.
pub(crate) struct Status {
    /// A back edge left the budget at a multiple of `LIFO_CHECK`.
    pub spent: bool,
    /// The receive at `pc` took a value of another type (`ODD`).
    pub odd: bool,
    /// The select at `pc` found no case ready (`PARK`).
    pub park: bool,
    /// The select at `pc` fired this case, for the interpreter to
    /// complete (`HANDOFF`).
    pub handoff: Option<usize>,
    /// The program counter to go on at.
    pub pc: usize,
}

/// A compiled region: its plan and its code.
pub(crate) struct Compiled {
    pub plan: Plan,
    /// Whether entering at a time slice's first back edge pays (`mod.rs`,
    /// `enter`): up by one for each such entry that ran an iteration or
    /// more, down by one for each that left before its first back edge,
    /// between 0 (no such entries) and `EARLY_MAX`.
    pub early: std::sync::atomic::AtomicU32,
    entry: Entry,
    /// Owns the memory `entry` points into; freed when this is dropped.
    _code: Code,
}

impl Compiled {
    /// Runs the code from instruction `pc` (an entry of the plan) on the
    /// slots in `buf` with `budget` left; returns how it stopped.
    ///
    /// # Safety
    ///
    /// Every channel slot of the plan holds in `buf` the address of a
    /// `Chan<Value>` that stays alive and in place for the call.
    pub unsafe fn call(&self, buf: &mut [i64; MAX_SLOTS], budget: &mut i64, pc: usize) -> Status {
        // SAFETY: `entry` is the finalized code of a function with the
        // signature of `Entry`, alive while `self._code` is (so as long as
        // `&self`). It reads and writes `buf[i]` only for `i <
        // plan.slots.len() <= MAX_SLOTS`, one `i64` at `budget`, and a
        // stack slot of its own; `buf` and `budget` are exclusive borrows
        // for the call. It calls only the channel helpers, with the
        // channel addresses the caller vouches for, and cannot trap:
        // every division it does has a divisor other than 0 and -1.
        let r = unsafe { (self.entry)(buf.as_mut_ptr(), budget, pc as i64) };
        Status {
            spent: r & SPENT != 0,
            odd: r & ODD != 0,
            park: r & PARK != 0,
            handoff: (r & HANDOFF != 0).then_some(((r >> CASE_SHIFT) & 0xff) as usize),
            pc: (r & 0xffff_ffff) as usize,
        }
    }
}

/// The JIT module that owns a region's code memory.
struct Code(ManuallyDrop<JITModule>);

// SAFETY: after `finalize_definitions` the module is never used again but
// to free its memory when the `Code` is dropped, which takes it by value
// on one thread; nothing reaches it through a shared reference, and what
// it holds (code memory, symbol tables, boxed lookup functions that are
// plain functions) has no tie to the thread that made it.
unsafe impl Send for Code {}
// SAFETY: no method of `Code` takes `&self`: shared references to it give
// access to nothing.
unsafe impl Sync for Code {}

impl Drop for Code {
    fn drop(&mut self) {
        // SAFETY: taken once, here, and never used again.
        let m = unsafe { ManuallyDrop::take(&mut self.0) };
        // SAFETY: the only pointer into this memory is `Compiled::entry`,
        // which is dropped with the `Compiled` that owns this `Code`, and
        // no call of it can be running (`Compiled::call` borrows it).
        unsafe { m.free_memory() };
    }
}

/// The host's ISA with our flags, made once; `None` where Cranelift has no
/// backend for the host (the interpreter then runs everything).
fn isa() -> Option<OwnedTargetIsa> {
    static ISA: OnceLock<Option<OwnedTargetIsa>> = OnceLock::new();
    ISA.get_or_init(|| {
        let mut flags = settings::builder();
        flags.set("opt_level", "speed").ok()?;
        flags.set("is_pic", "false").ok()?;
        flags.set("use_colocated_libcalls", "false").ok()?;
        cranelift_native::builder()
            .ok()?
            .finish(settings::Flags::new(flags))
            .ok()
    })
    .clone()
}

/// Compiles a region; `None` if Cranelift cannot (no backend for the
/// host, or an error of ours that its verifier catches).
pub(super) fn compile(plan: Plan) -> Option<Compiled> {
    let isa = isa()?;
    let mut module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
    let ptr = module.target_config().pointer_type();
    let mut ctx = module.make_context();
    let sig = &mut ctx.func.signature;
    sig.params
        .extend([AbiParam::new(ptr), AbiParam::new(ptr), AbiParam::new(I64)]);
    sig.returns.push(AbiParam::new(I64));
    let mut fctx = FunctionBuilderContext::new();
    Gen::build(FunctionBuilder::new(&mut ctx.func, &mut fctx), &plan);
    let id = module
        .declare_anonymous_function(&ctx.func.signature)
        .ok()?;
    module.define_function(id, &mut ctx).ok()?;
    module.clear_context(&mut ctx);
    module.finalize_definitions().ok()?;
    let p = module.get_finalized_function(id);
    // SAFETY: `p` is the finalized code of the function just defined, whose
    // signature (two pointers and an i64 in, an i64 out, the platform's
    // default calling convention) is `Entry`'s.
    let entry = unsafe { std::mem::transmute::<*const u8, Entry>(p) };
    Some(Compiled {
        plan,
        early: std::sync::atomic::AtomicU32::new(EARLY_START),
        entry,
        _code: Code(ManuallyDrop::new(module)),
    })
}

/// The code generator's state for one region.
struct Gen<'a, 'p> {
    b: FunctionBuilder<'a>,
    /// The region's selects (`Plan::selects`).
    selects: &'p [SelectPlan],
    /// One variable per slot of the plan, and the budget.
    vars: Vec<Variable>,
    budget: Variable,
    /// Which slots the region writes (stored back at every exit).
    written: Vec<bool>,
    buf: V,
    bud: V,
    /// The block of every instruction that starts one (jump targets, the
    /// instructions after branches, the entries).
    blocks: HashMap<usize, Block>,
    /// The exit blocks by status, filled in at the end.
    exits: HashMap<i64, Block>,
    /// Whether the current block still needs a terminator.
    open: bool,
    /// A helper's signature, imported on first use.
    helper_sig: Option<SigRef>,
    /// The stack slot a receive's helper writes the value to, made on
    /// first use.
    recv_at: Option<cranelift_codegen::ir::StackSlot>,
    /// The select helper's signature, imported on first use.
    select_sig: Option<SigRef>,
    /// The stack slot a select's channel addresses go in, made on first
    /// use.
    chans_at: Option<cranelift_codegen::ir::StackSlot>,
}

impl Gen<'_, '_> {
    fn build(mut b: FunctionBuilder<'_>, plan: &Plan) {
        let start = b.create_block();
        b.append_block_params_for_function_params(start);
        b.switch_to_block(start);
        let (buf, bud, entry) = {
            let p = b.block_params(start);
            (p[0], p[1], p[2])
        };
        let flags = MemFlags::trusted();
        let mut vars = Vec::with_capacity(plan.slots.len());
        for i in 0..plan.slots.len() {
            let v = b.declare_var(I64);
            let x = b.ins().load(I64, flags, buf, (8 * i) as i32);
            b.def_var(v, x);
            vars.push(v);
        }
        let budget = b.declare_var(I64);
        let x = b.ins().load(I64, flags, bud, 0);
        b.def_var(budget, x);

        let mut written = vec![false; plan.slots.len()];
        let mut leaders: BTreeSet<usize> = plan.entries.iter().copied().collect();
        let inside = |pc: usize| (plan.start..=plan.end).contains(&pc);
        for &(pc, op) in &plan.ops {
            match op {
                Op::Const { out, .. }
                | Op::Copy { out, .. }
                | Op::Int { out, .. }
                | Op::IntK { out, .. }
                | Op::Neg { out, .. }
                | Op::Not { out, .. }
                | Op::Cmp { out, .. } => written[out] = true,
                Op::Recv { out, ok, .. } => {
                    for w in [out, ok].into_iter().flatten() {
                        written[w] = true;
                    }
                }
                Op::Send { .. } => {}
                Op::Select { sel } => {
                    let p = &plan.selects[sel];
                    for c in &p.cases {
                        for w in [c.out, c.ok].into_iter().flatten() {
                            written[w] = true;
                        }
                        if inside(c.target) {
                            leaders.insert(c.target);
                        }
                    }
                    if let Some(d) = p.default.filter(|&d| inside(d)) {
                        leaders.insert(d);
                    }
                }
                Op::Leave => {
                    if inside(pc + 1) {
                        leaders.insert(pc + 1);
                    }
                }
                Op::Jump { to }
                | Op::JumpIfNot { to, .. }
                | Op::CmpJump { to, .. }
                | Op::CmpJumpK { to, .. } => {
                    if inside(to) {
                        leaders.insert(to);
                    }
                    if inside(pc + 1) {
                        leaders.insert(pc + 1);
                    }
                }
            }
        }
        let blocks: HashMap<usize, Block> =
            leaders.iter().map(|&pc| (pc, b.create_block())).collect();
        let mut g = Gen {
            b,
            selects: &plan.selects,
            vars,
            budget,
            written,
            buf,
            bud,
            blocks,
            exits: HashMap::new(),
            open: true,
            helper_sig: None,
            recv_at: None,
            select_sig: None,
            chans_at: None,
        };

        // Dispatch on `entry`: the header unless another entry is named.
        for &e in &plan.entries[1..] {
            let c = g.b.ins().icmp_imm(IntCC::Equal, entry, e as i64);
            let next = g.b.create_block();
            let to = g.blocks[&e];
            g.b.ins().brif(c, to, &[], next, &[]);
            g.b.switch_to_block(next);
        }
        let h = g.blocks[&plan.start];
        g.b.ins().jump(h, &[]);
        g.open = false;

        let mut last = None;
        for &(pc, op) in &plan.ops {
            if last != Some(pc) {
                last = Some(pc);
                if let Some(&bk) = g.blocks.get(&pc) {
                    if g.open {
                        g.b.ins().jump(bk, &[]);
                    }
                    g.b.switch_to_block(bk);
                    g.open = true;
                } else if !g.open {
                    // Not reached from anywhere (after an exit that is
                    // always taken): a block of its own all the same.
                    let bk = g.b.create_block();
                    g.b.switch_to_block(bk);
                    g.open = true;
                }
            }
            g.op(pc, op);
        }
        if g.open {
            let to = g.target(plan.end + 1);
            g.b.ins().jump(to, &[]);
        }
        g.fill_exits();
        g.b.seal_all_blocks();
        g.b.finalize();
    }

    /// The block that runs instruction `pc`: its block in the region, or
    /// an exit to the interpreter there.
    fn target(&mut self, pc: usize) -> Block {
        match self.blocks.get(&pc) {
            Some(&b) => b,
            None => self.exit(pc as i64),
        }
    }

    /// The exit block returning `status`.
    fn exit(&mut self, status: i64) -> Block {
        if let Some(&b) = self.exits.get(&status) {
            return b;
        }
        let b = self.b.create_block();
        self.exits.insert(status, b);
        b
    }

    /// Stores the written slots and the budget, and returns the status, in
    /// every exit block.
    fn fill_exits(&mut self) {
        let mut exits: Vec<(i64, Block)> = self.exits.iter().map(|(&s, &b)| (s, b)).collect();
        exits.sort_unstable();
        let flags = MemFlags::trusted();
        for (status, bk) in exits {
            self.b.switch_to_block(bk);
            for (i, (&var, &w)) in self.vars.iter().zip(&self.written).enumerate() {
                if w {
                    let v = self.b.use_var(var);
                    self.b.ins().store(flags, v, self.buf, (8 * i) as i32);
                }
            }
            let v = self.b.use_var(self.budget);
            self.b.ins().store(flags, v, self.bud, 0);
            let r = self.b.ins().iconst(I64, status);
            self.b.ins().return_(&[r]);
        }
    }

    fn get(&mut self, slot: usize) -> V {
        self.b.use_var(self.vars[slot])
    }

    fn set(&mut self, slot: usize, v: V) {
        self.b.def_var(self.vars[slot], v);
    }

    /// Leaves the region at instruction `pc` (before running it) when
    /// `cond` holds.
    fn exit_if(&mut self, cond: V, pc: usize) {
        let out = self.exit(pc as i64);
        let ok = self.b.create_block();
        self.b.ins().brif(cond, out, &[], ok, &[]);
        self.b.switch_to_block(ok);
    }

    /// Leaves the region at instruction `pc`: it would fail, or it ends
    /// the function.
    fn exit_always(&mut self, pc: usize) {
        let out = self.exit(pc as i64);
        self.b.ins().jump(out, &[]);
        self.open = false;
    }

    fn op(&mut self, pc: usize, op: Op) {
        match op {
            Op::Const { out, k } => {
                let v = self.b.ins().iconst(I64, k);
                self.set(out, v);
            }
            Op::Copy { x, out } => {
                let v = self.get(x);
                self.set(out, v);
            }
            Op::Neg { x, out } => {
                let x = self.get(x);
                let v = self.b.ins().ineg(x);
                self.set(out, v);
            }
            Op::Not { x, out } => {
                let x = self.get(x);
                let v = self.b.ins().bxor_imm(x, 1);
                self.set(out, v);
            }
            Op::Cmp { op, x, y, out } => {
                let (x, y) = (self.get(x), self.get(y));
                let c = self.b.ins().icmp(cc(op), x, y);
                let v = self.b.ins().uextend(I64, c);
                self.set(out, v);
            }
            Op::Int { op, x, y, out } => {
                let (x, y) = (self.get(x), self.get(y));
                if let Some(v) = self.int(pc, op, x, y) {
                    self.set(out, v);
                }
            }
            Op::IntK { op, x, k, out } => {
                let x = self.get(x);
                if let Some(v) = self.int_k(pc, op, x, k) {
                    self.set(out, v);
                }
            }
            Op::Jump { to } => {
                if to <= pc {
                    self.back_edge(to);
                } else {
                    let t = self.target(to);
                    self.b.ins().jump(t, &[]);
                }
                self.open = false;
            }
            Op::JumpIfNot { cond, to } => {
                let c = self.get(cond);
                self.branch(pc, c, to);
            }
            Op::CmpJump { op, x, y, to } => {
                let (x, y) = (self.get(x), self.get(y));
                let c = self.b.ins().icmp(cc(op), x, y);
                self.branch(pc, c, to);
            }
            Op::CmpJumpK { op, x, k, to } => {
                let x = self.get(x);
                let c = self.b.ins().icmp_imm(cc(op), x, k);
                self.branch(pc, c, to);
            }
            Op::Send { ch, v, elem } => {
                let h: Helper = match elem {
                    Scalar::Int => super::send_int,
                    Scalar::Bool => super::send_bool,
                };
                let (ch, v) = (self.get(ch), self.get(v));
                let r = self.call_helper(h, ch, v);
                self.exit_if(r, pc);
            }
            Op::Recv { ch, out, ok, elem } => {
                let h: Helper = match elem {
                    Scalar::Int => super::recv_int,
                    Scalar::Bool => super::recv_bool,
                };
                let at = self.recv_slot();
                let ch = self.get(ch);
                let addr = self.b.ins().stack_addr(I64, at, 0);
                let r = self.call_helper(h, ch, addr);
                // 0: received; ODD: an odd value, which the driver
                // completes; anything else: not now.
                let miss = self.b.create_block();
                let got = self.b.create_block();
                self.b.ins().brif(r, miss, &[], got, &[]);
                self.b.switch_to_block(miss);
                let odd = self.b.ins().icmp_imm(IntCC::Equal, r, ODD);
                let to_odd = self.exit(ODD | pc as i64);
                let not_now = self.exit(pc as i64);
                self.b.ins().brif(odd, to_odd, &[], not_now, &[]);
                self.b.switch_to_block(got);
                if let Some(o) = out {
                    let v = self.b.ins().stack_load(I64, at, 0);
                    self.set(o, v);
                }
                if let Some(k) = ok {
                    let one = self.b.ins().iconst(I64, 1);
                    self.set(k, one);
                }
            }
            Op::Select { sel } => self.select(pc, sel),
            Op::Leave => self.exit_always(pc),
        }
    }

    /// The stack slot a receive's value is written to.
    fn recv_slot(&mut self) -> cranelift_codegen::ir::StackSlot {
        match self.recv_at {
            Some(s) => s,
            None => {
                let s = self.b.create_sized_stack_slot(StackSlotData::new(
                    StackSlotKind::ExplicitSlot,
                    8,
                    3,
                ));
                self.recv_at = Some(s);
                s
            }
        }
    }

    /// The select `sel` at `pc` (see the module's header).
    fn select(&mut self, pc: usize, sel: usize) {
        let selects = self.selects;
        let p = &selects[sel];
        let n = p.cases.len();
        debug_assert!((1..=MAX_CASES).contains(&n));
        let chans = match self.chans_at {
            Some(s) => s,
            None => {
                let s = self.b.create_sized_stack_slot(StackSlotData::new(
                    StackSlotKind::ExplicitSlot,
                    (8 * MAX_CASES) as u32,
                    3,
                ));
                self.chans_at = Some(s);
                s
            }
        };
        let mut bools = 0i64;
        for (i, c) in p.cases.iter().enumerate() {
            let ch = self.get(c.ch);
            self.b.ins().stack_store(ch, chans, (8 * i) as i32);
            if c.elem == Scalar::Bool {
                bools |= 1 << i;
            }
        }
        let at = self.recv_slot();
        let chans = self.b.ins().stack_addr(I64, chans, 0);
        let out = self.b.ins().stack_addr(I64, at, 0);
        let spec = n as i64 | bools << 8 | (p.default.is_some() as i64) << 16;
        let spec = self.b.ins().iconst(I64, spec);
        let r = self.call_select(chans, spec, out);

        // No case ready: the default case, or leave for the interpreter to
        // park the select.
        let none = self.b.ins().icmp_imm(IntCC::Equal, r, NONE_READY);
        let not_none = self.b.create_block();
        let idle = match p.default {
            Some(d) => self.target(d),
            None => self.exit(PARK | pc as i64),
        };
        self.b.ins().brif(none, idle, &[], not_none, &[]);
        self.b.switch_to_block(not_none);

        // A case to hand to the interpreter, or one that fired here.
        let handoff = self.b.ins().band_imm(r, SEL_HANDOFF);
        let to_handoff = self.b.create_block();
        let fired = self.b.create_block();
        self.b.ins().brif(handoff, to_handoff, &[], fired, &[]);
        self.b.switch_to_block(to_handoff);
        let idx = self.b.ins().band_imm(r, 0xff);
        for i in 0..n {
            let out = self.exit(HANDOFF | (i as i64) << CASE_SHIFT | pc as i64);
            if i + 1 == n {
                self.b.ins().jump(out, &[]);
            } else {
                let c = self.b.ins().icmp_imm(IntCC::Equal, idx, i as i64);
                let next = self.b.create_block();
                self.b.ins().brif(c, out, &[], next, &[]);
                self.b.switch_to_block(next);
            }
        }

        self.b.switch_to_block(fired);
        let idx = self.b.ins().band_imm(r, 0xff);
        for (i, c) in p.cases.iter().enumerate() {
            let case = self.b.create_block();
            let next = (i + 1 < n).then(|| self.b.create_block());
            match next {
                Some(next) => {
                    let is = self.b.ins().icmp_imm(IntCC::Equal, idx, i as i64);
                    self.b.ins().brif(is, case, &[], next, &[]);
                }
                None => {
                    self.b.ins().jump(case, &[]);
                }
            }
            self.b.switch_to_block(case);
            if let Some(o) = c.out {
                let v = self.b.ins().stack_load(I64, at, 0);
                self.set(o, v);
            }
            if let Some(k) = c.ok {
                let one = self.b.ins().iconst(I64, 1);
                self.set(k, one);
            }
            let to = self.target(c.target);
            self.b.ins().jump(to, &[]);
            if let Some(next) = next {
                self.b.switch_to_block(next);
            }
        }
        self.open = false;
    }

    /// Calls the select helper; its result.
    fn call_select(&mut self, chans: V, spec: V, out: V) -> V {
        let sig = match self.select_sig {
            Some(s) => s,
            None => {
                let mut sig = Signature::new(self.b.func.signature.call_conv);
                sig.params
                    .extend([AbiParam::new(I64), AbiParam::new(I64), AbiParam::new(I64)]);
                sig.returns.push(AbiParam::new(I64));
                let s = self.b.import_signature(sig);
                self.select_sig = Some(s);
                s
            }
        };
        let h: SelectHelper = super::select_recv;
        let f = self.b.ins().iconst(I64, h as usize as i64);
        let call = self.b.ins().call_indirect(sig, f, &[chans, spec, out]);
        self.b.inst_results(call)[0]
    }

    /// Calls the channel helper `h` with two arguments; its result.
    fn call_helper(&mut self, h: Helper, a: V, b: V) -> V {
        let sig = match self.helper_sig {
            Some(s) => s,
            None => {
                let mut sig = Signature::new(self.b.func.signature.call_conv);
                sig.params.extend([AbiParam::new(I64), AbiParam::new(I64)]);
                sig.returns.push(AbiParam::new(I64));
                let s = self.b.import_signature(sig);
                self.helper_sig = Some(s);
                s
            }
        };
        let f = self.b.ins().iconst(I64, h as usize as i64);
        let call = self.b.ins().call_indirect(sig, f, &[a, b]);
        self.b.inst_results(call)[0]
    }

    /// On to `pc + 1` if `c`, else to `to`.
    fn branch(&mut self, pc: usize, c: V, to: usize) {
        let yes = self.target(pc + 1);
        let no = self.target(to);
        self.b.ins().brif(c, yes, &[], no, &[]);
        self.open = false;
    }

    /// An unconditional backward jump to `to`: spends a unit of budget as
    /// `exec::spend` does, and stops with `SPENT` when the budget reaches
    /// a multiple of `LIFO_CHECK` (the driver checks the LIFO slot and
    /// yields at zero).
    fn back_edge(&mut self, to: usize) {
        let b = self.b.use_var(self.budget);
        let b = self.b.ins().iadd_imm(b, -1);
        self.b.def_var(self.budget, b);
        let low = self.b.ins().band_imm(b, LIFO_CHECK - 1);
        let on = self.target(to);
        let spent = self.exit(SPENT | to as i64);
        self.b.ins().brif(low, on, &[], spent, &[]);
    }

    /// `x op y` on ints, as `ops::int_op`; `None` (after an exit) when it
    /// always fails.
    fn int(&mut self, pc: usize, op: IntOp, x: V, y: V) -> Option<V> {
        Some(match op {
            IntOp::Add => self.b.ins().iadd(x, y),
            IntOp::Sub => self.b.ins().isub(x, y),
            IntOp::Mul => self.b.ins().imul(x, y),
            IntOp::And => self.b.ins().band(x, y),
            IntOp::Or => self.b.ins().bor(x, y),
            IntOp::Xor => self.b.ins().bxor(x, y),
            IntOp::Div | IntOp::Mod => {
                let zero = self.b.ins().icmp_imm(IntCC::Equal, y, 0);
                self.exit_if(zero, pc);
                // -1 and MinInt divide as special cases: Cranelift's
                // `sdiv` traps on `MinInt / -1`, and its rewrite of a
                // division by a constant power of two takes MinInt for
                // 2^63. Neither reaches `sdiv`/`srem` (1 does instead).
                let m1 = self.b.ins().icmp_imm(IntCC::Equal, y, -1);
                let min = self.b.ins().icmp_imm(IntCC::Equal, y, i64::MIN);
                let special = self.b.ins().bor(m1, min);
                let one = self.b.ins().iconst(I64, 1);
                let d = self.b.ins().select(special, one, y);
                let x_min = self.b.ins().icmp_imm(IntCC::Equal, x, i64::MIN);
                if op == IntOp::Div {
                    // x / -1 == -x (wrapping); x / MinInt == (x == MinInt).
                    let q = self.b.ins().sdiv(x, d);
                    let neg = self.b.ins().ineg(x);
                    let q = self.b.ins().select(m1, neg, q);
                    let is = self.b.ins().uextend(I64, x_min);
                    self.b.ins().select(min, is, q)
                } else {
                    // x % -1 == x % 1 == 0; x % MinInt == x unless x is MinInt.
                    let r = self.b.ins().srem(x, d);
                    let zero = self.b.ins().iconst(I64, 0);
                    let by_min = self.b.ins().select(x_min, zero, x);
                    self.b.ins().select(min, by_min, r)
                }
            }
            IntOp::Shl => {
                let neg = self.b.ins().icmp_imm(IntCC::SignedLessThan, y, 0);
                self.exit_if(neg, pc);
                let big = self.b.ins().icmp_imm(IntCC::SignedGreaterThan, y, 63);
                let s = self.b.ins().ishl(x, y);
                let zero = self.b.ins().iconst(I64, 0);
                self.b.ins().select(big, zero, s)
            }
            IntOp::Shr => {
                let neg = self.b.ins().icmp_imm(IntCC::SignedLessThan, y, 0);
                self.exit_if(neg, pc);
                let big = self.b.ins().icmp_imm(IntCC::SignedGreaterThan, y, 63);
                let max = self.b.ins().iconst(I64, 63);
                let n = self.b.ins().select(big, max, y);
                self.b.ins().sshr(x, n)
            }
        })
    }

    /// `x op k` on ints, `k` a constant, as `ops::int_op`; `None` (after an
    /// exit) when it always fails.
    fn int_k(&mut self, pc: usize, op: IntOp, x: V, k: i64) -> Option<V> {
        Some(match op {
            IntOp::Add => self.b.ins().iadd_imm(x, k),
            IntOp::Sub => {
                let y = self.b.ins().iconst(I64, k);
                self.b.ins().isub(x, y)
            }
            IntOp::Mul => self.b.ins().imul_imm(x, k),
            IntOp::And => self.b.ins().band_imm(x, k),
            IntOp::Or => self.b.ins().bor_imm(x, k),
            IntOp::Xor => self.b.ins().bxor_imm(x, k),
            IntOp::Div | IntOp::Mod if k == 0 => {
                self.exit_always(pc);
                return None;
            }
            IntOp::Div => match k {
                1 => x,
                -1 => self.b.ins().ineg(x),
                i64::MIN => {
                    let c = self.b.ins().icmp_imm(IntCC::Equal, x, i64::MIN);
                    self.b.ins().uextend(I64, c)
                }
                // Cranelift divides by a constant with a multiply.
                _ => {
                    let d = self.b.ins().iconst(I64, k);
                    self.b.ins().sdiv(x, d)
                }
            },
            IntOp::Mod => match k {
                1 | -1 => self.b.ins().iconst(I64, 0),
                i64::MIN => {
                    let c = self.b.ins().icmp_imm(IntCC::Equal, x, i64::MIN);
                    let zero = self.b.ins().iconst(I64, 0);
                    self.b.ins().select(c, zero, x)
                }
                _ => {
                    let d = self.b.ins().iconst(I64, k);
                    self.b.ins().srem(x, d)
                }
            },
            IntOp::Shl | IntOp::Shr if k < 0 => {
                self.exit_always(pc);
                return None;
            }
            IntOp::Shl if k > 63 => self.b.ins().iconst(I64, 0),
            IntOp::Shl => self.b.ins().ishl_imm(x, k),
            IntOp::Shr => self.b.ins().sshr_imm(x, k.min(63)),
        })
    }
}

/// The signed condition of a comparison (bools are 0 and 1, so `==` and
/// `!=` on them are the same conditions).
fn cc(op: CmpOp) -> IntCC {
    match op {
        CmpOp::Eq => IntCC::Equal,
        CmpOp::Ne => IntCC::NotEqual,
        CmpOp::Lt => IntCC::SignedLessThan,
        CmpOp::Le => IntCC::SignedLessThanOrEqual,
        CmpOp::Gt => IntCC::SignedGreaterThan,
        CmpOp::Ge => IntCC::SignedGreaterThanOrEqual,
    }
}
