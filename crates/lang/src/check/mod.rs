//! The type checker: enforces every rule of docs/language.md and records, for the
//! lowering, the type of each expression, what each name refers to, and the
//! variables each `go { }` block captures.
//!
//! Invariants: checking never stops early; it continues through every
//! function. An expression that already failed has type `Invalid`, which is
//! accepted everywhere silently, so an error caused only by an earlier one is
//! not reported. Scopes are a map from name to a stack of entries plus an undo
//! log per scope, so lookups cost O(1) whatever the function size.
//!
//! Go blocks: a variable declared at go-depth `d` (the number of `go { }`
//! blocks around its declaration) and used at a deeper depth is captured by
//! every go block between the two; assigning to it there is an error, since
//! the block holds only a snapshot (tasks share nothing but channels).
//!
//! Errors: every error is a [`CheckError`] (`error.rs`, the catalogue of
//! the checker's messages), reported with `Checker::error`.
//!
//! Files: `mod.rs` (scopes, declarations, the driver), `stmt.rs`
//! (statements), `expr.rs` (expressions and untyped constants),
//! `convert.rs` (assignability and conversions), `builtins.rs` (builtin
//! calls), `terminate.rs` (the terminating-statement rule), `error.rs`
//! (the message catalogue).

mod builtins;
mod convert;
mod error;
mod expr;
mod stmt;
mod terminate;

use std::collections::HashMap;

use crate::ast::*;
use crate::diag::{Diagnostics, Span};
use crate::types::{ConstVal, StructInfo, Ty, TyName};
pub use builtins::Builtin;
pub use error::{CaseStmt, CheckError, Context, Jump, NameKind, Unrepresentable};
pub(crate) use stmt::is_recv as is_recv_expr;

pub type VarId = u32;
pub type FuncId = u32;

/// A variable (parameters, locals, range and select variables).
#[derive(Debug, Clone)]
pub struct VarInfo {
    pub name: String,
    pub ty: Ty,
    /// The function it belongs to.
    pub func: FuncId,
}

#[derive(Debug, Clone)]
pub struct FuncInfo {
    pub name: String,
    pub params: Vec<(String, Ty)>,
    pub result: Option<Ty>,
    pub span: Span,
}

/// What an identifier in expression position refers to.
#[derive(Debug, Clone, PartialEq)]
pub enum Res {
    Var(VarId),
    Const(ConstVal),
    Func(FuncId),
    Builtin(Builtin),
}

/// Everything the lowering needs from the checker.
#[derive(Debug, Default)]
pub struct Info {
    pub structs: Vec<StructInfo>,
    pub funcs: Vec<FuncInfo>,
    pub vars: Vec<VarInfo>,
    /// The (final) type of every expression, by `NodeId`.
    pub types: Vec<Ty>,
    /// The value of every constant expression.
    pub consts: HashMap<NodeId, ConstVal>,
    /// What identifier expressions (and callees) refer to.
    pub uses: HashMap<NodeId, Res>,
    /// The variable each declared identifier introduces.
    pub defs: HashMap<NodeId, VarId>,
    /// The outer variables each `go { }` statement (by statement id) and
    /// each function literal (by expression id) captures.
    pub captures: HashMap<NodeId, Vec<VarId>>,
    /// Whether the predeclared `Dataset` struct is used.
    pub uses_dataset: bool,
}

impl Info {
    pub fn ty(&self, e: &Expr) -> &Ty {
        self.types.get(e.id as usize).unwrap_or(&Ty::Invalid)
    }
}

#[derive(Clone)]
enum Entry {
    Var { id: VarId, go_depth: u32 },
    Const(ConstVal, Ty),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum GlobalConst {
    Pending,
    InProgress,
    Done,
}

/// A top-level constant: its declaration, state and value once known.
type GlobalConstSlot<'a> = (&'a ConstSpec, GlobalConst, Option<(ConstVal, Ty)>);

