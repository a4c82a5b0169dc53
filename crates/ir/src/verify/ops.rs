//! Per-op checks against the registry: the op type exists, its device is
//! well formed, every slot is known, listed once and bound to the right number
//! of variables, each variable is in scope (own block or an ancestor; across a
//! `go` boundary only if the `go` op captures it) and has the slot's type, and
//! attributes are known, unique, of the right kind and present when required.
//! The bound slots are then handed to `rules` (type relations) and `flow`.

use std::collections::HashMap;

use super::{flow, rules, Ctx, IssueKind, Owner, Site};
use crate::pb::{attr, OpDesc, OpVar, Type};
use crate::registry::{lookup, Arity, AttrKind, SlotSpec, Ty};

/// One variable bound to a slot; `ty` is None for `_` and unresolved names.
#[derive(Clone, Copy, Debug)]
pub(super) struct Arg<'p> {
    pub name: &'p str,
    pub ty: Option<&'p Type>,
}

/// An op's slots and attributes after the registry checks.
#[derive(Default)]
pub(super) struct Bound<'p> {
    pub inputs: Small<Vec<Arg<'p>>>,
    pub outputs: Small<Vec<Arg<'p>>>,
    pub attrs: Small<&'p attr::Value>,
}

/// A map from registry names to values for one op: an op has a handful of
/// slots and attributes, so a list searched in order beats hashing (the
/// verifier makes three of these per op).
pub(super) struct Small<V>(Vec<(&'static str, V)>);

impl<V> Default for Small<V> {
    fn default() -> Self {
        Small(Vec::new())
    }
}

impl<V> Small<V> {
    pub fn get(&self, k: &str) -> Option<&V> {
        self.0.iter().find(|(n, _)| *n == k).map(|(_, v)| v)
    }
    pub fn contains_key(&self, k: &str) -> bool {
        self.get(k).is_some()
    }
    /// Adds `k` (the callers check it is not there yet).
    pub fn insert(&mut self, k: &'static str, v: V) {
        self.0.push((k, v));
    }
}

impl<'p> Bound<'p> {
    /// The variables bound to input `slot` (empty when absent).
    pub fn ins(&self, slot: &str) -> &[Arg<'p>] {
        self.inputs.get(slot).map_or(&[], |v| v.as_slice())
    }
    /// The variables bound to output `slot` (empty when absent).
    pub fn outs(&self, slot: &str) -> &[Arg<'p>] {
        self.outputs.get(slot).map_or(&[], |v| v.as_slice())
    }
    /// The single input of `slot`, when bound and typed.
    pub fn input(&self, slot: &str) -> Option<(&'p str, &'p Type)> {
        let a = self.ins(slot).first()?;
        Some((a.name, a.ty?))
    }
    /// The single output of `slot`, when bound (not `_`) and typed.
    pub fn output(&self, slot: &str) -> Option<(&'p str, &'p Type)> {
        let a = self.outs(slot).first()?;
        Some((a.name, a.ty?))
    }
    /// A string attribute.
    pub fn attr_str(&self, name: &str) -> Option<&'p str> {
        match self.attrs.get(name) {
            Some(attr::Value::S(s)) => Some(s),
            _ => None,
        }
    }
}

/// The names in scope at a block, kept along the tour of the block forest
/// (`Ctx::check_ops`): each name's nearest declaring block on the path from
/// the root, with an undo list to restore the outer declarations when a
/// block is left; and the `go` ops that own blocks on the path, with those
/// blocks' depths.
#[derive(Default)]
pub(super) struct Scope<'p> {
    names: HashMap<&'p str, usize>,
    undo: Vec<(&'p str, Option<usize>)>,
    marks: Vec<usize>,
    gos: Vec<(u32, usize, usize)>,
}

impl<'p> Scope<'p> {
    pub fn enter(&mut self, cx: &Ctx<'p>, b: usize) {
        self.marks.push(self.undo.len());
        for name in cx.vars[b].keys() {
            let outer = self.names.insert(name, b);
            self.undo.push((name, outer));
        }
        if let Some(go) = go_owner(cx, b) {
            self.gos.push((cx.depth[b], go.0, go.1));
        }
    }

    pub fn leave(&mut self, cx: &Ctx<'p>, b: usize) {
        let mark = self.marks.pop().unwrap_or(0);
        while self.undo.len() > mark {
            let Some((name, outer)) = self.undo.pop() else {
                break;
            };
            match outer {
                Some(o) => self.names.insert(name, o),
                None => self.names.remove(name),
            };
        }
        if go_owner(cx, b).is_some() {
            self.gos.pop();
        }
    }

    /// The nearest block on the path (the current one included) that
    /// declares `name`.
    pub fn declared(&self, name: &str) -> Option<usize> {
        self.names.get(name).copied()
    }
}

/// The `go` op owning block `b`, if a `go` op owns it.
fn go_owner(cx: &Ctx<'_>, b: usize) -> Option<(usize, usize)> {
    match cx.owner[b] {
        Some(Owner::Op { block, op }) if cx.p.blocks[block].ops[op].r#type == "go" => {
            Some((block, op))
        }
        _ => None,
    }
}

