//! Lowering: a checked syntax tree to the block IR, through
//! `weft_ir::builder::ProgramBuilder`, following the op set of
//! docs/architecture.md.
//!
//! Invariants: the output passes `weft_ir::verify` (tested for every test
//! program). Within a function every variable has a unique name: the first
//! declaration of `x` keeps its name, later ones become `x.1`, `x.2`, ...
//! (a dot cannot appear in a source name), temporaries are `%N`. A variable is
//! declared in the block where its statement runs, except those a sub-block
//! op reads or writes across blocks (loop conditions, select results), which
//! live in the block of the op. Expressions are flattened into temporaries;
//! only an expression's final op writes an assignment's destination, so
//! `x = y && x` reads the old `x`. Every op carries the location of the start
//! of its statement or expression.
//!
//! Files: `mod.rs` (functions, variables, the builder), `stmt.rs`
//! (statements and control flow), `expr.rs` (expressions into temporaries).

mod expr;
mod stmt;

use std::collections::HashMap;

use weft_ir::builder::{BlockId, ProgramBuilder};
use weft_ir::pb::{attr, ProgramDesc, Type};

use crate::ast::*;
use crate::check::{Info, VarId};
use crate::diag::{LineIndex, Span};
use crate::types::Ty;

/// Lowers a file that checked without errors.
pub fn lower(file: &str, src: &str, tree: &File, info: &Info) -> ProgramDesc {
    let mut l = Lowerer::new(file, src, info);
    l.structs();
    let mut fid = 0usize;
    for d in &tree.decls {
        if let Decl::Func(f) = d {
            l.func(fid, f);
            fid += 1;
        }
    }
    l.b.build()
}

/// [`lower`], freeing each function's tree once it is lowered: the
/// program's IR grows while its tree shrinks, so the two are not both
/// held whole (the compiler's peak memory is a large program's tree plus
/// its IR otherwise).
pub fn lower_consuming(file: &str, src: &str, tree: File, info: &Info) -> ProgramDesc {
    let mut l = Lowerer::new(file, src, info);
    l.structs();
    let mut fid = 0usize;
    for d in tree.decls {
        if let Decl::Func(f) = d {
            l.func(fid, &f);
            fid += 1;
        }
    }
    l.b.build()
}

impl<'a> Lowerer<'a> {
    fn new(file: &'a str, src: &'a str, info: &'a Info) -> Lowerer<'a> {
        Lowerer {
            file,
            info,
            b: ProgramBuilder::new(),
            lines: LineIndex::new(src),
            taken: HashMap::new(),
            var_names: HashMap::new(),
            cur: BlockId::ROOT,
            result: None,
            defers: None,
            fname: String::new(),
            lifted: 0,
        }
    }
}

pub(crate) struct Lowerer<'a> {
    file: &'a str,
    info: &'a Info,
    b: ProgramBuilder,
    lines: LineIndex<'a>,
    /// Names used in the current function, with the next suffix to try.
    taken: HashMap<String, u32>,
    var_names: HashMap<VarId, String>,
    cur: BlockId,
    /// The result of the function (or function literal) being lowered.
    result: Option<Ty>,
    /// The list of deferred calls of the body being lowered, if it defers.
    defers: Option<String>,
    /// The name of the top-level function being lowered.
    fname: String,
    /// How many functions were lifted (function literals, deferred calls).
    lifted: u32,
}

