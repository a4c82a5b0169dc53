//! Lowering of statements: assignments as read-modify-write through
//! `set_index`/`set_field`, `for` and `for range` as `loop`, `switch` as a
//! `region` holding an `if` chain, labelled `switch`/`select` inside a
//! labelled `region`, `select` as the `select` op with one block per case,
//! `go { }` as `go` with its captured variables.

use weft_ir::builder::BlockId;

use super::{Lowerer, Op};
use crate::ast::*;
use crate::check::Res;
use crate::types::{ConstVal, Ty};

/// An assignment target whose index operands are already evaluated.
pub(crate) enum Place {
    Blank,
    Var(String),
    Index(Box<Place>, String, Ty),
    Field(Box<Place>, String, Ty),
}

fn is_recv(e: &Expr) -> bool {
    crate::check::is_recv_expr(e)
}

fn recv_chan(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Paren(i) => recv_chan(i),
        ExprKind::Unary(UnOp::Recv, c) => c,
        _ => e,
    }
}

/// Whether a body defers a call (its own `defer`s: not those of the go
/// blocks and function literals inside it).
fn has_defer(stmts: &[Stmt]) -> bool {
    let mut work: Vec<&Stmt> = stmts.iter().collect();
    while let Some(s) = work.pop() {
        match &s.kind {
            StmtKind::Defer(_) => return true,
            StmtKind::Block(b) => work.extend(&b.stmts),
            StmtKind::If { then, els, .. } => {
                work.extend(&then.stmts);
                work.extend(els.as_deref());
            }
            StmtKind::For { body, .. } | StmtKind::ForRange { body, .. } => {
                work.extend(&body.stmts)
            }
            StmtKind::Switch { cases, .. } => {
                for c in cases {
                    work.extend(&c.body);
                }
            }
            StmtKind::Select(cases) => {
                for c in cases {
                    work.extend(&c.body);
                }
            }
            StmtKind::Labeled { stmt, .. } => work.push(stmt),
            _ => {}
        }
    }
    false
}

impl<'a> Lowerer<'a> {
    /// The body of a function, function literal or go block, in the
    /// current block: with `defer`s, a list of the deferred calls (each a
    /// `func()` value) that every `return` and the end of the body run,
    /// last first (docs/interpreter.md, "defer").
    pub(crate) fn body(&mut self, stmts: &[Stmt], span: crate::diag::Span) {
        let saved = self.defers.take();
        if has_defer(stmts) {
            let ty = Ty::list(Ty::func(Vec::new(), None));
            let d = self.temp(&ty);
            self.emit(Op::new("zero", span).output("Out", d.clone()));
            self.defers = Some(d);
        }
        self.stmts(stmts);
        let end = crate::diag::Span::new(span.end.saturating_sub(1) as usize, span.end as usize);
        self.run_defers(end);
        self.defers = saved;
    }

    /// Runs the deferred calls of the current body, last first:
    /// `for i := len(d) - 1; i >= 0; i-- { d[i]() }`.
    fn run_defers(&mut self, sp: crate::diag::Span) {
        let Some(d) = self.defers.clone() else {
            return;
        };
        let i = self.temp(&Ty::Int);
        self.emit(
            Op::new("len", sp)
                .input("X", d.clone())
                .output("Out", i.clone()),
        );
        let zero = self.temp(&Ty::Int);
        self.constant(&ConstVal::Int(0), &Ty::Int, &dummy(sp), Some(&zero));
        let c = self.temp(&Ty::Bool);
        let cb = self.new_block();
        self.in_block(cb, |l| {
            l.emit(
                Op::new("gt", sp)
                    .input("X", i.clone())
                    .input("Y", zero)
                    .output("Out", c.clone()),
            );
        });
        let bb = self.new_block();
        self.in_block(bb, |l| {
            let one = l.small_const(1, &Ty::Int, &dummy(sp));
            l.emit(
                Op::new("sub", sp)
                    .input("X", i.clone())
                    .input("Y", one)
                    .output("Out", i.clone()),
            );
            let f = l.temp(&Ty::func(Vec::new(), None));
            l.emit(
                Op::new("index", sp)
                    .input("X", d.clone())
                    .input("Index", i.clone())
                    .output("Out", f.clone()),
            );
            l.emit(
                Op::new("call_value", sp)
                    .input("F", f)
                    .inputs("Args", Vec::new()),
            );
        });
        self.emit(
            Op::new("loop", sp)
                .input("Cond", c)
                .attr("cond_block", cb)
                .attr("body_block", bb),
        );
    }