enum Global {
    Func(FuncId),
    Const(usize),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum BreakKind {
    Loop,
    Switch,
    Select,
}

struct Breakable {
    kind: BreakKind,
    label: Option<String>,
}

/// A `go { }` block or a function literal: what it captures from outside.
struct GoFrame {
    stmt: NodeId,
    captures: Vec<VarId>,
    /// A function literal (else a go block).
    func_lit: bool,
}

pub(crate) struct Checker<'a> {
    src: &'a str,
    diags: &'a mut Diagnostics,
    info: Info,
    struct_names: HashMap<String, u32>,
    globals: HashMap<String, Global>,
    global_consts: Vec<GlobalConstSlot<'a>>,
    names: HashMap<String, Vec<Entry>>,
    scopes: Vec<Vec<String>>,
    go_stack: Vec<GoFrame>,
    breakables: Vec<Breakable>,
    /// Labels declared in the current function (or go block).
    labels: Vec<String>,
    /// The result type of the function being checked; `None` also in go blocks.
    result: Option<Ty>,
    in_go: bool,
    func: FuncId,
    /// Checking for `weft test`: `main` is not required.
    tests: bool,
}

/// Checks `file`, reporting errors into `diags`; returns what lowering needs.
pub fn check_file(file: &File, src: &str, diags: &mut Diagnostics) -> Info {
    check_file_as(file, src, diags, false)
}

/// Checks `file` as `check_file`; with `tests` (a file for `weft test`,
/// docs/language.md) a missing `main` is no error (a `main` that is there
/// is still checked).
pub fn check_file_as(file: &File, src: &str, diags: &mut Diagnostics, tests: bool) -> Info {
    let mut c = Checker {
        src,
        diags,
        info: Info {
            types: vec![Ty::Invalid; file.node_count as usize],
            ..Info::default()
        },
        struct_names: HashMap::new(),
        globals: HashMap::new(),
        global_consts: Vec::new(),
        names: HashMap::new(),
        scopes: Vec::new(),
        go_stack: Vec::new(),
        breakables: Vec::new(),
        labels: Vec::new(),
        result: None,
        in_go: false,
        func: 0,
        tests,
    };
    c.file(file);
    c.info
}

impl<'a> Checker<'a> {
    /// Reports `e` at `span`.
    pub(crate) fn error(&mut self, span: Span, e: CheckError) {
        self.diags.report(span, &e);
    }

    pub(crate) fn tyname(&self, ty: &Ty) -> String {
        TyName(ty, &self.info.structs).to_string()
    }

    /// The source text of `span`, shortened for messages.
    pub(crate) fn text(&self, span: Span) -> String {
        let t = self
            .src
            .get(span.start as usize..span.end as usize)
            .unwrap_or("");
        let t = t.split('\n').next().unwrap_or("");
        if t.chars().count() > 40 {
            let short: String = t.chars().take(37).collect();
            format!("{short}...")
        } else {
            t.to_string()
        }
    }

