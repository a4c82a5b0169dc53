//! Lowering of expressions into ops writing temporaries (or a destination).
//!
//! `expr(e, dest)` returns the variable that holds `e`'s value: a plain
//! variable reference returns the variable itself (no copy) unless a
//! destination is given. Constant expressions become one `const` op of the
//! expression's final type; `nil` a `zero` op; `&&` and `||` an `if`.

use super::{pbty, Lowerer, Op};
use crate::ast::*;
use crate::check::{Builtin, Res};
use crate::types::{ConstVal, Ty};
use weft_ir::pb::attr;
use weft_ir::registry;

fn binop_name(op: BinOp) -> &'static str {
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
        Eq => "eq",
        Ne => "ne",
        Lt => "lt",
        Le => "le",
        Gt => "gt",
        Ge => "ge",
        LogAnd | LogOr => "if",
    }
}

fn is_logical(op: BinOp) -> bool {
    matches!(op, BinOp::LogAnd | BinOp::LogOr)
}

fn strip(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Paren(i) => strip(i),
        _ => e,
    }
}

impl<'a> Lowerer<'a> {
    pub(crate) fn expr(&mut self, e: &Expr, dest: Option<&str>) -> String {
        let ty = self.info.ty(e).clone();
        if let Some(v) = self.info.consts.get(&e.id) {
            return self.constant(v, &ty, e, dest);
        }
        match &e.kind {
            ExprKind::Paren(inner) => {
                if matches!(strip(inner).kind, ExprKind::Nil) {
                    return self.zero(&ty, e, dest);
                }
                self.expr(inner, dest)
            }
            ExprKind::Nil => self.zero(&ty, e, dest),
            ExprKind::Ident(_) => match self.info.uses.get(&e.id) {
                Some(Res::Var(id)) => {
                    let name = self.var_name(*id);
                    self.copy_to(name, e, dest)
                }
                Some(Res::Func(id)) => {
                    let name = self.info.funcs[*id as usize].name.clone();
                    let out = self.out(&ty, dest);
                    self.emit(
                        Op::new("func_ref", e.span)
                            .output("Out", out.clone())
                            .attr("func", name),
                    );
                    out
                }
                _ => self.zero(&ty, e, dest),
            },
            ExprKind::Unary(op, x) => self.unary(e, &ty, *op, x, dest),
            ExprKind::Binary(BinOp::LogAnd | BinOp::LogOr, ..) => self.logic(e, dest),
            ExprKind::Binary(..) => self.arith_chain(e, dest),
            ExprKind::Call { func, args, spread } => self.call(e, &ty, func, args, *spread, dest),
            ExprKind::Index(x, i) => {
                let xv = self.expr(x, None);
                let iv = self.expr(i, None);
                let out = self.out(&ty, dest);
                let name = match self.info.ty(x) {
                    Ty::Map(..) => "map_get",
                    _ => "index",
                };
                let slot = if name == "map_get" { "Key" } else { "Index" };
                self.emit(
                    Op::new(name, e.span)
                        .input("X", xv)
                        .input(slot, iv)
                        .output("Out", out.clone()),
                );
                out
            }
            ExprKind::MapLit { entries, .. } => {
                let mut keys = Vec::new();
                let mut vals = Vec::new();
                for (k, v) in entries {
                    keys.push(self.expr(k, None));
                    vals.push(self.expr(v, None));
                }
                let out = self.out(&ty, dest);
                self.emit(
                    Op::new("map_new", e.span)
                        .inputs("Keys", keys)
                        .inputs("Values", vals)
                        .output("Out", out.clone()),
                );
                out
            }
            ExprKind::FuncLit(lit) => self.func_lit(e, &ty, lit, dest),
            ExprKind::Slice { x, lo, hi } => {
                let xv = self.expr(x, None);
                let mut op = Op::new("slice", e.span).input("X", xv);
                if let Some(lo) = lo {
                    let v = self.expr(lo, None);
                    op = op.input("Lo", v);
                }
                if let Some(hi) = hi {
                    let v = self.expr(hi, None);
                    op = op.input("Hi", v);
                }
                let out = self.out(&ty, dest);
                self.emit(op.output("Out", out.clone()));
                out
            }
            ExprKind::Field(x, name) => {
                let xv = self.expr(x, None);
                let out = self.out(&ty, dest);
                self.emit(
                    Op::new("field", e.span)
                        .input("X", xv)
                        .output("Out", out.clone())
                        .attr("name", name.name.as_str()),
                );
                out
            }
            ExprKind::StructLit { elems, .. }
            | ExprKind::ListLit { elems, .. }
            | ExprKind::Elided(elems) => self.composite(e, &ty, elems, dest),
            ExprKind::Bad
            | ExprKind::Type(_)
            | ExprKind::Int(_)
            | ExprKind::BigInt
            | ExprKind::Float(_)
            | ExprKind::Str(_)
            | ExprKind::Bool(_) => self.zero(&ty, e, dest),
        }
    }