    pub(crate) fn stmts(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s, None);
        }
    }

    /// An `if` and its `else if` links, in a loop: each link's `if` op goes
    /// into its block as soon as its else block exists (nothing else is
    /// emitted into that block afterwards), then lowering moves on into
    /// the else block, so a long chain does not nest the recursion.
    fn if_chain(&mut self, s: &Stmt) {
        let saved = self.cur;
        let mut cur = s;
        while let StmtKind::If {
            init,
            cond,
            then,
            els,
        } = &cur.kind
        {
            if let Some(i) = init {
                self.stmt(i, None);
            }
            let c = self.expr(cond, None);
            let tb = self.block_of(&then.stmts);
            let mut op = Op::new("if", cur.span)
                .input("Cond", c)
                .attr("then_block", tb);
            let Some(e) = els.as_deref() else {
                self.emit(op);
                break;
            };
            let eb = self.new_block();
            op = op.attr("else_block", eb);
            self.emit(op);
            self.cur = eb;
            if !matches!(e.kind, StmtKind::If { .. }) {
                self.stmt(e, None);
                break;
            }
            cur = e;
        }
        self.cur = saved;
    }

    fn block_of(&mut self, stmts: &[Stmt]) -> BlockId {
        let b = self.new_block();
        self.in_block(b, |l| l.stmts(stmts));
        b
    }

    fn stmt(&mut self, s: &Stmt, label: Option<&str>) {
        let sp = s.span;
        match &s.kind {
            StmtKind::Empty | StmtKind::Const(_) => {}
            StmtKind::Var { names, values, .. } => {
                if values.is_empty() {
                    for n in names {
                        if let Some(v) = self.declare(n) {
                            self.emit(Op::new("zero", sp).output("Out", v));
                        }
                    }
                } else if names.len() == 2 && values.len() == 1 && is_recv(&values[0]) {
                    let v = self.declare(&names[0]).unwrap_or_else(|| "_".into());
                    let ok = self.declare(&names[1]).unwrap_or_else(|| "_".into());
                    let c = self.expr(recv_chan(&values[0]), None);
                    self.emit(
                        Op::new("recv", values[0].span)
                            .input("Chan", c)
                            .output("Out", v)
                            .output("Ok", ok),
                    );
                } else if names.len() >= 2 && values.len() == 1 {
                    let vals = self.multi(&values[0], names.len());
                    for (n, v) in names.iter().zip(vals) {
                        if let Some(d) = self.declare(n) {
                            self.emit(Op::new("copy", sp).input("X", v).output("Out", d));
                        }
                    }
                } else {
                    let vals = self.values(values);
                    for (n, v) in names.iter().zip(vals) {
                        if let Some(d) = self.declare(n) {
                            self.emit(Op::new("copy", sp).input("X", v).output("Out", d));
                        }
                    }
                }
            }
            StmtKind::Define { names, values } => {
                if names.len() == 2 && values.len() == 1 && is_recv(&values[0]) {
                    let v = self.define_target(&names[0]);
                    let ok = self.define_target(&names[1]);
                    let c = self.expr(recv_chan(&values[0]), None);
                    self.emit(
                        Op::new("recv", values[0].span)
                            .input("Chan", c)
                            .output("Out", v)
                            .output("Ok", ok),
                    );
                } else if names.len() == 1 {
                    if names[0].is_blank() {
                        self.expr(&values[0], None);
                    } else {
                        let d = self.define_target(&names[0]);
                        self.expr(&values[0], Some(&d));
                    }
                } else {
                    let vals = if names.len() >= 2 && values.len() == 1 {
                        self.multi(&values[0], names.len())
                    } else {
                        self.values(values)
                    };
                    for (n, v) in names.iter().zip(vals) {
                        if !n.is_blank() {
                            let d = self.define_target(n);
                            self.emit(Op::new("copy", sp).input("X", v).output("Out", d));
                        }
                    }
                }
            }
            StmtKind::Assign {
                lhs,
                op: Some(op),
                rhs,
            } => {
                let place = self.place(&lhs[0]);
                let ty = self.info.ty(&lhs[0]).clone();
                let cur = self.load(&place, sp);
                let r = self.expr(&rhs[0], None);
                let new = self.temp(&ty);
                self.emit(
                    Op::new(binop(*op), sp)
                        .input("X", cur)
                        .input("Y", r)
                        .output("Out", new.clone()),
                );
                self.store(&place, new, sp);
            }
            StmtKind::Assign { lhs, op: None, rhs } => {
                if lhs.len() == 2 && rhs.len() == 1 && is_recv(&rhs[0]) {
                    let places: Vec<Place> = lhs.iter().map(|l| self.place(l)).collect();
                    let vt = self.info.ty(&rhs[0]).clone();
                    let v = self.temp(&vt);
                    let ok = self.temp(&Ty::Bool);
                    let c = self.expr(recv_chan(&rhs[0]), None);
                    self.emit(
                        Op::new("recv", rhs[0].span)
                            .input("Chan", c)
                            .output("Out", v.clone())
                            .output("Ok", ok.clone()),
                    );
                    self.store(&places[0], v, sp);
                    self.store(&places[1], ok, sp);
                } else if lhs.len() == 1 {
                    match self.place(&lhs[0]) {
                        Place::Var(name) => {
                            self.expr(&rhs[0], Some(&name));
                        }
                        Place::Blank => {
                            self.expr(&rhs[0], None);
                        }
                        place => {
                            let v = self.expr(&rhs[0], None);
                            self.store(&place, v, sp);
                        }
                    }
                } else {
                    // Every index operand on the left is taken now, before
                    // any assignment (docs/language.md, "Multiple
                    // assignment"): `i, l[i] = 1, 5` with i == 0 sets l[0].
                    let places: Vec<Place> = lhs.iter().map(|l| self.place_at(l, true)).collect();
                    let vals = if rhs.len() == 1 {
                        self.multi(&rhs[0], lhs.len())
                    } else {
                        self.values(rhs)
                    };
                    for (p, v) in places.iter().zip(vals) {
                        self.store(p, v, sp);
                    }
                }
            }
            StmtKind::IncDec { target, inc } => {
                let place = self.place(target);
                let ty = self.info.ty(target).clone();
                let cur = self.load(&place, sp);
                let one = self.small_const(1, &ty, target);
                let new = self.temp(&ty);
                let name = if *inc { "add" } else { "sub" };
                self.emit(
                    Op::new(name, sp)
                        .input("X", cur)
                        .input("Y", one)
                        .output("Out", new.clone()),
                );
                self.store(&place, new, sp);
            }
            StmtKind::Expr(e) => self.expr_stmt(e),
            StmtKind::Send { chan, value } => {
                let c = self.expr(chan, None);
                let v = self.expr(value, None);
                self.emit(Op::new("send", sp).input("Chan", c).input("Value", v));
            }
            StmtKind::GoCall(call, on) => {
                if let ExprKind::Call { func, args, .. } = &call.kind {
                    // The arguments, then the device, evaluated now.
                    match self.info.uses.get(&func.id) {
                        Some(Res::Func(id)) => {
                            let name = self.info.funcs[*id as usize].name.clone();
                            let argv = self.go_args(args);
                            let mut op = Op::new("go_call", sp).inputs("Args", argv);
                            if let Some(d) = on {
                                let dv = self.expr(d, None);
                                op = op.input("Device", dv);
                            }
                            self.emit(op.attr("func", name));
                        }
                        _ => {
                            // `go f(x)` with f a func value: the function,
                            // its arguments, then the device.
                            let fv = self.expr(func, None);
                            let argv = self.go_args(args);
                            let mut op =
                                Op::new("go_value", sp).input("F", fv).inputs("Args", argv);
                            if let Some(d) = on {
                                let dv = self.expr(d, None);
                                op = op.input("Device", dv);
                            }
                            self.emit(op);
                        }
                    }
                }
            }
            StmtKind::GoBlock(body, on) => {
                let dev = on.as_ref().map(|d| self.expr(d, None));
                let caps: Vec<String> = self
                    .info
                    .captures
                    .get(&s.id)
                    .map(|v| v.iter().map(|id| self.var_name(*id)).collect())
                    .unwrap_or_default();
                let b = self.new_block();
                let result = self.result.take();
                self.in_block(b, |l| l.body(&body.stmts, body.span));
                self.result = result;
                let mut op = Op::new("go", sp).inputs("Captures", caps);
                if let Some(dv) = dev {
                    op = op.input("Device", dv);
                }
                self.emit(op.attr("block", b));
            }
            StmtKind::Return(values) => {
                let mut op = Op::new("return", sp);
                let result = self.result.clone();
                let v = match (values.len(), &result) {
                    (0, _) => None,
                    (1, _) => Some(self.expr(&values[0], None)),
                    (_, Some(t)) => {
                        // several values: one tuple struct
                        let vals = self.values(values);
                        let out = self.temp(t);
                        self.emit(
                            Op::new("struct_new", sp)
                                .inputs("Fields", vals)
                                .output("Out", out.clone()),
                        );
                        Some(out)
                    }
                    (_, None) => None,
                };
                // The values are taken before the deferred calls run.
                let v = match (v, self.defers.is_some(), &result) {
                    (Some(x), true, Some(t)) => {
                        let keep = self.temp(t);
                        self.emit(
                            Op::new("copy", sp)
                                .input("X", x)
                                .output("Out", keep.clone()),
                        );
                        Some(keep)
                    }
                    (v, _, _) => v,
                };
                self.run_defers(sp);
                if let Some(x) = v {
                    op = op.input("Value", x);
                }
                self.emit(op);
            }
            StmtKind::Defer(call) => self.defer(call),
            StmtKind::Break(l) | StmtKind::Continue(l) => {
                let name = if matches!(s.kind, StmtKind::Break(_)) {
                    "break"
                } else {
                    "continue"
                };
                let mut op = Op::new(name, sp);
                if let Some(l) = l {
                    op = op.attr("label", l.name.as_str());
                }
                self.emit(op);
            }
            StmtKind::Block(b) => self.stmts(&b.stmts),
            StmtKind::If { .. } => self.if_chain(s),
            StmtKind::For {
                init,
                cond,
                post,
                body,
            } => {
                if let Some(i) = init {
                    self.stmt(i, None);
                }
                let mut op = Op::new("loop", sp);
                if let Some(c) = cond {
                    let cv = self.temp(&Ty::Bool);
                    let cb = self.new_block();
                    self.in_block(cb, |l| {
                        l.expr(c, Some(&cv));
                    });
                    op = op.input("Cond", cv).attr("cond_block", cb);
                }
                let bb = self.block_of(&body.stmts);
                op = op.attr("body_block", bb);
                if let Some(p) = post {
                    let pb = self.new_block();
                    self.in_block(pb, |l| l.stmt(p, None));
                    op = op.attr("post_block", pb);
                }
                if let Some(l) = label {
                    op = op.attr("label", l);
                }
                self.emit(op);
            }
            StmtKind::ForRange {
                key,
                value,
                expr,
                body,
            } => self.for_range(s, key.as_ref(), value.as_ref(), expr, body, label),
            StmtKind::Switch { init, tag, cases } => {
                let rb = self.new_block();
                self.in_block(rb, |l| l.switch(init.as_deref(), tag.as_ref(), cases));
                let mut op = Op::new("region", sp).attr("block", rb);
                if let Some(l) = label {
                    op = op.attr("label", l);
                }
                self.emit(op);
            }
            StmtKind::Select(cases) => match label {
                Some(l) => {
                    let rb = self.new_block();
                    self.in_block(rb, |lw| lw.select(s, cases));
                    self.emit(Op::new("region", sp).attr("block", rb).attr("label", l));
                }
                None => self.select(s, cases),
            },
            StmtKind::Labeled { label, stmt } => self.stmt(stmt, Some(&label.name)),
        }
    }

    /// The `n` values of one expression into temporaries: a call with
    /// several results (its tuple's fields) or a map's `v, ok`.
    fn multi(&mut self, e: &Expr, n: usize) -> Vec<String> {
        let inner = {
            let mut x = e;
            while let ExprKind::Paren(i) = &x.kind {
                x = i;
            }
            x
        };
        if let ExprKind::Index(x, k) = &inner.kind {
            if let Ty::Map(_, vt) = self.info.ty(x).clone() {
                let m = self.expr(x, None);
                let kv = self.expr(k, None);
                let v = self.temp(&vt);
                let ok = self.temp(&Ty::Bool);
                self.emit(
                    Op::new("map_get", inner.span)
                        .input("X", m)
                        .input("Key", kv)
                        .output("Out", v.clone())
                        .output("Ok", ok.clone()),
                );
                return vec![v, ok];
            }
        }
        let t = self.expr(e, None);
        self.tuple_fields(&t, self.info.ty(e).clone(), n, e.span)
    }

    /// The fields of a tuple struct value `t` of tuple type `ty`, into
    /// temporaries.
    pub(crate) fn tuple_fields(
        &mut self,
        t: &str,
        ty: Ty,
        n: usize,
        sp: crate::diag::Span,
    ) -> Vec<String> {
        let tys: Vec<Ty> = match ty {
            Ty::Tuple(ts) => ts.to_vec(),
            _ => vec![Ty::Invalid; n],
        };
        tys.iter()
            .enumerate()
            .map(|(i, ft)| {
                let out = self.temp(ft);
                self.emit(
                    Op::new("field", sp)
                        .input("X", t)
                        .output("Out", out.clone())
                        .attr("name", format!("r{i}")),
                );
                out
            })
            .collect()
    }

    /// The arguments of `go f(args)`, each in a fresh temporary.
    fn go_args(&mut self, args: &[Expr]) -> Vec<String> {
        match args {
            [a] if matches!(self.info.ty(a), Ty::Tuple(_)) => self.args(args),
            _ => self.values(args),
        }
    }

    /// Evaluates several values into fresh temporaries (so that `a, b = b, a` swaps).
    fn values(&mut self, values: &[Expr]) -> Vec<String> {
        values
            .iter()
            .map(|v| {
                let ty = self.info.ty(v).clone();
                let t = self.temp(&ty);
                self.expr(v, Some(&t))
            })
            .collect()
    }

    /// The variable a `:=` name writes: a new one, or an existing one redeclared.
    fn define_target(&mut self, n: &Ident) -> String {
        if n.is_blank() {
            return "_".into();
        }
        if let Some(Res::Var(id)) = self.info.uses.get(&n.id) {
            return self.var_name(*id);
        }
        self.declare(n).unwrap_or_else(|| "_".into())
    }

    fn expr_stmt(&mut self, e: &Expr) {
        let inner = {
            let mut x = e;
            while let ExprKind::Paren(i) = &x.kind {
                x = i;
            }
            x
        };
        if let ExprKind::Unary(UnOp::Recv, c) = &inner.kind {
            let cv = self.expr(c, None);
            self.emit(Op::new("recv", inner.span).input("Chan", cv));
            return;
        }
        let ty = self.info.ty(inner).clone();
        if ty == Ty::Void {
            self.expr(inner, None);
        } else {
            // a result nobody reads: still computed (calls have effects)
            self.expr(inner, None);
        }
    }

    /// Evaluates the index operands of an assignment target.
    pub(crate) fn place(&mut self, e: &Expr) -> Place {
        self.place_at(e, false)
    }

    /// `place`; with `snap` every index operand is copied to a temporary,
    /// so that assignments made before the place is stored to do not
    /// change which element it names.
    fn place_at(&mut self, e: &Expr, snap: bool) -> Place {
        match &e.kind {
            ExprKind::Paren(i) => self.place_at(i, snap),
            ExprKind::Ident(n) if n == "_" => Place::Blank,
            ExprKind::Ident(_) => match self.info.uses.get(&e.id) {
                Some(Res::Var(id)) => Place::Var(self.var_name(*id)),
                _ => Place::Blank,
            },
            ExprKind::Index(x, i) => {
                let p = self.place_at(x, snap);
                let iv = if snap {
                    let t = self.temp(&self.info.ty(i).clone());
                    self.expr(i, Some(&t))
                } else {
                    self.expr(i, None)
                };
                Place::Index(Box::new(p), iv, self.info.ty(x).clone())
            }
            ExprKind::Field(x, f) => {
                let p = self.place_at(x, snap);
                Place::Field(Box::new(p), f.name.clone(), self.info.ty(x).clone())
            }
            _ => Place::Blank,
        }
    }

    /// The current value at `place`.
    pub(crate) fn load(&mut self, place: &Place, sp: crate::diag::Span) -> String {
        match place {
            Place::Blank => "_".into(),
            Place::Var(n) => n.clone(),
            Place::Index(p, i, Ty::Map(_, vt)) => {
                let x = self.load(p, sp);
                let out = self.temp(vt);
                self.emit(
                    Op::new("map_get", sp)
                        .input("X", x)
                        .input("Key", i.clone())
                        .output("Out", out.clone()),
                );
                out
            }
            Place::Index(p, i, xty) => {
                let x = self.load(p, sp);
                let out = self.temp(xty.elem().unwrap_or(&Ty::Int));
                self.emit(
                    Op::new("index", sp)
                        .input("X", x)
                        .input("Index", i.clone())
                        .output("Out", out.clone()),
                );
                out
            }
            Place::Field(p, f, xty) => {
                let x = self.load(p, sp);
                let fty = match xty {
                    Ty::Struct(id) => self.info.structs[*id as usize]
                        .fields
                        .iter()
                        .find(|(n, _)| n == f)
                        .map(|(_, t)| t.clone())
                        .unwrap_or(Ty::Int),
                    _ => Ty::Int,
                };
                let out = self.temp(&fty);
                self.emit(
                    Op::new("field", sp)
                        .input("X", x)
                        .output("Out", out.clone())
                        .attr("name", f.as_str()),
                );
                out
            }
        }
    }

    /// Writes `value` to `place`, rebuilding enclosing lists and structs.
    pub(crate) fn store(&mut self, place: &Place, value: String, sp: crate::diag::Span) {
        match place {
            Place::Blank => {}
            Place::Var(n) => {
                if *n != value {
                    self.emit(
                        Op::new("copy", sp)
                            .input("X", value)
                            .output("Out", n.clone()),
                    );
                }
            }
            Place::Index(p, i, xty @ Ty::Map(..)) => {
                let x = self.load(p, sp);
                let new = self.temp(xty);
                self.emit(
                    Op::new("map_set", sp)
                        .input("X", x)
                        .input("Key", i.clone())
                        .input("Value", value)
                        .output("Out", new.clone()),
                );
                self.store(p, new, sp);
            }
            Place::Index(p, i, xty) => {
                let x = self.load(p, sp);
                let new = self.temp(xty);
                self.emit(
                    Op::new("set_index", sp)
                        .input("X", x)
                        .input("Index", i.clone())
                        .input("Value", value)
                        .output("Out", new.clone()),
                );
                self.store(p, new, sp);
            }
            Place::Field(p, f, xty) => {
                let x = self.load(p, sp);
                let new = self.temp(xty);
                self.emit(
                    Op::new("set_field", sp)
                        .input("X", x)
                        .input("Value", value)
                        .output("Out", new.clone())
                        .attr("name", f.as_str()),
                );
                self.store(p, new, sp);
            }
        }
    }

    fn for_range(
        &mut self,
        s: &Stmt,
        key: Option<&Ident>,
        value: Option<&Ident>,
        expr: &Expr,
        body: &Block,
        label: Option<&str>,
    ) {
        let sp = s.span;
        let xty = self.info.ty(expr).clone();
        let mut op = Op::new("loop", sp);
        if let Ty::Chan(_) = xty {
            // cond: v, ok = <-ch; body: key = v
            let ch = self.expr(expr, None);
            let k = key.and_then(|k| self.declare(k));
            let ok = self.temp(&Ty::Bool);
            let cb = self.new_block();
            let out = k.clone().unwrap_or_else(|| "_".into());
            self.in_block(cb, |l| {
                l.emit(
                    Op::new("recv", expr.span)
                        .input("Chan", ch)
                        .output("Out", out)
                        .output("Ok", ok.clone()),
                );
            });
            let bb = self.block_of(&body.stmts);
            op = op
                .input("Cond", ok)
                .attr("cond_block", cb)
                .attr("body_block", bb);
        } else if let Ty::Map(..) = xty {
            // m = x; n = len(m); i = 0; cond: i < n; body: key, value = the
            // i-th entry of m; post: i++ (a copy: the loop sees the map as
            // it was when the loop started)
            let x = self.temp(&xty);
            self.expr(expr, Some(&x));
            let n = self.temp(&Ty::Int);
            self.emit(
                Op::new("len", expr.span)
                    .input("X", x.clone())
                    .output("Out", n.clone()),
            );
            let i = self.temp(&Ty::Int);
            self.constant(&ConstVal::Int(0), &Ty::Int, expr, Some(&i));
            let c = self.temp(&Ty::Bool);
            let k = key.and_then(|k| self.declare(k));
            let v = value.and_then(|v| self.declare(v));
            let cb = self.new_block();
            self.in_block(cb, |l| {
                l.emit(
                    Op::new("lt", sp)
                        .input("X", i.clone())
                        .input("Y", n)
                        .output("Out", c.clone()),
                );
            });
            let bb = self.new_block();
            self.in_block(bb, |l| {
                let mut op = Op::new("map_entry", sp)
                    .input("X", x.clone())
                    .input("Index", i.clone());
                if let Some(k) = k {
                    op = op.output("Key", k);
                }
                if let Some(v) = v {
                    op = op.output("Value", v);
                }
                l.emit(op);
                l.stmts(&body.stmts);
            });
            let pb = self.new_block();
            self.in_block(pb, |l| {
                let one = l.small_const(1, &Ty::Int, expr);
                l.emit(
                    Op::new("add", sp)
                        .input("X", i.clone())
                        .input("Y", one)
                        .output("Out", i.clone()),
                );
            });
            op = op
                .input("Cond", c)
                .attr("cond_block", cb)
                .attr("body_block", bb)
                .attr("post_block", pb);
        } else {
            // n = len(x) or x; i = 0; cond: i < n; body: key = i; value = x[i]; post: i++
            let x = self.temp(&xty);
            self.expr(expr, Some(&x));
            let n = if xty == Ty::Int {
                x.clone()
            } else {
                let n = self.temp(&Ty::Int);
                self.emit(
                    Op::new("len", expr.span)
                        .input("X", x.clone())
                        .output("Out", n.clone()),
                );
                n
            };
            let i = self.temp(&Ty::Int);
            self.constant(&ConstVal::Int(0), &Ty::Int, expr, Some(&i));
            let c = self.temp(&Ty::Bool);
            let k = key.and_then(|k| self.declare(k));
            let v = value.and_then(|v| self.declare(v));
            let cb = self.new_block();
            self.in_block(cb, |l| {
                l.emit(
                    Op::new("lt", sp)
                        .input("X", i.clone())
                        .input("Y", n)
                        .output("Out", c.clone()),
                );
            });
            // A string steps by characters: body: r, w = decode_rune(x, i);
            // key = i; value = r; post: i += w.
            let width = (xty == Ty::Str).then(|| self.temp(&Ty::Int));
            let bb = self.new_block();
            self.in_block(bb, |l| {
                let rune = match &width {
                    Some(w) => {
                        let r = v.clone().unwrap_or_else(|| l.temp(&Ty::Int));
                        l.emit(
                            Op::new("decode_rune", sp)
                                .input("X", x.clone())
                                .input("Index", i.clone())
                                .output("Out", r.clone())
                                .output("Width", w.clone()),
                        );
                        Some(r)
                    }
                    None => None,
                };
                if let Some(k) = k {
                    l.emit(Op::new("copy", sp).input("X", i.clone()).output("Out", k));
                }
                if let (Some(v), None) = (v, rune) {
                    l.emit(
                        Op::new("index", sp)
                            .input("X", x.clone())
                            .input("Index", i.clone())
                            .output("Out", v),
                    );
                }
                l.stmts(&body.stmts);
            });
            let pb = self.new_block();
            self.in_block(pb, |l| {
                let step = match &width {
                    Some(w) => w.clone(),
                    None => l.small_const(1, &Ty::Int, expr),
                };
                l.emit(
                    Op::new("add", sp)
                        .input("X", i.clone())
                        .input("Y", step)
                        .output("Out", i.clone()),
                );
            });
            op = op
                .input("Cond", c)
                .attr("cond_block", cb)
                .attr("body_block", bb)
                .attr("post_block", pb);
        }
        if let Some(l) = label {
            op = op.attr("label", l);
        }
        self.emit(op);
    }

    fn switch(&mut self, init: Option<&Stmt>, tag: Option<&Expr>, cases: &[CaseClause]) {
        if let Some(i) = init {
            self.stmt(i, None);
        }
        let tagv = tag.map(|t| {
            let ty = self.info.ty(t).clone();
            let v = self.temp(&ty);
            self.expr(t, Some(&v))
        });
        let ordered: Vec<&CaseClause> = cases.iter().filter(|c| !c.is_default).collect();
        let default = cases.iter().find(|c| c.is_default);
        self.case_chain(tagv.as_deref(), &ordered, default);
    }

    /// The cases of a `switch` as an `if` chain: each case's `if` holds the
    /// rest of the chain in its else block. Built in a loop: each `if` op
    /// goes into its block as soon as its else block exists (nothing else is
    /// emitted into that block afterwards), then lowering moves on into the
    /// else block, so a long switch does not nest the recursion.
    fn case_chain(
        &mut self,
        tag: Option<&str>,
        cases: &[&CaseClause],
        default: Option<&CaseClause>,
    ) {
        let saved = self.cur;
        for (i, case) in cases.iter().enumerate() {
            let m = self.temp(&Ty::Bool);
            self.case_match(tag, &case.exprs, &m);
            let tb = self.block_of(&case.body);
            let mut op = Op::new("if", case.span)
                .input("Cond", m)
                .attr("then_block", tb);
            let more = i + 1 < cases.len() || default.is_some();
            let eb = more.then(|| self.new_block());
            if let Some(eb) = eb {
                op = op.attr("else_block", eb);
            }
            self.emit(op);
            match eb {
                Some(eb) => self.cur = eb,
                None => break,
            }
        }
        if let Some(d) = default {
            self.stmts(&d.body);
        }
        self.cur = saved;
    }

    /// m = (tag == e1) || (tag == e2) || ..., evaluated left to right,
    /// lazily: each later test sits in the else block of an `if` on `m`
    /// (built in a loop, as `case_chain`).
    fn case_match(&mut self, tag: Option<&str>, exprs: &[Expr], m: &str) {
        let saved = self.cur;
        for (i, e) in exprs.iter().enumerate() {
            match tag {
                Some(t) => {
                    let v = self.expr(e, None);
                    self.emit(
                        Op::new("eq", e.span)
                            .input("X", t)
                            .input("Y", v)
                            .output("Out", m),
                    );
                }
                None => {
                    self.expr(e, Some(m));
                }
            }
            if i + 1 < exprs.len() {
                let empty = self.new_block();
                let eb = self.new_block();
                self.emit(
                    Op::new("if", e.span)
                        .input("Cond", m)
                        .attr("then_block", empty)
                        .attr("else_block", eb),
                );
                self.cur = eb;
            }
        }
        self.cur = saved;
    }

    fn select(&mut self, s: &Stmt, cases: &[SelectCase]) {
        let mut chans = Vec::new();
        let mut values = Vec::new();
        let mut kinds: Vec<i64> = Vec::new();
        let mut recvs = Vec::new();
        let mut oks = Vec::new();
        let mut any_out = false;
        // 1. operands in source order; result variables in this block
        let mut plans: Vec<Option<(Vec<String>, &[Expr])>> = Vec::new();
        for c in cases {
            match &c.comm {
                Comm::Default => plans.push(None),
                Comm::Send { chan, value } => {
                    chans.push(self.expr(chan, None));
                    values.push(self.expr(value, None));
                    kinds.push(1);
                    recvs.push("_".to_string());
                    oks.push("_".to_string());
                    plans.push(None);
                }
                Comm::Recv { lhs, chan } => {
                    chans.push(self.expr(chan, None));
                    kinds.push(0);
                    let elem = self.info.ty(chan).elem().cloned().unwrap_or(Ty::Int);
                    match lhs {
                        RecvLhs::None => {
                            recvs.push("_".into());
                            oks.push("_".into());
                            plans.push(None);
                        }
                        RecvLhs::Define(names) => {
                            let v = names.first().map_or("_".into(), |n| self.define_target(n));
                            let ok = names.get(1).map_or("_".into(), |n| self.define_target(n));
                            any_out |= v != "_" || ok != "_";
                            recvs.push(v);
                            oks.push(ok);
                            plans.push(None);
                        }
                        RecvLhs::Assign(targets) => {
                            let v = self.temp(&elem);
                            let ok = if targets.len() > 1 {
                                self.temp(&Ty::Bool)
                            } else {
                                "_".into()
                            };
                            any_out = true;
                            recvs.push(v.clone());
                            oks.push(ok.clone());
                            plans.push(Some((vec![v, ok], targets)));
                        }
                    }
                }
            }
        }
        // 2. one block per case; an assignment case assigns first
        let mut blocks = Vec::new();
        let mut case_locs: Vec<i64> = Vec::new();
        let mut default_block = None;
        for (c, plan) in cases.iter().zip(plans) {
            let b = self.new_block();
            self.in_block(b, |l| {
                if let Some((vals, targets)) = plan {
                    for (t, v) in targets.iter().zip(vals) {
                        let p = l.place(t);
                        l.store(&p, v, c.span);
                    }
                }
                l.stmts(&c.body);
            });
            if matches!(c.comm, Comm::Default) {
                default_block = Some(b);
            } else {
                blocks.push(b);
                let (line, col) = self.loc(c.span);
                case_locs.extend([i64::from(line), i64::from(col)]);
            }
        }
        if !any_out {
            recvs.clear();
            oks.clear();
        }
        let mut op = Op::new("select", s.span)
            .inputs("Chans", chans)
            .inputs("Values", values)
            .outputs("Recv", recvs)
            .outputs("Oks", oks)
            .attr("kinds", kinds)
            .attr("cases", blocks)
            .attr("case_locs", case_locs);
        if let Some(d) = default_block {
            op = op.attr("default_block", d);
        }
        self.emit(op);
    }
}

/// An expression standing for a span, for ops made for no expression.
fn dummy(span: crate::diag::Span) -> Expr {
    Expr {
        id: u32::MAX,
        kind: ExprKind::Bad,
        span,
    }
}

fn binop(op: BinOp) -> &'static str {
    use BinOp::*;
    match op {
        Add => "add",
        Sub => "sub",
        Mul => "mul",
        Div => "div",
        Rem => "mod",
        And => "and",
        Or => "or",
        Xor => "xor",
        Shl => "shl",
        Shr => "shr",
        _ => "add",
    }
}