    fn file(&mut self, file: &'a File) {
        self.info.structs.push(StructInfo {
            name: "Dataset".into(),
            fields: vec![("x".into(), Ty::Tensor), ("y".into(), Ty::list(Ty::Int))],
            predeclared: true,
        });
        // 1. names of structs, functions and constants
        for d in &file.decls {
            match d {
                Decl::Type(t) => {
                    if self.declare_global_name(&t.name) {
                        let id = self.info.structs.len() as u32;
                        self.struct_names.insert(t.name.name.clone(), id);
                        self.info.structs.push(StructInfo {
                            name: t.name.name.clone(),
                            fields: Vec::new(),
                            predeclared: false,
                        });
                    }
                }
                Decl::Func(f) => {
                    if self.declare_global_name(&f.name) {
                        let id = self.info.funcs.len() as u32;
                        self.globals.insert(f.name.name.clone(), Global::Func(id));
                        self.info.funcs.push(FuncInfo {
                            name: f.name.name.clone(),
                            params: Vec::new(),
                            result: None,
                            span: f.name.span,
                        });
                    }
                }
                Decl::Const(c) => {
                    if self.declare_global_name(&c.name) {
                        let idx = self.global_consts.len();
                        self.globals.insert(c.name.name.clone(), Global::Const(idx));
                        self.global_consts.push((c, GlobalConst::Pending, None));
                    }
                }
            }
        }
        // 2. struct fields, then recursive structs
        for d in &file.decls {
            if let Decl::Type(t) = d {
                let Some(&id) = self.struct_names.get(&t.name.name) else {
                    continue;
                };
                if self.info.structs[id as usize].name != t.name.name
                    || !self.info.structs[id as usize].fields.is_empty()
                {
                    continue;
                }
                let mut fields: Vec<(String, Ty)> = Vec::new();
                for f in &t.fields {
                    let ty = self.resolve_type(&f.ty);
                    if !f.name.is_blank() && fields.iter().any(|(n, _)| *n == f.name.name) {
                        self.error(
                            f.name.span,
                            CheckError::FieldRedeclared {
                                name: f.name.name.clone(),
                            },
                        );
                        continue;
                    }
                    fields.push((f.name.name.clone(), ty));
                }
                self.info.structs[id as usize].fields = fields;
            }
        }
        for d in &file.decls {
            if let Decl::Type(t) = d {
                if let Some(&id) = self.struct_names.get(&t.name.name) {
                    if self.contains_struct(id, id, 0) {
                        self.error(
                            t.name.span,
                            CheckError::RecursiveType {
                                name: t.name.name.clone(),
                            },
                        );
                        self.info.structs[id as usize].fields.clear();
                    }
                }
            }
        }
        // 3. constants (in any order; cycles are errors)
        for i in 0..self.global_consts.len() {
            self.global_const(i);
        }
        // 4. signatures
        for d in &file.decls {
            if let Decl::Func(f) = d {
                let Some(Global::Func(id)) = self.globals.get(&f.name.name) else {
                    continue;
                };
                let id = *id;
                if self.info.funcs[id as usize].span != f.name.span {
                    continue;
                }
                let params: Vec<(String, Ty)> = f
                    .params
                    .iter()
                    .map(|p| (p.name.name.clone(), self.resolve_type(&p.ty)))
                    .collect();
                let result = f.result.as_ref().map(|t| self.resolve_type(t));
                let info = &mut self.info.funcs[id as usize];
                info.params = params;
                info.result = result;
            }
        }
        match self.globals.get("main") {
            Some(Global::Func(id)) => {
                let f = &self.info.funcs[*id as usize];
                if !f.params.is_empty() || f.result.is_some() {
                    let span = f.span;
                    self.error(span, CheckError::MainSignature);
                }
            }
            _ if self.tests => {}
            _ if file.decls.is_empty() => {
                self.error(Span::new(0, 0), CheckError::EmptyProgram);
            }
            _ => {
                self.error(Span::new(0, 0), CheckError::NoMain);
            }
        }
        // 5. bodies
        for d in &file.decls {
            if let Decl::Func(f) = d {
                if let Some(Global::Func(id)) = self.globals.get(&f.name.name) {
                    let id = *id;
                    if self.info.funcs[id as usize].span == f.name.span {
                        self.func_body(id, f);
                    }
                }
            }
        }
    }

    /// Records a top-level name; false (after an error) if it is taken.
    fn declare_global_name(&mut self, name: &Ident) -> bool {
        if name.is_blank() {
            self.error(name.span, CheckError::BlankTopLevel);
            return false;
        }
        if self.globals.contains_key(&name.name) || self.struct_names.contains_key(&name.name) {
            self.error(
                name.span,
                CheckError::RedeclaredInFile {
                    name: name.name.clone(),
                },
            );
            return false;
        }
        true
    }

    fn contains_struct(&self, target: u32, id: u32, depth: u32) -> bool {
        if depth > 64 {
            return false;
        }
        self.info.structs[id as usize]
            .fields
            .iter()
            .any(|(_, t)| match t {
                Ty::Struct(s) => *s == target || self.contains_struct(target, *s, depth + 1),
                _ => false,
            })
    }

