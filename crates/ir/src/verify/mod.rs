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
    /// The block forest (by `parent`, cycles broken) in depth-first order:
    /// every block entered once, its subtree, then left (`Tour`).
    tour: Vec<Tour>,
    /// Each block's entry and exit position in `tour`: `a` is an ancestor
    /// of `b` (or `b`) exactly when `a`'s interval holds `b`'s.
    span: Vec<(u32, u32)>,
    /// Each block's depth in the forest (a root is 0).
    depth: Vec<u32>,
    /// What the walk up from each block meets (`flow`).
    up: flow::Up,
}

/// A step of the depth-first tour of the block forest.
#[derive(Clone, Copy, Debug)]
enum Tour {
    Enter(usize),
    Leave(usize),
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
            tour: Vec::new(),
            span: Vec::new(),
            depth: Vec::new(),
            up: flow::Up::default(),
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
        self.make_tour();
        self.check_structs();
        self.check_functions();
        self.check_ownership();
        self.check_vars();
        self.check_ops();
    }

    /// Checks every op. Ops are visited block by block along the tour, so
    /// that the names in scope are a map kept up to date on the way down
    /// and up (`ops::Scope`): resolving a name costs O(1) however deep the
    /// blocks nest. The issues are then put back in block and op order.
    fn check_ops(&mut self) {
        let first = self.issues.len();
        let mut segments: Vec<(usize, usize, std::ops::Range<usize>)> = Vec::new();
        let mut scope = ops::Scope::default();
        self.up = flow::Up::new(self);
        let tour = std::mem::take(&mut self.tour);
        for step in &tour {
            match *step {
                Tour::Enter(b) => {
                    scope.enter(self, b);
                    for (k, op) in self.p.blocks[b].ops.iter().enumerate() {
                        let from = self.issues.len();
                        ops::check_op(self, &scope, b, k, op);
                        if self.issues.len() > from {
                            segments.push((b, k, from..self.issues.len()));
                        }
                    }
                }
                Tour::Leave(b) => scope.leave(self, b),
            }
        }
        self.tour = tour;
        segments.sort_by_key(|&(b, k, _)| (b, k));
        let mut found: Vec<Option<Issue>> = self.issues.drain(first..).map(Some).collect();
        for (_, _, range) in segments {
            for i in range {
                if let Some(issue) = found[i - first].take() {
                    self.issues.push(issue);
                }
            }
        }
    }

    /// Whether `a` is `b` or an ancestor of `b` (by `parent`, cycles broken).
    fn encloses(&self, a: usize, b: usize) -> bool {
        let (ea, la) = self.span[a];
        let (eb, lb) = self.span[b];
        ea <= eb && lb <= la
    }

    /// The depth-first tour of the block forest (roots: blocks without a
    /// parent), without recursion; also each block's interval and depth.
    fn make_tour(&mut self) {
        let n = self.p.blocks.len();
        // Each block's children, in index order: `kids[first[p]..first[p + 1]]`.
        let mut first = vec![0usize; n + 1];
        for p in self.parent.iter().flatten() {
            first[p + 1] += 1;
        }
        for i in 0..n {
            first[i + 1] += first[i];
        }
        let mut kids = vec![0usize; first[n]];
        let mut fill = first.clone();
        for (b, p) in self.parent.iter().enumerate() {
            if let Some(p) = *p {
                kids[fill[p]] = b;
                fill[p] += 1;
            }
        }
        self.tour = Vec::with_capacity(2 * n);
        self.span = vec![(0, 0); n];
        self.depth = vec![0; n];
        let mut stack: Vec<Tour> = Vec::new();
        for root in (0..n).filter(|&b| self.parent[b].is_none()) {
            stack.push(Tour::Enter(root));
            while let Some(step) = stack.pop() {
                let at = self.tour.len() as u32;
                self.tour.push(step);
                match step {
                    Tour::Enter(b) => {
                        self.span[b].0 = at;
                        stack.push(Tour::Leave(b));
                        for &c in kids[first[b]..first[b + 1]].iter().rev() {
                            self.depth[c] = self.depth[b] + 1;
                            stack.push(Tour::Enter(c));
                        }
                    }
                    Tour::Leave(b) => self.span[b].1 = at,
                }
            }
        }
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
        // Each block follows one parent, so the cycles are found in one
        // pass: walk up from each block not yet seen, marking the walk; a
        // walk that meets itself has found a cycle.
        let mut walk_of = vec![usize::MAX; n];
        let mut on_cycle = vec![false; n];
        let mut cycle_heads = Vec::new();
        for i in 1..n {
            let mut cur = Some(i);
            while let Some(c) = cur {
                if walk_of[c] != usize::MAX {
                    if walk_of[c] == i {
                        // `c` is on a new cycle: mark it round.
                        let mut head = c;
                        let mut m = c;
                        loop {
                            on_cycle[m] = true;
                            head = head.min(m);
                            m = self.parent[m].unwrap_or(c);
                            if m == c {
                                break;
                            }
                        }
                        cycle_heads.push(head);
                    }
                    break;
                }
                walk_of[c] = i;
                cur = self.parent[c];
            }
        }
        for (i, _) in on_cycle.iter().enumerate().filter(|(_, &c)| c) {
            self.push(Site::Block(i as i32), IssueKind::ParentCycle);
        }
        // Break cycles so later walks see finite chains: each cycle loses
        // the parent of its lowest block.
        for h in cycle_heads {
            self.parent[h] = None;
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
                let at = || (site, format!("field {:?}", f.name));
                self.check_type_opt(at, f.r#type.as_ref());
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
                let at = || (site.clone(), format!("parameter {:?}", prm.name));
                self.check_type_opt(at, prm.r#type.as_ref());
            }
            if let Some(r) = &f.result {
                self.check_type(|| (site.clone(), "result".into()), r);
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
        if self.encloses(t, b) {
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
                let at = || (site.clone(), format!("variable {:?}", v.name));
                self.check_type_opt(at, v.r#type.as_ref());
            }
        }
        // A name declared in a block and in one of its ancestors (other
        // than the root): along the tour, each name's declaring blocks
        // on the way down, nearest last.
        let mut shadows: Vec<(usize, usize, usize)> = Vec::new();
        let mut scope = ops::Scope::default();
        for step in &self.tour {
            match *step {
                Tour::Enter(b) => {
                    for (j, v) in self.p.blocks[b].vars.iter().enumerate() {
                        // The root is the top of its tree: nothing above it
                        // declares the name when the nearest is the root.
                        match scope.declared(&v.name) {
                            Some(o) if o != 0 => shadows.push((b, j, o)),
                            _ => {}
                        }
                    }
                    scope.enter(self, b);
                }
                Tour::Leave(b) => scope.leave(self, b),
            }
        }
        shadows.sort_unstable();
        for (b, j, o) in shadows {
            let kind = IssueKind::Shadow {
                name: self.p.blocks[b].vars[j].name.clone(),
                outer: o as i32,
            };
            self.push(Site::Block(b as i32), kind);
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

    /// `check_type` of a type that must be set. `at` names the place for
    /// an issue (made only when there is one: most types are fine).
    fn check_type_opt(&mut self, at: impl FnOnce() -> (Site, String), ty: Option<&Type>) {
        match ty {
            Some(t) => self.check_type(at, t),
            None => {
                let (site, what) = at();
                self.push(site, IssueKind::TypeUnset(what));
            }
        }
    }

    /// `check_type_opt` of a type inside a map or func type (not generic,
    /// so that the recursion instantiates finitely many functions).
    fn check_inner_type(&mut self, site: &Site, what: &str, ty: Option<&Type>) {
        self.check_type_opt(|| (site.clone(), what.to_string()), ty);
    }

    /// Checks that a type (and every type inside it) is well formed and
    /// nests at most `MAX_TYPE_NESTING` levels of list and chan (in a loop:
    /// a program built in memory may nest types any depth).
    pub(super) fn check_type(&mut self, at: impl FnOnce() -> (Site, String), ty: &Type) {
        let mut ty = ty;
        let mut nesting = 0;
        while let Some(Kind::Chan(t) | Kind::List(t)) = &ty.kind {
            nesting += 1;
            if nesting > crate::MAX_TYPE_NESTING {
                let (site, what) = at();
                return self.push(site, IssueKind::TypeTooDeep(what));
            }
            ty = t;
        }
        let kind = match &ty.kind {
            None => |what| IssueKind::TypeUnset(what),
            Some(Kind::Scalar(s)) => {
                if matches!(Scalar::try_from(*s), Ok(k) if k != Scalar::Unspecified) {
                    return;
                }
                let (site, what) = at();
                return self.push(site, IssueKind::BadType(what, format!("scalar kind {s}")));
            }
            Some(Kind::Tensor(t)) => {
                if t.elem == ElemType::Float32 as i32 {
                    return;
                }
                let (site, what) = at();
                let kind = IssueKind::BadType(what, format!("tensor element type {}", t.elem));
                return self.push(site, kind);
            }
            Some(Kind::Chan(_)) | Some(Kind::List(_)) | Some(Kind::Comm(_)) => return,
            Some(Kind::Map(m)) => {
                // The decoder bounds nesting, so this recursion is bounded.
                let (site, what) = at();
                for (part, t) in [("key", &m.key), ("value", &m.value)] {
                    self.check_inner_type(&site, &format!("{what} ({part})"), t.as_deref());
                }
                return;
            }
            Some(Kind::Func(ft)) => {
                let (site, what) = at();
                for p in &ft.params {
                    self.check_inner_type(&site, &format!("{what} (parameter)"), Some(p));
                }
                if let Some(r) = &ft.result {
                    self.check_inner_type(&site, &format!("{what} (result)"), Some(r));
                }
                return;
            }
            Some(Kind::StructName(s)) => {
                if self.structs.contains_key(s.as_str()) {
                    return;
                }
                let (site, what) = at();
                return self.push(site, IssueKind::UnknownStruct(what, s.clone()));
            }
        };
        let (site, what) = at();
        self.push(site, kind(what));
    }
}
