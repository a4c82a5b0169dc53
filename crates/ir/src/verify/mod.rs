//! The IR verifier: `verify(&ProgramDesc)` checks every rule of `docs/ir.md`
//! and reports all problems found, so that an accepted program can be lowered
//! by the interpreter without further checks.
//!
//! Passes, in order: the version; the block tree (idx, parents, no cycles);
//! ownership of sub-blocks (each non-root block has exactly one owner: a
//! function body or one block attribute of an op in its parent); struct and
//! function declarations and every type; variables (unique per block, no
//! shadowing within a function); then each op against the registry
//! (`ops.rs`: slots, attributes, scope, slot types) and the type relations of
//! its meaning (`rules.rs`), and control flow (`flow.rs`: break, continue,
//! return, go captures). Walks up the tree are bounded by the block count, so
//! a malformed tree never loops.
//!
//! Files: `mod.rs` (the passes over blocks, declarations and variables),
//! `error.rs` (`VerifyError` and the catalogue `IssueKind`), `ops.rs`,
//! `rules.rs`, `flow.rs`.

mod error;
mod flow;
mod ops;
mod rules;

use std::collections::{HashMap, HashSet};

pub use error::{Issue, IssueKind, Site, VerifyError};

use crate::pb::{attr, r#type::Kind, ElemType, FunctionDesc, ProgramDesc, Scalar, StructDesc};
use crate::pb::{Type, VarDesc};
use crate::FORMAT_VERSION;

/// Checks a program; `Err` lists every problem found.
pub fn verify(program: &ProgramDesc) -> Result<(), VerifyError> {
    let mut cx = Ctx::new(program);
    cx.run();
    if cx.issues.is_empty() {
        Ok(())
    } else {
        Err(VerifyError { issues: cx.issues })
    }
}

/// Who owns a non-root block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Owner {
    /// The body of `functions[i]`.
    Func(usize),
    /// A block attribute of `blocks[block].ops[op]`.
    Op { block: usize, op: usize },
}

struct Ctx<'p> {
    p: &'p ProgramDesc,
    /// Each block's parent, when it is a valid block index (None for the root).
    parent: Vec<Option<usize>>,
    owner: Vec<Option<Owner>>,
    /// Each block's variables by name (the first declaration of a name).
    vars: Vec<HashMap<&'p str, &'p VarDesc>>,
    funcs: HashMap<&'p str, &'p FunctionDesc>,
    structs: HashMap<&'p str, &'p StructDesc>,
    issues: Vec<Issue>,
}

impl<'p> Ctx<'p> {
    fn new(p: &'p ProgramDesc) -> Self {
        Ctx {
            p,
            parent: Vec::new(),
            owner: vec![None; p.blocks.len()],
            vars: Vec::new(),
            funcs: HashMap::new(),
            structs: HashMap::new(),
            issues: Vec::new(),
        }
    }

    fn push(&mut self, site: Site, kind: IssueKind) {
        self.issues.push(Issue { site, kind });
    }

    fn run(&mut self) {
        if self.p.version != FORMAT_VERSION {
            self.push(
                Site::Program,
                IssueKind::Version {
                    found: self.p.version,
                    expected: FORMAT_VERSION,
                },
            );
        }
        if self.p.blocks.is_empty() {
            self.push(Site::Program, IssueKind::NoBlocks);
            return;
        }
        self.check_tree();
        self.check_structs();
        self.check_functions();
        self.check_ownership();
        self.check_vars();
        for b in 0..self.p.blocks.len() {
            for (k, op) in self.p.blocks[b].ops.iter().enumerate() {
                ops::check_op(self, b, k, op);
            }
        }
    }