    /// Evaluates top-level constant `i` (once), with no local names in scope.
    fn global_const(&mut self, i: usize) -> Option<(ConstVal, Ty)> {
        let (spec, state, val) = self.global_consts[i].clone();
        match state {
            GlobalConst::Done => return val,
            GlobalConst::InProgress => {
                self.error(
                    spec.name.span,
                    CheckError::InitCycle {
                        name: spec.name.name.clone(),
                    },
                );
                self.global_consts[i].1 = GlobalConst::Done;
                return None;
            }
            GlobalConst::Pending => {}
        }
        self.global_consts[i].1 = GlobalConst::InProgress;
        let names = std::mem::take(&mut self.names);
        let go = std::mem::take(&mut self.go_stack);
        let r = self.const_value(spec);
        self.names = names;
        self.go_stack = go;
        self.global_consts[i] = (spec, GlobalConst::Done, r.clone());
        r
    }

    /// The type a type expression denotes. One nesting more than
    /// `weft_ir::MAX_TYPE_NESTING` levels of `[]` and `chan` is an error
    /// (a `.pb` file could not hold it), reported once at its outermost
    /// level.
    pub(crate) fn resolve_type(&mut self, t: &TypeExpr) -> Ty {
        let mut nesting = 0;
        let mut inner = t;
        while let TypeKind::Chan(e) | TypeKind::List(e) = &inner.kind {
            nesting += 1;
            inner = e;
        }
        if nesting > weft_ir::MAX_TYPE_NESTING {
            let limit = weft_ir::MAX_TYPE_NESTING;
            self.error(t.span, CheckError::TypeTooDeep { limit });
            return Ty::Invalid;
        }
        self.resolve_type_inner(t)
    }

    fn resolve_type_inner(&mut self, t: &TypeExpr) -> Ty {
        match &t.kind {
            TypeKind::Chan(e) => Ty::chan(self.resolve_type_inner(e)),
            TypeKind::List(e) => Ty::list(self.resolve_type_inner(e)),
            TypeKind::Map(k, v) => {
                let kt = self.resolve_type(k);
                let vt = self.resolve_type(v);
                if !kt.is_invalid() && !crate::types::comparable(&kt, &self.info.structs) {
                    let ty = self.tyname(&kt);
                    self.error(k.span, CheckError::InvalidMapKey { ty });
                    return Ty::Invalid;
                }
                if kt.is_invalid() || vt.is_invalid() {
                    return Ty::Invalid;
                }
                Ty::map(kt, vt)
            }
            TypeKind::Func { params, result } => {
                let ps: Vec<Ty> = params.iter().map(|p| self.resolve_type(p)).collect();
                let r = result.as_ref().map(|r| self.resolve_type(r));
                if ps.iter().chain(&r).any(Ty::is_invalid) {
                    return Ty::Invalid;
                }
                Ty::func(ps, r)
            }
            TypeKind::Tuple(ts) => {
                let ts: Vec<Ty> = ts.iter().map(|t| self.resolve_type(t)).collect();
                if ts.iter().any(Ty::is_invalid) {
                    return Ty::Invalid;
                }
                Ty::Tuple(ts.into())
            }
            TypeKind::Named(n) => match n.name.as_str() {
                "int" => Ty::Int,
                "float" => Ty::Float,
                "bool" => Ty::Bool,
                "string" => Ty::Str,
                "tensor" => Ty::Tensor,
                "comm" => Ty::Comm,
                name => match self.struct_names.get(name) {
                    Some(&id) => Ty::Struct(id),
                    None if name == "Dataset" => {
                        self.info.uses_dataset = true;
                        Ty::Struct(0)
                    }
                    None => {
                        let name = name.to_string();
                        let e = if self.lookup(&name).is_some() {
                            CheckError::NotAType { name }
                        } else {
                            CheckError::Undefined { name }
                        };
                        self.error(n.span, e);
                        Ty::Invalid
                    }
                },
            },
        }
    }