    /// `name`, or a copy of it into `dest`.
    fn copy_to(&mut self, name: String, e: &Expr, dest: Option<&str>) -> String {
        match dest {
            Some(d) if d != name => {
                self.emit(Op::new("copy", e.span).input("X", name).output("Out", d));
                d.to_string()
            }
            _ => name,
        }
    }

    pub(crate) fn zero(&mut self, ty: &Ty, e: &Expr, dest: Option<&str>) -> String {
        let out = self.out(ty, dest);
        self.emit(Op::new("zero", e.span).output("Out", out.clone()));
        out
    }

    pub(crate) fn constant(
        &mut self,
        v: &ConstVal,
        ty: &Ty,
        e: &Expr,
        dest: Option<&str>,
    ) -> String {
        let ty = ty.default_type();
        let out = self.out(&ty, dest);
        let op = Op::new("const", e.span).output("Out", out.clone());
        let op = match (v, &ty) {
            (ConstVal::Int(i), Ty::Float) => op.attr("value", *i as f64),
            (ConstVal::Int(i), _) => op.attr("value", *i as i64),
            (ConstVal::Float(_), Ty::Int) => op.attr("value", v.as_f64().unwrap_or(0.0) as i64),
            (ConstVal::Float(_), _) => op.attr("value", v.as_f64().unwrap_or(0.0)),
            (ConstVal::Bool(b), _) => op.attr("value", *b),
            // `s` holds UTF-8 only: other bytes go as `raw` (docs/ir.md).
            (ConstVal::Str(s), _) => match std::str::from_utf8(s) {
                Ok(text) => op.attr("value", text),
                Err(_) => op.attr("value", attr::Value::Raw(s.to_vec())),
            },
        };
        self.emit(op);
        out
    }

    /// An int or float constant 1 (for `++`, `--`) or -1 (for `^x`).
    pub(crate) fn small_const(&mut self, v: i64, ty: &Ty, e: &Expr) -> String {
        let c = if *ty == Ty::Float {
            ConstVal::float(v as f64).unwrap_or(ConstVal::Int(v.into()))
        } else {
            ConstVal::Int(v as i128)
        };
        self.constant(&c, ty, e, None)
    }

    fn unary(&mut self, e: &Expr, ty: &Ty, op: UnOp, x: &Expr, dest: Option<&str>) -> String {
        match op {
            UnOp::Pos => self.expr(x, dest),
            UnOp::Neg | UnOp::Not => {
                let xv = self.expr(x, None);
                let out = self.out(ty, dest);
                let name = if op == UnOp::Neg { "neg" } else { "not" };
                self.emit(
                    Op::new(name, e.span)
                        .input("X", xv)
                        .output("Out", out.clone()),
                );
                out
            }
            UnOp::BitNot => {
                let xv = self.expr(x, None);
                let m = self.small_const(-1, &Ty::Int, e);
                let out = self.out(ty, dest);
                self.emit(
                    Op::new("xor", e.span)
                        .input("X", xv)
                        .input("Y", m)
                        .output("Out", out.clone()),
                );
                out
            }
            UnOp::Recv => {
                let cv = self.expr(x, None);
                let out = self.out(ty, dest);
                self.emit(
                    Op::new("recv", e.span)
                        .input("Chan", cv)
                        .output("Out", out.clone()),
                );
                out
            }
        }
    }