pub(super) fn check_op<'p>(
    cx: &mut Ctx<'p>,
    scope: &Scope<'p>,
    b: usize,
    k: usize,
    op: &'p OpDesc,
) {
    let site = Site::Op {
        block: b as i32,
        op: k,
        ty: op.r#type.clone(),
    };
    let Some(spec) = lookup(&op.r#type) else {
        cx.push(site, IssueKind::UnknownOp(op.r#type.clone()));
        return;
    };
    if !valid_device(&op.device) {
        cx.push(site.clone(), IssueKind::BadDevice(op.device.clone()));
    }
    let mut bound = Bound::default();
    bind_slots(
        cx,
        scope,
        &site,
        "input",
        spec.inputs,
        &op.inputs,
        &mut bound.inputs,
    );
    bind_slots(
        cx,
        scope,
        &site,
        "output",
        spec.outputs,
        &op.outputs,
        &mut bound.outputs,
    );
    for a in &op.attrs {
        let Some(aspec) = spec.attr(&a.name) else {
            cx.push(site.clone(), IssueKind::UnknownAttr(a.name.clone()));
            continue;
        };
        if bound.attrs.contains_key(aspec.name) {
            cx.push(site.clone(), IssueKind::DuplicateAttr(a.name.clone()));
            continue;
        }
        let Some(value) = a.value.as_ref().filter(|v| kind_fits(aspec.kind, v)) else {
            let kind = IssueKind::AttrKind {
                name: a.name.clone(),
                expected: aspec.kind.to_string(),
                got: value_kind(a.value.as_ref()).into(),
            };
            cx.push(site.clone(), kind);
            continue;
        };
        if let attr::Value::Type(t) = value {
            cx.check_type(|| (site.clone(), format!("attribute {:?}", a.name)), t);
        }
        bound.attrs.insert(aspec.name, value);
    }
    for aspec in spec.attrs {
        if aspec.required && !op.attrs.iter().any(|a| a.name == aspec.name) {
            cx.push(site.clone(), IssueKind::MissingAttr(aspec.name));
        }
    }
    rules::check(cx, &site, spec.name, &bound);
    flow::check(cx, &site, b, spec.name, &bound);
}

fn bind_slots<'p>(
    cx: &mut Ctx<'p>,
    scope: &Scope<'p>,
    site: &Site,
    dir: &'static str,
    specs: &'static [SlotSpec],
    given: &'p [OpVar],
    out: &mut Small<Vec<Arg<'p>>>,
) {
    for ov in given {
        let Some(spec) = specs.iter().find(|s| s.name == ov.slot) else {
            let kind = IssueKind::UnknownSlot {
                dir,
                slot: ov.slot.clone(),
            };
            cx.push(site.clone(), kind);
            continue;
        };
        if out.contains_key(spec.name) {
            let kind = IssueKind::DuplicateSlot {
                dir,
                slot: ov.slot.clone(),
            };
            cx.push(site.clone(), kind);
            continue;
        }
        let takes = match spec.arity {
            Arity::Required if ov.args.len() != 1 => Some("one variable"),
            Arity::Optional if ov.args.len() > 1 => Some("at most one variable"),
            _ => None,
        };
        if let Some(takes) = takes {
            let kind = IssueKind::SlotArity {
                slot: spec.name,
                takes,
                got: ov.args.len(),
            };
            cx.push(site.clone(), kind);
        }
        let mut args = Vec::with_capacity(ov.args.len());
        for name in &ov.args {
            let discard = dir == "output" && name == "_";
            if name.is_empty() || (name == "_" && !discard) {
                cx.push(
                    site.clone(),
                    IssueKind::NotAVariable(spec.name, name.clone()),
                );
                args.push(Arg { name, ty: None });
                continue;
            }
            let ty = if discard {
                None
            } else {
                resolve(cx, scope, site, name)
            };
            if let Some(t) = ty {
                check_slot_type(cx, site, spec, name, t);
            }
            args.push(Arg { name, ty });
        }
        out.insert(spec.name, args);
    }
    for spec in specs {
        if spec.arity == Arity::Required && !out.contains_key(spec.name) {
            let kind = match dir {
                "input" => IssueKind::MissingInput(spec.name),
                _ => IssueKind::MissingOutput(spec.name),
            };
            cx.push(site.clone(), kind);
        }
    }
}

/// The type of variable `name` as seen from the block `scope` is at (the
/// nearest declaration in it or an ancestor), reporting it when it is
/// undeclared or declared outside a `go` block that does not capture it.
fn resolve<'p>(cx: &mut Ctx<'p>, scope: &Scope<'p>, site: &Site, name: &str) -> Option<&'p Type> {
    let Some(d) = scope.declared(name) else {
        cx.push(site.clone(), IssueKind::Undeclared(name.into()));
        return None;
    };
    let ty = cx.vars[d].get(name).and_then(|v| v.r#type.as_ref());
    // The go blocks between the use and the declaration, nearest first.
    for &(depth, gb, gk) in scope.gos.iter().rev() {
        if depth <= cx.depth[d] {
            break;
        }
        let go: &OpDesc = &cx.p.blocks[gb].ops[gk];
        let captured = go
            .inputs
            .iter()
            .filter(|s| s.slot == "Captures")
            .any(|s| s.args.iter().any(|a| a == name));
        if !captured {
            let kind = IssueKind::NotCaptured {
                var: name.into(),
                go_block: gb as i32,
                go_op: gk,
            };
            cx.push(site.clone(), kind);
        }
    }
    ty
}

fn check_slot_type(cx: &mut Ctx<'_>, site: &Site, spec: &SlotSpec, name: &str, t: &Type) {
    if ty_fits(spec.ty, t) {
        return;
    }
    let kind = if spec.ty == Ty::Chan {
        IssueKind::NotChan {
            slot: spec.name,
            var: name.into(),
            got: t.to_string(),
        }
    } else {
        IssueKind::SlotType {
            slot: spec.name,
            expected: spec.ty.to_string(),
            var: name.into(),
            got: t.to_string(),
        }
    };
    cx.push(site.clone(), kind);
}

/// Whether a type satisfies a slot's type constraint.
pub(super) fn ty_fits(ty: Ty, t: &Type) -> bool {
    let list_of = |f: fn(&Type) -> bool| t.list_elem().is_some_and(f);
    match ty {
        Ty::Any => true,
        Ty::Int => t.is_int(),
        Ty::Float => t.is_float(),
        Ty::Bool => t.is_bool(),
        Ty::Str => t.is_string(),
        Ty::Num => t.is_int() || t.is_float(),
        Ty::Tensor => t.is_tensor(),
        Ty::Chan => t.chan_elem().is_some(),
        Ty::List => t.list_elem().is_some(),
        Ty::IntList => list_of(Type::is_int),
        Ty::FloatList => list_of(Type::is_float),
        Ty::StrList => list_of(Type::is_string),
        Ty::Struct => t.struct_name().is_some(),
        Ty::Map => t.map_kv().is_some(),
        Ty::Func => t.func_type().is_some(),
        Ty::Comm => t.is_comm(),
        Ty::CommList => list_of(Type::is_comm),
    }
}

fn kind_fits(kind: AttrKind, v: &attr::Value) -> bool {
    use attr::Value as V;
    matches!(
        (kind, v),
        (AttrKind::Int, V::I(_))
            | (AttrKind::Float, V::F(_))
            | (AttrKind::Str, V::S(_))
            | (AttrKind::Bool, V::B(_))
            | (AttrKind::Ints, V::Ints(_))
            | (AttrKind::Block, V::Block(_))
            | (AttrKind::Blocks, V::Blocks(_))
            | (AttrKind::Type, V::Type(_))
            | (
                AttrKind::Literal,
                V::I(_) | V::F(_) | V::S(_) | V::B(_) | V::Raw(_)
            )
    )
}

/// The kind name of an attribute value, as the registry writes kinds.
pub(crate) fn value_kind(v: Option<&attr::Value>) -> &'static str {
    use attr::Value as V;
    match v {
        None => "no value",
        Some(V::I(_)) => "i",
        Some(V::F(_)) => "f",
        Some(V::S(_)) => "s",
        Some(V::B(_)) => "b",
        Some(V::Ints(_)) => "ints",
        Some(V::Floats(_)) => "floats",
        Some(V::Strings(_)) => "strings",
        Some(V::Bools(_)) => "bools",
        Some(V::Block(_)) => "blk",
        Some(V::Blocks(_)) => "blks",
        Some(V::Type(_)) => "ty",
        Some(V::Raw(_)) => "raw",
    }
}

/// `""`, `cpu` or `cuda:N`.
pub(crate) fn valid_device(d: &str) -> bool {
    match d.strip_prefix("cuda:") {
        Some(n) => !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()),
        None => d.is_empty() || d == "cpu",
    }
}