    // ---- scopes ----

    pub(crate) fn push_scope(&mut self) {
        self.scopes.push(Vec::new());
    }

    pub(crate) fn pop_scope(&mut self) {
        if let Some(names) = self.scopes.pop() {
            for n in names {
                if let Some(stack) = self.names.get_mut(&n) {
                    stack.pop();
                }
            }
        }
    }

    /// Whether `name` is declared in the innermost scope.
    pub(crate) fn in_current_scope(&self, name: &str) -> bool {
        self.scopes
            .last()
            .is_some_and(|s| s.iter().any(|n| n == name))
    }

    /// Declares a new variable for `ident`; blank names get none.
    pub(crate) fn declare_var(&mut self, ident: &Ident, ty: Ty) -> Option<VarId> {
        if ident.is_blank() {
            return None;
        }
        if self.in_current_scope(&ident.name) {
            self.error(
                ident.span,
                CheckError::RedeclaredInBlock {
                    name: ident.name.clone(),
                },
            );
        }
        let id = self.info.vars.len() as VarId;
        self.info.vars.push(VarInfo {
            name: ident.name.clone(),
            ty,
            func: self.func,
        });
        self.info.defs.insert(ident.id, id);
        let entry = Entry::Var {
            id,
            go_depth: self.go_stack.len() as u32,
        };
        self.bind(&ident.name, entry);
        Some(id)
    }

    fn bind(&mut self, name: &str, entry: Entry) {
        self.names.entry(name.to_string()).or_default().push(entry);
        if let Some(s) = self.scopes.last_mut() {
            s.push(name.to_string());
        }
    }

    pub(crate) fn declare_local_const(&mut self, ident: &Ident, val: ConstVal, ty: Ty) {
        if ident.is_blank() {
            return;
        }
        if self.in_current_scope(&ident.name) {
            self.error(
                ident.span,
                CheckError::RedeclaredInBlock {
                    name: ident.name.clone(),
                },
            );
        }
        self.bind(&ident.name, Entry::Const(val, ty));
    }

    fn lookup(&self, name: &str) -> Option<&Entry> {
        self.names.get(name).and_then(|s| s.last())
    }

    /// Resolves a name in value position (locals, then globals, then builtins).
    /// Marks captures of variables from outside the current go blocks.
    pub(crate) fn resolve(&mut self, name: &str) -> Option<(Res, Ty)> {
        if let Some(e) = self.lookup(name).cloned() {
            return Some(match e {
                Entry::Var { id, go_depth } => {
                    self.capture(id, go_depth);
                    (Res::Var(id), self.info.vars[id as usize].ty.clone())
                }
                Entry::Const(v, t) => (Res::Const(v), t),
            });
        }
        match self.globals.get(name) {
            Some(Global::Func(id)) => return Some((Res::Func(*id), Ty::Invalid)),
            Some(Global::Const(i)) => {
                let i = *i;
                return Some(match self.global_const(i) {
                    Some((v, t)) => (Res::Const(v), t),
                    None => (Res::Const(ConstVal::Int(0)), Ty::Invalid),
                });
            }
            None => {}
        }
        Builtin::from_name(name).map(|b| (Res::Builtin(b), Ty::Invalid))
    }

    /// The go depth a variable was declared at, if the name is a variable.
    pub(crate) fn var_depth(&self, name: &str) -> Option<(VarId, u32)> {
        match self.lookup(name) {
            Some(Entry::Var { id, go_depth }) => Some((*id, *go_depth)),
            _ => None,
        }
    }

    fn capture(&mut self, id: VarId, go_depth: u32) {
        for frame in self.go_stack.iter_mut().skip(go_depth as usize) {
            if !frame.captures.contains(&id) {
                frame.captures.push(id);
            }
        }
    }