    /// `x && y` / `x || y`: r = x; if r { r = y } (or the else branch for ||).
    /// The left spine of `e` for `arith_chain` and `logic`: `e`, then its
    /// left operand while that is a binary expression of the same family
    /// (`&&`/`||` or the others) that is not a constant, outermost first.
    fn spine<'e>(&self, e: &'e Expr, logical: bool) -> Vec<&'e Expr> {
        let mut spine = vec![e];
        let mut cur = e;
        while let ExprKind::Binary(_, x, _) = &cur.kind {
            match &x.kind {
                ExprKind::Binary(op, ..)
                    if is_logical(*op) == logical && !self.info.consts.contains_key(&x.id) =>
                {
                    spine.push(x);
                    cur = x;
                }
                _ => break,
            }
        }
        spine
    }

    /// `x op y` for every operator but `&&` and `||`, down the left spine
    /// in a loop (`a + b + c` is `(a + b) + c`; a chain as long as the
    /// source makes it does not nest the recursion): the leftmost operand,
    /// then each link's right operand and op, bottom up. The same ops in
    /// the same order as lowering each link on its own.
    fn arith_chain(&mut self, e: &Expr, dest: Option<&str>) -> String {
        let spine = self.spine(e, false);
        let ExprKind::Binary(_, leftmost, _) = &spine[spine.len() - 1].kind else {
            return self.zero(&Ty::Invalid, e, dest);
        };
        let mut xv = self.expr(leftmost, None);
        for (i, link) in spine.iter().enumerate().rev() {
            let ExprKind::Binary(op, _, y) = &link.kind else {
                continue;
            };
            let yv = self.expr(y, None);
            let ty = self.info.ty(link).clone();
            let out = self.out(&ty, if i == 0 { dest } else { None });
            self.emit(
                Op::new(binop_name(*op), link.span)
                    .input("X", xv)
                    .input("Y", yv)
                    .output("Out", out.clone()),
            );
            xv = out;
        }
        xv
    }

    /// `&&` and `||`: `r = x; if r { r = y }` (`if !r` for `||`), down the
    /// left spine in a loop as `arith_chain`: the result temporaries
    /// outermost first, the leftmost operand into the innermost one, then
    /// bottom up each link's `if` and the copy of its result into the
    /// enclosing link's (the ops and temporaries of lowering each link on
    /// its own, in the same order).
    fn logic(&mut self, e: &Expr, dest: Option<&str>) -> String {
        let spine = self.spine(e, true);
        let rs: Vec<String> = spine.iter().map(|_| self.temp(&Ty::Bool)).collect();
        let ExprKind::Binary(_, leftmost, _) = &spine[spine.len() - 1].kind else {
            return self.zero(&Ty::Invalid, e, dest);
        };
        self.expr(leftmost, Some(&rs[rs.len() - 1]));
        let mut out = String::new();
        for (i, link) in spine.iter().enumerate().rev() {
            let ExprKind::Binary(bop, _, y) = &link.kind else {
                continue;
            };
            let r = &rs[i];
            let rhs = self.new_block();
            self.in_block(rhs, |l| {
                l.expr(y, Some(r));
            });
            let op = Op::new("if", link.span).input("Cond", r.clone());
            let op = if *bop == BinOp::LogAnd {
                op.attr("then_block", rhs)
            } else {
                let empty = self.new_block();
                op.attr("then_block", empty).attr("else_block", rhs)
            };
            self.emit(op);
            let to = if i == 0 {
                dest
            } else {
                Some(rs[i - 1].as_str())
            };
            out = self.copy_to(r.clone(), link, to);
        }
        out
    }

    fn composite(&mut self, e: &Expr, ty: &Ty, elems: &[Element], dest: Option<&str>) -> String {
        let vals: Vec<String> = elems.iter().map(|el| self.expr(&el.value, None)).collect();
        match ty {
            Ty::Struct(id) => {
                let fields = self.info.structs[*id as usize].fields.clone();
                let keyed = elems.first().is_some_and(|el| el.key.is_some());
                let mut args = Vec::new();
                for (i, (fname, fty)) in fields.iter().enumerate() {
                    let given = if keyed {
                        elems
                            .iter()
                            .position(|el| el.key.as_ref().is_some_and(|k| k.name == *fname))
                    } else if i < vals.len() {
                        Some(i)
                    } else {
                        None
                    };
                    match given {
                        Some(j) => args.push(vals[j].clone()),
                        None => args.push(self.zero(fty, e, None)),
                    }
                }
                let out = self.out(ty, dest);
                self.emit(
                    Op::new("struct_new", e.span)
                        .inputs("Fields", args)
                        .output("Out", out.clone()),
                );
                out
            }
            _ => {
                let out = self.out(ty, dest);
                self.emit(
                    Op::new("list_new", e.span)
                        .inputs("Elems", vals)
                        .output("Out", out.clone()),
                );
                out
            }
        }
    }

    fn call(
        &mut self,
        e: &Expr,
        ty: &Ty,
        func: &Expr,
        args: &[Expr],
        spread: bool,
        dest: Option<&str>,
    ) -> String {
        match self.info.uses.get(&func.id).cloned() {
            Some(Res::Func(id)) => {
                let argv = self.args(args);
                let name = self.info.funcs[id as usize].name.clone();
                let op = Op::new("call", e.span)
                    .inputs("Args", argv)
                    .attr("func", name);
                self.finish_call(op, ty, dest)
            }
            Some(Res::Builtin(b)) => self.builtin(e, ty, b, args, spread, dest),
            _ => {
                // a call through a func value
                let fv = self.expr(func, None);
                let argv = self.args(args);
                let op = Op::new("call_value", e.span)
                    .input("F", fv)
                    .inputs("Args", argv);
                self.finish_call(op, ty, dest)
            }
        }
    }

    /// The arguments of a call, evaluated in order; `g(f(x))` passes the
    /// fields of f's tuple.
    pub(crate) fn args(&mut self, args: &[Expr]) -> Vec<String> {
        if let [a] = args {
            let ty = self.info.ty(a).clone();
            if let Ty::Tuple(ts) = &ty {
                let n = ts.len();
                let t = self.expr(a, None);
                return self.tuple_fields(&t, ty, n, a.span);
            }
        }
        args.iter().map(|a| self.expr(a, None)).collect()
    }

    /// Emits a call op, with its result (if any) in `dest` or a temporary.
    fn finish_call(&mut self, op: Op, ty: &Ty, dest: Option<&str>) -> String {
        let mut op = op;
        {
            let out = if *ty == Ty::Void {
                String::new()
            } else {
                let out = match dest {
                    Some(d) => d.to_string(),
                    None => self.temp(ty),
                };
                op = op.output("Out", out.clone());
                out
            };
            self.emit(op);
            out
        }
    }

    /// A function literal: lifted to a function of its own whose first
    /// parameters are the variables it captures (their names kept), then
    /// a `closure` op binding those to their current values
    /// (docs/interpreter.md, "Function values").
    fn func_lit(&mut self, e: &Expr, ty: &Ty, lit: &FuncLit, dest: Option<&str>) -> String {
        let caps: Vec<crate::check::VarId> =
            self.info.captures.get(&e.id).cloned().unwrap_or_default();
        let cap_names: Vec<String> = caps.iter().map(|id| self.var_name(*id)).collect();
        let sig = match ty {
            Ty::Func(sig) => (**sig).clone(),
            _ => crate::types::FuncSig {
                params: Vec::new(),
                result: None,
            },
        };
        self.lifted += 1;
        let name = format!("{}.func{}", self.fname, self.lifted);
        // The lifted function's own names; the outer function's come back after.
        let mut taken = std::collections::HashMap::new();
        for n in &cap_names {
            taken.insert(n.clone(), 1u32);
        }
        let saved_taken = std::mem::replace(&mut self.taken, taken);
        let (line, col) = self.loc(e.span);
        let mut fb = self.b.func(name.clone()).loc(self.file, line, col);
        for (id, n) in caps.iter().zip(&cap_names) {
            let t = pbty(&self.info.vars[*id as usize].ty, &self.info.structs);
            fb = fb.param(n.clone(), t);
        }
        let mut names = Vec::new();
        for (i, (p, pty)) in lit.params.iter().zip(&sig.params).enumerate() {
            let pname = if p.name.is_blank() {
                format!("%arg{i}")
            } else {
                super::unique(&mut self.taken, &p.name.name)
            };
            if let Some(v) = self.info.defs.get(&p.name.id) {
                names.push((*v, pname.clone()));
            }
            fb = fb.param(pname, pbty(pty, &self.info.structs));
        }
        if let Some(r) = &sig.result {
            fb = fb.result(pbty(r, &self.info.structs));
        }
        let body = fb.finish();
        self.var_names.extend(names);
        let saved_cur = std::mem::replace(&mut self.cur, body);
        let saved_result = std::mem::replace(&mut self.result, sig.result.clone());
        self.body(&lit.body.stmts, lit.body.span);
        self.result = saved_result;
        self.cur = saved_cur;
        self.taken = saved_taken;
        let out = self.out(ty, dest);
        self.emit(
            Op::new("closure", e.span)
                .inputs("Captures", cap_names)
                .output("Out", out.clone())
                .attr("func", name),
        );
        out
    }

    /// `defer CALL`: the callee (a func value) and the arguments are
    /// evaluated now, and a `func()` that makes the call later is appended
    /// to the body's list of deferred calls. The `func()` is a lifted
    /// function whose parameters are those values, bound by `closure`.
    pub(crate) fn defer(&mut self, call: &Expr) {
        let ExprKind::Call { func, args, spread } = &call.kind else {
            return;
        };
        let sp = call.span;
        let builtin = match self.info.uses.get(&func.id) {
            Some(Res::Builtin(b)) => Some(*b),
            _ => None,
        };
        // The values the deferred call needs, and their types.
        let mut vals: Vec<(String, Ty)> = Vec::new();
        if builtin.is_none() {
            let ft = self.info.ty(func).clone();
            let fv = match self.info.uses.get(&func.id) {
                Some(Res::Func(id)) => {
                    let f = &self.info.funcs[*id as usize];
                    let params = f.params.iter().map(|(_, t)| t.clone()).collect();
                    let ft = Ty::func(params, f.result.clone());
                    let out = self.temp(&ft);
                    let name = f.name.clone();
                    self.emit(
                        Op::new("func_ref", sp)
                            .output("Out", out.clone())
                            .attr("func", name),
                    );
                    (out, ft)
                }
                _ => {
                    let t = self.temp(&ft);
                    (self.expr(func, Some(&t)), ft)
                }
            };
            vals.push(fv);
        }
        let argv = self.args(args);
        let arg_tys: Vec<Ty> = match &args[..] {
            [a] if matches!(self.info.ty(a), Ty::Tuple(_)) => match self.info.ty(a) {
                Ty::Tuple(ts) => ts.to_vec(),
                _ => Vec::new(),
            },
            _ => args
                .iter()
                .map(|a| self.info.ty(a).default_type())
                .collect(),
        };
        for (v, t) in argv.into_iter().zip(arg_tys) {
            // a copy: the deferred call sees the values of now
            let keep = self.temp(&t);
            self.emit(
                Op::new("copy", sp)
                    .input("X", v)
                    .output("Out", keep.clone()),
            );
            vals.push((keep, t));
        }
        // The lifted function: its parameters are `vals`.
        self.lifted += 1;
        let name = format!("{}.defer{}", self.fname, self.lifted);
        let (line, col) = self.loc(sp);
        let mut fb = self.b.func(name.clone()).loc(self.file, line, col);
        let pnames: Vec<String> = (0..vals.len()).map(|i| format!("%d{i}")).collect();
        for (p, (_, t)) in pnames.iter().zip(&vals) {
            fb = fb.param(p.clone(), pbty(t, &self.info.structs));
        }
        let body = fb.finish();
        let saved_cur = std::mem::replace(&mut self.cur, body);
        match builtin {
            Some(b) => {
                let ty = self.info.ty(call).clone();
                self.builtin_op(call, &ty, b, pnames.clone(), None);
                let _ = spread;
            }
            None => {
                let ft = vals[0].1.clone();
                let rty = match &ft {
                    Ty::Func(sig) => sig.result.clone(),
                    _ => None,
                };
                let mut op = Op::new("call_value", sp)
                    .input("F", pnames[0].clone())
                    .inputs("Args", pnames[1..].to_vec());
                if let Some(r) = rty {
                    let out = self.temp(&r);
                    op = op.output("Out", out);
                }
                self.emit(op);
            }
        }
        self.cur = saved_cur;
        let fty = Ty::func(Vec::new(), None);
        let f = self.temp(&fty);
        self.emit(
            Op::new("closure", sp)
                .inputs("Captures", vals.into_iter().map(|(v, _)| v).collect())
                .output("Out", f.clone())
                .attr("func", name),
        );
        if let Some(d) = self.defers.clone() {
            self.emit(
                Op::new("append", sp)
                    .input("X", d.clone())
                    .inputs("Elems", vec![f])
                    .output("Out", d),
            );
        }
    }

    fn builtin(
        &mut self,
        e: &Expr,
        ty: &Ty,
        b: Builtin,
        args: &[Expr],
        spread: bool,
        dest: Option<&str>,
    ) -> String {
        if b == Builtin::Make {
            if let Ty::Map(..) = ty {
                // the size hint is evaluated, and not needed
                if let Some(n) = args.get(1) {
                    self.expr(n, None);
                }
                let out = self.out(ty, dest);
                self.emit(Op::new("map_new", e.span).output("Out", out.clone()));
                return out;
            }
            let (name, slot) = match ty {
                Ty::List(_) => ("make_list", "N"),
                _ => ("make_chan", "Cap"),
            };
            let mut op = Op::new(name, e.span);
            if let Some(n) = args.get(1) {
                let v = self.expr(n, None);
                op = op.input(slot, v);
            }
            let out = self.out(ty, dest);
            self.emit(op.output("Out", out.clone()));
            return out;
        }
        if b == Builtin::Append && spread {
            return self.append_spread(e, ty, &args[0], &args[1], dest);
        }
        if b == Builtin::Delete {
            // the map is a value: delete writes the changed map back
            let place = self.place(&args[0]);
            let k = self.expr(&args[1], None);
            let m = self.load(&place, e.span);
            let mty = self.info.ty(&args[0]).clone();
            let out = self.temp(&mty);
            self.emit(
                Op::new("map_delete", e.span)
                    .input("X", m)
                    .input("Key", k)
                    .output("Out", out.clone()),
            );
            self.store(&place, out, e.span);
            return String::new();
        }
        if b == Builtin::SortBy {
            return self.sort_by(e, ty, &args[0], &args[1], dest);
        }
        let argv: Vec<String> = args.iter().map(|a| self.expr(a, None)).collect();
        self.builtin_op(e, ty, b, argv, dest)
    }

    /// `sort_by(list, less)`: a stable bottom-up merge sort written out in
    /// the IR's loops, calling `less` with `call_value`
    /// (docs/interpreter.md, "sort_by"). Runs of `width` elements of `src`
    /// are merged pairwise into `dst`, then the two swap and `width`
    /// doubles; an element of the right run goes first only when
    /// `less(right, left)`, so equal elements keep their order. `less` is
    /// called only when both runs have elements left, at most
    /// `n * ceil(log2 n)` times.
    fn sort_by(
        &mut self,
        e: &Expr,
        ty: &Ty,
        list: &Expr,
        less: &Expr,
        dest: Option<&str>,
    ) -> String {
        let sp = e.span;
        let x = self.expr(list, None);
        let less = self.expr(less, None);
        let el = match ty {
            Ty::List(el) => (**el).clone(),
            _ => Ty::Invalid,
        };
        let int = |l: &mut Self| l.temp(&Ty::Int);
        let bool_ = |l: &mut Self| l.temp(&Ty::Bool);
        let n = int(self);
        self.emit(
            Op::new("len", sp)
                .input("X", x.clone())
                .output("Out", n.clone()),
        );
        // the sort writes only its own copies
        let (src, dst, tmp) = (self.temp(ty), self.temp(ty), self.temp(ty));
        for t in [&src, &dst] {
            self.emit(
                Op::new("copy", sp)
                    .input("X", x.clone())
                    .output("Out", t.clone()),
            );
        }
        let one = self.small_const(1, &Ty::Int, e);
        let width = int(self);
        self.emit(
            Op::new("copy", sp)
                .input("X", one.clone())
                .output("Out", width.clone()),
        );
        let [lo, w2, mid, hi, i, j, k, t] = [(); 8].map(|_| int(self));
        let [c_width, c_lo, c_k, j_in, i_out, right] = [(); 6].map(|_| bool_(self));
        let (a, b, v) = (self.temp(&el), self.temp(&el), self.temp(&el));
        let bin = |name: &'static str, x: &str, y: &str, out: &str| {
            Op::new(name, sp)
                .input("X", x.to_string())
                .input("Y", y.to_string())
                .output("Out", out.to_string())
        };
        let copy = |x: &str, out: &str| {
            Op::new("copy", sp)
                .input("X", x.to_string())
                .output("Out", out.to_string())
        };
        let min = |x: &str, y: &str, out: &str| {
            Op::new("min", sp)
                .inputs("Args", vec![x.to_string(), y.to_string()])
                .output("Out", out.to_string())
        };
        let index = |l: &str, at: &str, out: &str| {
            Op::new("index", sp)
                .input("X", l.to_string())
                .input("Index", at.to_string())
                .output("Out", out.to_string())
        };
        // dst[k] = src[from]; from++
        let take = |l: &mut Self, from: &str| {
            l.emit(index(&src, from, &v));
            l.emit(
                Op::new("set_index", sp)
                    .input("X", dst.clone())
                    .input("Index", k.clone())
                    .input("Value", v.clone())
                    .output("Out", dst.clone()),
            );
            l.emit(bin("add", from, &one, from));
        };
        // the merge of src[lo:mid] and src[mid:hi] into dst[lo:hi]
        let merge = |l: &mut Self| {
            let cond = l.new_block();
            l.in_block(cond, |l| l.emit(bin("lt", &k, &hi, &c_k)));
            let body = l.new_block();
            l.in_block(body, |l| {
                // right = j < hi && (i >= mid || less(src[j], src[i]))
                l.constant(&ConstVal::Bool(false), &Ty::Bool, e, Some(&right));
                l.emit(bin("lt", &j, &hi, &j_in));
                let has_right = l.new_block();
                l.in_block(has_right, |l| {
                    l.emit(bin("ge", &i, &mid, &i_out));
                    let left_done = l.new_block();
                    l.in_block(left_done, |l| {
                        l.constant(&ConstVal::Bool(true), &Ty::Bool, e, Some(&right));
                    });
                    let compare = l.new_block();
                    l.in_block(compare, |l| {
                        l.emit(index(&src, &j, &a));
                        l.emit(index(&src, &i, &b));
                        l.emit(
                            Op::new("call_value", sp)
                                .input("F", less.clone())
                                .inputs("Args", vec![a.clone(), b.clone()])
                                .output("Out", right.clone()),
                        );
                    });
                    l.emit(
                        Op::new("if", sp)
                            .input("Cond", i_out.clone())
                            .attr("then_block", left_done)
                            .attr("else_block", compare),
                    );
                });
                l.emit(
                    Op::new("if", sp)
                        .input("Cond", j_in.clone())
                        .attr("then_block", has_right),
                );
                let from_right = l.new_block();
                l.in_block(from_right, |l| take(l, &j));
                let from_left = l.new_block();
                l.in_block(from_left, |l| take(l, &i));
                l.emit(
                    Op::new("if", sp)
                        .input("Cond", right.clone())
                        .attr("then_block", from_right)
                        .attr("else_block", from_left),
                );
                l.emit(bin("add", &k, &one, &k));
            });
            l.emit(
                Op::new("loop", sp)
                    .input("Cond", c_k.clone())
                    .attr("cond_block", cond)
                    .attr("body_block", body),
            );
        };
        // one pass: every pair of runs of `width`, then src and dst swap
        // (tmp is cleared so that dst is not shared and is written in place)
        let pass = |l: &mut Self| {
            l.constant(&ConstVal::Int(0), &Ty::Int, e, Some(&lo));
            l.emit(bin("add", &width, &width, &w2));
            let cond = l.new_block();
            l.in_block(cond, |l| l.emit(bin("lt", &lo, &n, &c_lo)));
            let body = l.new_block();
            l.in_block(body, |l| {
                l.emit(bin("add", &lo, &width, &t));
                l.emit(min(&t, &n, &mid));
                l.emit(bin("add", &lo, &w2, &t));
                l.emit(min(&t, &n, &hi));
                l.emit(copy(&lo, &i));
                l.emit(copy(&mid, &j));
                l.emit(copy(&lo, &k));
                merge(l);
            });
            let post = l.new_block();
            l.in_block(post, |l| l.emit(bin("add", &lo, &w2, &lo)));
            l.emit(
                Op::new("loop", sp)
                    .input("Cond", c_lo.clone())
                    .attr("cond_block", cond)
                    .attr("body_block", body)
                    .attr("post_block", post),
            );
            l.emit(copy(&src, &tmp));
            l.emit(copy(&dst, &src));
            l.emit(copy(&tmp, &dst));
            l.emit(Op::new("zero", sp).output("Out", tmp.clone()));
        };
        // passes while width < n, width doubling
        let cond = self.new_block();
        self.in_block(cond, |l| l.emit(bin("lt", &width, &n, &c_width)));
        let body = self.new_block();
        self.in_block(body, pass);
        let post = self.new_block();
        self.in_block(post, |l| l.emit(bin("add", &width, &width, &width)));
        self.emit(
            Op::new("loop", sp)
                .input("Cond", c_width.clone())
                .attr("cond_block", cond)
                .attr("body_block", body)
                .attr("post_block", post),
        );
        let out = self.out(ty, dest);
        self.emit(copy(&src, &out));
        out
    }

    /// The op of builtin `b` on evaluated arguments `argv`.
    fn builtin_op(
        &mut self,
        e: &Expr,
        ty: &Ty,
        b: Builtin,
        argv: Vec<String>,
        dest: Option<&str>,
    ) -> String {
        let (name, slots): (&'static str, &[&'static str]) = match b {
            Builtin::Print => ("print", &["Args*"]),
            Builtin::Len => ("len", &["X"]),
            Builtin::Cap => ("cap", &["X"]),
            Builtin::Append => ("append", &["X", "Elems*"]),
            Builtin::Str => ("to_str", &["X"]),
            Builtin::Int => ("to_int", &["X"]),
            Builtin::Float => ("to_float", &["X"]),
            Builtin::Panic => ("panic", &["Msg"]),
            Builtin::Assert => ("assert", &["Cond", "Msg"]),
            Builtin::Exit => ("exit", &["Code"]),
            Builtin::Rand | Builtin::Perm => (b.name(), &["N"]),
            Builtin::Close => ("close", &["Chan"]),
            Builtin::After | Builtin::Sleep | Builtin::Tick => (b.name(), &["Ms"]),
            Builtin::Index => ("str_index", &["X", "Y"]),
            Builtin::Delete => ("map_delete", &["X", "Key"]),
            Builtin::Group => ("c_group", &[]),
            Builtin::World => ("c_world", &[]),
            Builtin::Rank => ("c_rank", &[]),
            Builtin::Size => ("c_size", &[]),
            Builtin::AllreduceSum => ("c_allreduce_sum", &[]),
            Builtin::AllreduceMax => ("c_allreduce_max", &[]),
            Builtin::AllreduceMin => ("c_allreduce_min", &[]),
            Builtin::AllreduceProd => ("c_allreduce_prod", &[]),
            Builtin::Broadcast => ("c_broadcast", &[]),
            Builtin::Allgather => ("c_allgather", &[]),
            Builtin::Barrier => ("c_barrier", &[]),
            _ => (b.name(), &[]),
        };
        let mut op = Op::new(name, e.span);
        if b == Builtin::Group {
            op = op.attr(registry::RINGS_ATTR, registry::DEFAULT_RINGS);
        }
        if slots.is_empty() {
            // tensor builtins and collectives: input slots from the op
            // registry, in argument order
            if let Some(spec) = registry::lookup(name) {
                let mut rest = argv.into_iter();
                for (i, s) in spec.inputs.iter().enumerate() {
                    if i + 1 == spec.inputs.len() && matches!(s.arity, registry::Arity::Variadic) {
                        op = op.inputs(s.name, rest.by_ref().collect());
                    } else if let Some(v) = rest.next() {
                        op = op.input(s.name, v);
                    }
                }
            }
        } else {
            let mut rest = argv.into_iter();
            for s in slots {
                if let Some(base) = s.strip_suffix('*') {
                    op = op.inputs(base, rest.by_ref().collect());
                } else if let Some(v) = rest.next() {
                    op = op.input(s, v);
                }
            }
        }
        if *ty == Ty::Void {
            self.emit(op);
            return String::new();
        }
        let out = self.out(ty, dest);
        self.emit(op.output("Out", out.clone()));
        out
    }

    /// `append(l, m...)`: r = l; for i := 0; i < len(m); i++ { r = append(r, m[i]) }.
    fn append_spread(
        &mut self,
        e: &Expr,
        ty: &Ty,
        l: &Expr,
        m: &Expr,
        dest: Option<&str>,
    ) -> String {
        let elem = ty.elem().cloned().unwrap_or(Ty::Int);
        let r = self.temp(ty);
        self.expr(l, Some(&r));
        let mv = self.expr(m, None);
        let n = self.temp(&Ty::Int);
        self.emit(
            Op::new("len", e.span)
                .input("X", mv.clone())
                .output("Out", n.clone()),
        );
        let i = self.temp(&Ty::Int);
        self.constant(&ConstVal::Int(0), &Ty::Int, e, Some(&i));
        let c = self.temp(&Ty::Bool);
        let cond = self.new_block();
        self.in_block(cond, |l| {
            l.emit(
                Op::new("lt", e.span)
                    .input("X", i.clone())
                    .input("Y", n.clone())
                    .output("Out", c.clone()),
            );
        });
        let body = self.new_block();
        self.in_block(body, |l| {
            let x = l.temp(&elem);
            l.emit(
                Op::new("index", e.span)
                    .input("X", mv.clone())
                    .input("Index", i.clone())
                    .output("Out", x.clone()),
            );
            l.emit(
                Op::new("append", e.span)
                    .input("X", r.clone())
                    .inputs("Elems", vec![x])
                    .output("Out", r.clone()),
            );
            let one = l.small_const(1, &Ty::Int, e);
            l.emit(
                Op::new("add", e.span)
                    .input("X", i.clone())
                    .input("Y", one)
                    .output("Out", i.clone()),
            );
        });
        self.emit(
            Op::new("loop", e.span)
                .input("Cond", c)
                .attr("cond_block", cond)
                .attr("body_block", body),
        );
        self.copy_to(r, e, dest)
    }
}