    /// Ancestors of `b` (not `b` itself), nearest first, bounded by the block count.
    fn ancestors(&self, b: usize) -> impl Iterator<Item = usize> + '_ {
        let mut cur = self.parent.get(b).copied().flatten();
        let mut left = self.p.blocks.len();
        std::iter::from_fn(move || {
            let here = cur?;
            if left == 0 {
                return None;
            }
            left -= 1;
            cur = self.parent[here];
            Some(here)
        })
    }

    fn check_tree(&mut self) {
        let n = self.p.blocks.len();
        for (i, blk) in self.p.blocks.iter().enumerate() {
            if blk.idx as i64 != i as i64 {
                let kind = IssueKind::BlockIdx {
                    found: blk.idx,
                    expected: i as i32,
                };
                self.push(Site::Block(i as i32), kind);
            }
        }
        let root = &self.p.blocks[0];
        if root.parent_idx != -1 {
            self.push(Site::Block(0), IssueKind::RootParent(root.parent_idx));
        }
        if !root.vars.is_empty() || !root.ops.is_empty() {
            self.push(Site::Block(0), IssueKind::RootNotEmpty);
        }
        self.parent = vec![None; n];
        for i in 1..n {
            let par = self.p.blocks[i].parent_idx;
            match usize::try_from(par) {
                Ok(q) if q < n => self.parent[i] = Some(q),
                _ => self.push(Site::Block(i as i32), IssueKind::BadParent(par)),
            }
        }
        for i in 1..n {
            if self.ancestors(i).any(|a| a == i) {
                self.push(Site::Block(i as i32), IssueKind::ParentCycle);
            }
        }
        // Break cycles so later walks see finite chains.
        for i in 1..n {
            if self.ancestors(i).any(|a| a == i) {
                self.parent[i] = None;
            }
        }
    }

    fn check_structs(&mut self) {
        for s in &self.p.structs {
            if self.structs.insert(&s.name, s).is_some() {
                self.push(
                    Site::Program,
                    IssueKind::DuplicateName("struct", s.name.clone()),
                );
            }
        }
        for s in &self.p.structs {
            let mut seen = HashSet::new();
            for f in &s.fields {
                let site = Site::Struct(s.name.clone());
                if !seen.insert(f.name.as_str()) {
                    self.push(
                        site.clone(),
                        IssueKind::DuplicateName("field", f.name.clone()),
                    );
                }
                self.check_type_opt(site, &format!("field {:?}", f.name), f.r#type.as_ref());
            }
            if let Some(field) = self.struct_cycle(s) {
                self.push(Site::Struct(s.name.clone()), IssueKind::StructCycle(field));
            }
        }
    }

    /// The field of `s` through which `s` contains itself by value, if any.
    fn struct_cycle(&self, s: &StructDesc) -> Option<String> {
        for f in &s.fields {
            let mut stack: Vec<&str> = f
                .r#type
                .as_ref()
                .and_then(|t| t.struct_name())
                .into_iter()
                .collect();
            let mut seen = HashSet::new();
            while let Some(name) = stack.pop() {
                if name == s.name {
                    return Some(f.name.clone());
                }
                if !seen.insert(name) {
                    continue;
                }
                if let Some(inner) = self.structs.get(name) {
                    stack.extend(
                        inner
                            .fields
                            .iter()
                            .filter_map(|g| g.r#type.as_ref()?.struct_name()),
                    );
                }
            }
        }
        None
    }

    fn check_functions(&mut self) {
        for f in &self.p.functions {
            let site = Site::Function(f.name.clone());
            if self.funcs.insert(&f.name, f).is_some() {
                self.push(
                    Site::Program,
                    IssueKind::DuplicateName("function", f.name.clone()),
                );
            }
            for prm in &f.params {
                self.check_type_opt(
                    site.clone(),
                    &format!("parameter {:?}", prm.name),
                    prm.r#type.as_ref(),
                );
            }
            if let Some(r) = &f.result {
                self.check_type(site.clone(), "result", r);
            }
        }
        match self.funcs.get(self.p.entry.as_str()) {
            None => self.push(Site::Program, IssueKind::NoEntry(self.p.entry.clone())),
            Some(f) if !f.params.is_empty() || f.result.is_some() => self.push(
                Site::Program,
                IssueKind::EntrySignature(self.p.entry.clone()),
            ),
            Some(_) => {}
        }
    }

    fn describe_owner(&self, o: Owner) -> String {
        match o {
            Owner::Func(i) => format!("function {:?}", self.p.functions[i].name),
            Owner::Op { block, op } => {
                format!(
                    "block {block}, op {op} ({})",
                    self.p.blocks[block].ops[op].r#type
                )
            }
        }
    }

    /// Records `owner` for `target`; `site` and `what` describe the reference.
    fn claim(&mut self, site: Site, what: String, target: usize, owner: Owner, owner_block: usize) {
        if let Some(first) = self.owner[target] {
            let kind = IssueKind::OwnedTwice {
                what,
                target: target as i32,
                owner: self.describe_owner(first),
            };
            self.push(site, kind);
            return;
        }
        self.owner[target] = Some(owner);
        let parent = self.p.blocks[target].parent_idx;
        if i64::from(parent) != owner_block as i64 {
            let kind = IssueKind::WrongParent {
                what,
                target: target as i32,
                parent,
                expected: owner_block as i32,
            };
            self.push(site, kind);
        }
    }

    fn check_ownership(&mut self) {
        let n = self.p.blocks.len();
        for (i, f) in self.p.functions.iter().enumerate() {
            let site = Site::Function(f.name.clone());
            match usize::try_from(f.body_block) {
                Ok(t) if t > 0 && t < n => self.claim(site, "body".into(), t, Owner::Func(i), 0),
                _ => {
                    let kind = IssueKind::DanglingBlock {
                        attr: "body_block".into(),
                        target: f.body_block.into(),
                        count: n,
                    };
                    self.push(site, kind);
                }
            }
        }
        for b in 0..n {
            for (k, op) in self.p.blocks[b].ops.iter().enumerate() {
                for a in &op.attrs {
                    let targets: Vec<i64> = match &a.value {
                        Some(attr::Value::Block(t)) => vec![i64::from(*t)],
                        Some(attr::Value::Blocks(ts)) => ts.v.clone(),
                        _ => continue,
                    };
                    let site = Site::Op {
                        block: b as i32,
                        op: k,
                        ty: op.r#type.clone(),
                    };
                    for t in targets {
                        self.block_ref(site.clone(), &a.name, t, b, k);
                    }
                }
            }
        }
        for i in 1..n {
            if self.owner[i].is_none() {
                self.push(Site::Block(i as i32), IssueKind::Orphan);
            }
        }
    }

    fn block_ref(&mut self, site: Site, attr: &str, target: i64, b: usize, k: usize) {
        let n = self.p.blocks.len();
        let t = match usize::try_from(target) {
            Ok(t) if t < n => t,
            _ => {
                let kind = IssueKind::DanglingBlock {
                    attr: attr.into(),
                    target,
                    count: n,
                };
                return self.push(site, kind);
            }
        };
        if t == b || self.ancestors(b).any(|a| a == t) {
            let kind = IssueKind::CyclicBlock {
                attr: attr.into(),
                target: t as i32,
            };
            return self.push(site, kind);
        }
        let what = format!("attribute {attr:?}");
        self.claim(site, what, t, Owner::Op { block: b, op: k }, b);
    }

    fn check_vars(&mut self) {
        let n = self.p.blocks.len();
        self.vars = vec![HashMap::new(); n];
        for b in 0..n {
            let site = Site::Block(b as i32);
            for v in &self.p.blocks[b].vars {
                if v.name.is_empty() || v.name == "_" {
                    self.push(site.clone(), IssueKind::ReservedVarName(v.name.clone()));
                    continue;
                }
                if self.vars[b].contains_key(v.name.as_str()) {
                    self.push(site.clone(), IssueKind::DuplicateVar(v.name.clone()));
                    continue;
                }
                self.vars[b].insert(&v.name, v);
                self.check_type_opt(
                    site.clone(),
                    &format!("variable {:?}", v.name),
                    v.r#type.as_ref(),
                );
            }
        }
        for b in 1..n {
            let outer: Vec<usize> = self.ancestors(b).filter(|&a| a != 0).collect();
            for v in &self.p.blocks[b].vars {
                if let Some(&o) = outer
                    .iter()
                    .find(|&&o| self.vars[o].contains_key(v.name.as_str()))
                {
                    let kind = IssueKind::Shadow {
                        name: v.name.clone(),
                        outer: o as i32,
                    };
                    self.push(Site::Block(b as i32), kind);
                }
            }
        }
        for f in &self.p.functions {
            let Some(body) = usize::try_from(f.body_block).ok().filter(|&t| t < n) else {
                continue;
            };
            for prm in &f.params {
                let declared = self.vars[body].get(prm.name.as_str());
                let same = match (declared.and_then(|v| v.r#type.as_ref()), &prm.r#type) {
                    (Some(a), Some(b)) => a == b,
                    _ => false,
                };
                if !same {
                    self.push(
                        Site::Function(f.name.clone()),
                        IssueKind::ParamNotDeclared(prm.name.clone()),
                    );
                }
            }
        }
    }

    fn check_type_opt(&mut self, site: Site, what: &str, ty: Option<&Type>) {
        match ty {
            Some(t) => self.check_type(site, what, t),
            None => self.push(site, IssueKind::TypeUnset(what.into())),
        }
    }

    /// Checks that a type (and every type inside it) is well formed.
    fn check_type(&mut self, site: Site, what: &str, ty: &Type) {
        match &ty.kind {
            None => self.push(site, IssueKind::TypeUnset(what.into())),
            Some(Kind::Scalar(s)) => {
                if !matches!(Scalar::try_from(*s), Ok(k) if k != Scalar::Unspecified) {
                    self.push(
                        site,
                        IssueKind::BadType(what.into(), format!("scalar kind {s}")),
                    );
                }
            }
            Some(Kind::Tensor(t)) => {
                if t.elem != ElemType::Float32 as i32 {
                    let kind =
                        IssueKind::BadType(what.into(), format!("tensor element type {}", t.elem));
                    self.push(site, kind);
                }
            }
            Some(Kind::Chan(t)) | Some(Kind::List(t)) => self.check_type(site, what, t),
            Some(Kind::StructName(s)) => {
                if !self.structs.contains_key(s.as_str()) {
                    self.push(site, IssueKind::UnknownStruct(what.into(), s.clone()));
                }
            }
        }
    }
}