    pub(crate) fn is_struct_name(&self, name: &str) -> bool {
        self.struct_names.contains_key(name)
            || matches!(
                name,
                "int" | "float" | "bool" | "string" | "tensor" | "comm"
            )
    }

    fn func_body(&mut self, id: FuncId, f: &FuncDecl) {
        self.func = id;
        self.labels.clear();
        self.breakables.clear();
        self.result = self.info.funcs[id as usize].result.clone();
        self.in_go = false;
        self.push_scope();
        let params = self.info.funcs[id as usize].params.clone();
        for (p, (_, ty)) in f.params.iter().zip(params) {
            self.declare_var(&p.name, ty);
        }
        self.push_scope();
        self.stmts(&f.body.stmts);
        self.pop_scope();
        self.pop_scope();
        if self.result.is_some() && !self.terminates_list(&f.body.stmts) {
            let end = f.body.span.end.saturating_sub(1) as usize;
            self.error(Span::new(end, end + 1), CheckError::MissingReturn);
        }
    }

    /// Checks a `go { }` block: a new task with a snapshot of captured variables.
    pub(crate) fn go_block(&mut self, stmt: NodeId, body: &Block) {
        self.go_stack.push(GoFrame {
            stmt,
            captures: Vec::new(),
            func_lit: false,
        });
        let result = self.result.take();
        let in_go = std::mem::replace(&mut self.in_go, true);
        let breakables = std::mem::take(&mut self.breakables);
        let labels = std::mem::take(&mut self.labels);
        self.push_scope();
        self.stmts(&body.stmts);
        self.pop_scope();
        self.result = result;
        self.in_go = in_go;
        self.breakables = breakables;
        self.labels = labels;
        if let Some(frame) = self.go_stack.pop() {
            self.info.captures.insert(frame.stmt, frame.captures);
        }
    }

    pub(crate) fn go_depth(&self) -> u32 {
        self.go_stack.len() as u32
    }

    /// Whether the innermost capture frame is a function literal.
    pub(crate) fn in_func_lit(&self) -> bool {
        self.go_stack.last().is_some_and(|f| f.func_lit)
    }

    /// Checks a function literal: a body of its own (its own result,
    /// labels and loops) that captures, like a go block, a copy of every
    /// outer variable it uses, taken when the literal is evaluated.
    pub(crate) fn func_lit(&mut self, e: &Expr, lit: &FuncLit) -> Ty {
        let params: Vec<Ty> = lit
            .params
            .iter()
            .map(|p| self.resolve_type(&p.ty))
            .collect();
        let result = lit.result.as_ref().map(|r| self.resolve_type(r));
        self.go_stack.push(GoFrame {
            stmt: e.id,
            captures: Vec::new(),
            func_lit: true,
        });
        let saved_result = std::mem::replace(&mut self.result, result.clone());
        let in_go = std::mem::replace(&mut self.in_go, false);
        let breakables = std::mem::take(&mut self.breakables);
        let labels = std::mem::take(&mut self.labels);
        self.push_scope();
        for (p, ty) in lit.params.iter().zip(&params) {
            self.declare_var(&p.name, ty.clone());
        }
        self.push_scope();
        self.stmts(&lit.body.stmts);
        self.pop_scope();
        self.pop_scope();
        if result.is_some() && !self.terminates_list(&lit.body.stmts) {
            let end = lit.body.span.end.saturating_sub(1) as usize;
            self.error(Span::new(end, end + 1), CheckError::MissingReturn);
        }
        self.result = saved_result;
        self.in_go = in_go;
        self.breakables = breakables;
        self.labels = labels;
        if let Some(frame) = self.go_stack.pop() {
            self.info.captures.insert(frame.stmt, frame.captures);
        }
        if params.iter().chain(&result).any(Ty::is_invalid) {
            return Ty::Invalid;
        }
        Ty::func(params, result)
    }

    pub(crate) fn record(&mut self, e: &Expr, ty: &Ty) {
        if let Some(slot) = self.info.types.get_mut(e.id as usize) {
            *slot = ty.clone();
        }
    }
}