/// One op under construction.
pub(crate) struct Op {
    ty: &'static str,
    ins: Vec<(&'static str, Vec<String>)>,
    outs: Vec<(&'static str, Vec<String>)>,
    attrs: Vec<(&'static str, attr::Value)>,
    span: Span,
}

impl Op {
    pub(crate) fn new(ty: &'static str, span: Span) -> Op {
        Op {
            ty,
            ins: Vec::new(),
            outs: Vec::new(),
            attrs: Vec::new(),
            span,
        }
    }

    pub(crate) fn input(mut self, slot: &'static str, v: impl Into<String>) -> Op {
        self.ins.push((slot, vec![v.into()]));
        self
    }

    pub(crate) fn inputs(mut self, slot: &'static str, v: Vec<String>) -> Op {
        self.ins.push((slot, v));
        self
    }

    pub(crate) fn output(mut self, slot: &'static str, v: impl Into<String>) -> Op {
        self.outs.push((slot, vec![v.into()]));
        self
    }

    pub(crate) fn outputs(mut self, slot: &'static str, v: Vec<String>) -> Op {
        self.outs.push((slot, v));
        self
    }

    pub(crate) fn attr(mut self, name: &'static str, v: impl Into<attr::Value>) -> Op {
        self.attrs.push((name, v.into()));
        self
    }
}

impl<'a> Lowerer<'a> {
    /// The struct declarations (the predeclared `Dataset` when used).
    fn structs(&mut self) {
        let user_dataset = self
            .info
            .structs
            .iter()
            .skip(1)
            .any(|s| s.name == "Dataset");
        // The tuple structs: several results travel as one struct value
        // (docs/interpreter.md, "Several results").
        let mut tuples: Vec<Vec<Ty>> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let all = self
            .info
            .types
            .iter()
            .chain(self.info.vars.iter().map(|v| &v.ty))
            .chain(self.info.funcs.iter().filter_map(|f| f.result.as_ref()))
            .chain(
                self.info
                    .structs
                    .iter()
                    .flat_map(|s| s.fields.iter().map(|f| &f.1)),
            );
        for t in all {
            collect_tuples(t, &mut seen, &mut tuples);
        }
        for ts in tuples {
            let name = pbty(&Ty::Tuple(ts.clone().into()), &self.info.structs);
            let fields: Vec<(String, Type)> = ts
                .iter()
                .enumerate()
                .map(|(i, t)| (format!("r{i}"), self.pbty(t)))
                .collect();
            if let Some(n) = name.struct_name() {
                self.b.struct_decl(n.to_string(), fields);
            }
        }
        for (i, s) in self.info.structs.iter().enumerate() {
            if i == 0 && (!self.info.uses_dataset || user_dataset) {
                continue;
            }
            let fields: Vec<(String, Type)> = s
                .fields
                .iter()
                .map(|(n, t)| (n.clone(), self.pbty(t)))
                .collect();
            self.b.struct_decl(s.name.clone(), fields);
        }
    }

    fn func(&mut self, id: usize, f: &FuncDecl) {
        self.taken.clear();
        let info = &self.info.funcs[id];
        let (line, col) = self.loc(f.span);
        let mut fb = self.b.func(info.name.clone()).loc(self.file, line, col);
        let mut names = Vec::new();
        for (i, (p, (_, ty))) in f.params.iter().zip(&info.params).enumerate() {
            let name = if p.name.is_blank() {
                format!("%arg{i}")
            } else {
                unique(&mut self.taken, &p.name.name)
            };
            if let Some(v) = self.info.defs.get(&p.name.id) {
                names.push((*v, name.clone()));
            }
            fb = fb.param(name, pbty(ty, &self.info.structs));
        }
        if let Some(r) = &info.result {
            fb = fb.result(pbty(r, &self.info.structs));
        }
        let body = fb.finish();
        self.var_names.extend(names);
        self.cur = body;
        self.result = info.result.clone();
        self.fname = info.name.clone();
        self.body(&f.body.stmts, f.body.span);
    }

    /// Line and column (characters from 1) of the start of `span`.
    pub(crate) fn loc(&self, span: Span) -> (u32, u32) {
        self.lines.line_col(span.start as usize)
    }

    pub(crate) fn pbty(&self, ty: &Ty) -> Type {
        pbty(ty, &self.info.structs)
    }

    /// Appends `op` to the current block.
    pub(crate) fn emit(&mut self, op: Op) {
        let (line, col) = self.loc(op.span);
        let mut ob = self.b.op(self.cur, op.ty).loc(self.file, line, col);
        for (slot, args) in op.ins {
            ob = ob.input(slot, args);
        }
        for (slot, args) in op.outs {
            ob = ob.output(slot, args);
        }
        for (name, v) in op.attrs {
            ob = ob.attr(name, v);
        }
        ob.finish();
    }

    /// A fresh temporary of type `ty` in the current block.
    pub(crate) fn temp(&mut self, ty: &Ty) -> String {
        let t = self.pbty(ty);
        self.b.temp(self.cur, t)
    }

    /// `dest` if given, else a fresh temporary.
    pub(crate) fn out(&mut self, ty: &Ty, dest: Option<&str>) -> String {
        match dest {
            Some(d) => d.to_string(),
            None => self.temp(ty),
        }
    }

    /// Declares the variable a declared identifier introduces, in the current block.
    pub(crate) fn declare(&mut self, ident: &Ident) -> Option<String> {
        let id = *self.info.defs.get(&ident.id)?;
        let name = unique(&mut self.taken, &ident.name);
        let ty = self.pbty(&self.info.vars[id as usize].ty);
        self.b.var(self.cur, name.clone(), ty);
        self.var_names.insert(id, name.clone());
        Some(name)
    }

    pub(crate) fn var_name(&self, id: VarId) -> String {
        self.var_names
            .get(&id)
            .cloned()
            .unwrap_or_else(|| "_".into())
    }

    /// Runs `f` with `block` as the current block.
    pub(crate) fn in_block<T>(&mut self, block: BlockId, f: impl FnOnce(&mut Self) -> T) -> T {
        let saved = std::mem::replace(&mut self.cur, block);
        let r = f(self);
        self.cur = saved;
        r
    }

    pub(crate) fn new_block(&mut self) -> BlockId {
        self.b.block(self.cur)
    }
}

fn unique(taken: &mut HashMap<String, u32>, name: &str) -> String {
    match taken.get_mut(name) {
        None => {
            taken.insert(name.to_string(), 1);
            name.to_string()
        }
        Some(n) => {
            let s = format!("{name}.{n}");
            *n += 1;
            s
        }
    }
}

pub(crate) fn pbty(ty: &Ty, structs: &[crate::types::StructInfo]) -> Type {
    match ty {
        Ty::Int | Ty::UntypedInt => Type::int(),
        Ty::Float | Ty::UntypedFloat => Type::float(),
        Ty::Bool | Ty::UntypedBool => Type::bool(),
        Ty::Str | Ty::UntypedStr => Type::string(),
        Ty::Tensor => Type::tensor(),
        Ty::Comm => Type::comm(),
        Ty::Chan(e) => Type::chan(pbty(e, structs)),
        Ty::List(e) => Type::list(pbty(e, structs)),
        Ty::Struct(id) => {
            Type::struct_named(structs.get(*id as usize).map_or("", |s| s.name.as_str()))
        }
        Ty::Map(k, v) => Type::map(pbty(k, structs), pbty(v, structs)),
        Ty::Func(sig) => Type::func(
            sig.params.iter().map(|p| pbty(p, structs)).collect(),
            sig.result.as_ref().map(|r| pbty(r, structs)),
        ),
        // A tuple struct is named by its printed form, `(int, bool)`,
        // which no declared struct can have.
        Ty::Tuple(_) => Type::struct_named(crate::types::TyName(ty, structs).to_string()),
        Ty::Invalid | Ty::Void | Ty::UntypedNil => Type::int(),
    }
}

/// Every tuple type inside `t`, once each, innermost first.
fn collect_tuples(t: &Ty, seen: &mut std::collections::HashSet<Ty>, out: &mut Vec<Vec<Ty>>) {
    match t {
        Ty::Chan(e) | Ty::List(e) => collect_tuples(e, seen, out),
        Ty::Map(k, v) => {
            collect_tuples(k, seen, out);
            collect_tuples(v, seen, out);
        }
        Ty::Func(sig) => {
            for p in sig.params.iter().chain(&sig.result) {
                collect_tuples(p, seen, out);
            }
        }
        Ty::Tuple(ts) => {
            for e in ts.iter() {
                collect_tuples(e, seen, out);
            }
            if seen.insert(t.clone()) {
                out.push(ts.to_vec());
            }
        }
        _ => {}
    }
}
