//! Builtin functions (docs/language.md, "Builtins", "Tensors" and
//! "Collectives") and call checking.
//!
//! Most builtins have a fixed signature (`fixed_sig`); the rest (`print`,
//! `len`, `cap`, `append`, conversions, `make`, `close`, `after`, `sleep`,
//! `get`, `to`, and the collectives whose value may be of several types)
//! are checked by hand. Builtin names are predeclared and may be
//! shadowed by variables or functions, so they are resolved last.

use super::expr::Operand;
use super::{CheckError, Checker, Context, Res};
use crate::ast::*;
use crate::types::{comparable, Ty};

macro_rules! builtins {
    ($($v:ident = $n:literal,)*) => {
        /// A predeclared function; `name()` is also its IR op type.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Builtin { $($v,)* }

        impl Builtin {
            pub const ALL: &'static [Builtin] = &[$(Builtin::$v,)*];

            pub fn name(self) -> &'static str {
                match self { $(Builtin::$v => $n,)* }
            }

            pub fn from_name(name: &str) -> Option<Builtin> {
                match name { $($n => Some(Builtin::$v),)* _ => None }
            }
        }
    };
}

builtins! {
    Print = "print", Len = "len", Cap = "cap", Append = "append", Str = "str", Int = "int",
    Float = "float", Panic = "panic", Assert = "assert", Now = "now", Args = "args", Exit = "exit",
    Rand = "rand", Perm = "perm", Make = "make", Close = "close", After = "after", Sleep = "sleep",
    Zeros = "zeros", Ones = "ones", Full = "full", Randn = "randn", TensorFrom = "tensor_from",
    Shape = "shape", Numel = "numel", Matmul = "matmul", Transpose = "transpose", Relu = "relu",
    ReluMask = "relu_mask", Exp = "exp", Log = "log", Softmax = "softmax", Sum = "sum",
    SumRows = "sum_rows", Mean = "mean", ArgmaxRows = "argmax_rows", Onehot = "onehot",
    Rows = "rows", Gather = "gather", Get = "get", Devices = "devices", Device = "device",
    To = "to", LoadDataset = "load_dataset", Delete = "delete",
    Group = "group", World = "world", Rank = "rank", Size = "size",
    AllreduceSum = "allreduce_sum", AllreduceMax = "allreduce_max",
    AllreduceMin = "allreduce_min", AllreduceProd = "allreduce_prod",
    Broadcast = "broadcast", Allgather = "allgather", Barrier = "barrier",
    Abs = "abs", Min = "min", Max = "max", Sqrt = "sqrt", Pow = "pow", Floor = "floor",
    Ceil = "ceil", Inf = "inf", Nan = "nan", IsNan = "is_nan", Split = "split",
    Fields = "fields", Join = "join", Contains = "contains", Index = "index",
    HasPrefix = "has_prefix", HasSuffix = "has_suffix", Replace = "replace", Trim = "trim",
    Lower = "lower", Upper = "upper", Repeat = "repeat", Chr = "chr", Sprintf = "sprintf",
    Sort = "sort", Reverse = "reverse", Tick = "tick", Lines = "lines", ReadFile = "read_file",
    WriteFile = "write_file", AppendFile = "append_file", Exists = "exists", Env = "env",
    LoadCsv = "load_csv", LoadNpy = "load_npy", SaveNpy = "save_npy", Values = "values",
    Here = "here",
    SortBy = "sort_by",
}

impl Builtin {
    /// Whether a call may stand alone as a statement (Go forbids discarding
    /// the result of `len`, `append`, conversions and the like).
    pub fn may_be_statement(self) -> bool {
        !matches!(
            self,
            Builtin::Len
                | Builtin::Cap
                | Builtin::Append
                | Builtin::Str
                | Builtin::Int
                | Builtin::Float
                | Builtin::Make
                | Builtin::Min
                | Builtin::Max
                | Builtin::Sort
                | Builtin::SortBy
                | Builtin::Reverse
        )
    }

    /// Parameter and result types of builtins with a fixed signature.
    fn fixed_sig(self) -> Option<(Vec<Ty>, Ty)> {
        use Builtin::*;
        let shape = || Ty::list(Ty::Int);
        let t = || Ty::Tensor;
        Some(match self {
            Panic => (vec![Ty::Str], Ty::Void),
            Assert => (vec![Ty::Bool, Ty::Str], Ty::Void),
            Now => (vec![], Ty::Float),
            Args => (vec![], Ty::list(Ty::Str)),
            Exit => (vec![Ty::Int], Ty::Void),
            Rand => (vec![Ty::Int], Ty::Int),
            Perm => (vec![Ty::Int], Ty::list(Ty::Int)),
            Zeros | Ones => (vec![shape()], t()),
            Full => (vec![shape(), Ty::Float], t()),
            Randn => (vec![shape(), Ty::Int], t()),
            TensorFrom => (vec![Ty::list(Ty::Float), shape()], t()),
            Shape => (vec![t()], shape()),
            Numel => (vec![t()], Ty::Int),
            Matmul => (vec![t(), t()], t()),
            Transpose | Relu | ReluMask | Softmax | SumRows => (vec![t()], t()),
            Sum | Mean => (vec![t()], Ty::Float),
            ArgmaxRows => (vec![t()], Ty::list(Ty::Int)),
            Onehot => (vec![Ty::list(Ty::Int), Ty::Int], t()),
            Rows => (vec![t(), Ty::Int, Ty::Int], t()),
            Gather => (vec![t(), Ty::list(Ty::Int)], t()),
            Devices => (vec![], Ty::list(Ty::Str)),
            Device => (vec![t()], Ty::Str),
            LoadDataset => (vec![Ty::Str], Ty::Struct(0)),
            Here => (vec![], Ty::Str),
            Group => (vec![Ty::Int], Ty::list(Ty::Comm)),
            World => (vec![], Ty::Comm),
            Rank | Size => (vec![Ty::Comm], Ty::Int),
            Barrier => (vec![Ty::Comm], Ty::Void),
            Sqrt | Floor | Ceil => (vec![Ty::Float], Ty::Float),
            Pow => (vec![Ty::Float, Ty::Float], Ty::Float),
            Inf | Nan => (vec![], Ty::Float),
            IsNan => (vec![Ty::Float], Ty::Bool),
            Split => (vec![Ty::Str, Ty::Str], Ty::list(Ty::Str)),
            Fields => (vec![Ty::Str], Ty::list(Ty::Str)),
            Join => (vec![Ty::list(Ty::Str), Ty::Str], Ty::Str),
            Index => (vec![Ty::Str, Ty::Str], Ty::Int),
            HasPrefix | HasSuffix => (vec![Ty::Str, Ty::Str], Ty::Bool),
            Replace => (vec![Ty::Str, Ty::Str, Ty::Str], Ty::Str),
            Trim | Lower | Upper => (vec![Ty::Str], Ty::Str),
            Repeat => (vec![Ty::Str, Ty::Int], Ty::Str),
            Chr => (vec![Ty::Int], Ty::Str),
            Lines => (vec![Ty::Str], Ty::chan(Ty::Str)),
            ReadFile | Env => (vec![Ty::Str], Ty::Str),
            WriteFile | AppendFile => (vec![Ty::Str, Ty::Str], Ty::Void),
            Exists => (vec![Ty::Str], Ty::Bool),
            LoadCsv | LoadNpy => (vec![Ty::Str], t()),
            SaveNpy => (vec![Ty::Str, t()], Ty::Void),
            Values => (vec![t()], Ty::list(Ty::Float)),
            _ => return None,
        })
    }
}

impl<'a> Checker<'a> {
    pub(crate) fn call(&mut self, e: &Expr, func: &Expr, args: &[Expr], spread: bool) -> Operand {
        let ExprKind::Ident(name) = &func.kind else {
            // a call through a func value: `fs[i](x)`, `func(x int) {}(1)`
            let f = self.value(func);
            if let Ty::Func(sig) = &f.ty {
                let name = self.text(func.span);
                if spread {
                    self.error(e.span, CheckError::SpreadNonVariadic { name: name.clone() });
                }
                return self.call_with(e, &name, &sig.params, sig.result.clone(), args);
            }
            if !f.ty.is_invalid() {
                let err = CheckError::CallNonFunction {
                    expr: self.text(func.span),
                    ty: self.tyname(&f.ty),
                };
                self.error(func.span, err);
            }
            self.check_args_loosely(args);
            return Operand::invalid();
        };
        match self.resolve(name) {
            Some((Res::Func(id), _)) => {
                self.info.uses.insert(func.id, Res::Func(id));
                if spread {
                    self.error(e.span, CheckError::SpreadNonVariadic { name: name.clone() });
                }
                let f = self.info.funcs[id as usize].clone();
                let params: Vec<Ty> = f.params.iter().map(|(_, t)| t.clone()).collect();
                self.call_with(e, name, &params, f.result.clone(), args)
            }
            Some((Res::Var(id), Ty::Func(sig))) => {
                self.info.uses.insert(func.id, Res::Var(id));
                self.record(func, &Ty::Func(sig.clone()));
                if spread {
                    self.error(e.span, CheckError::SpreadNonVariadic { name: name.clone() });
                }
                self.call_with(e, name, &sig.params, sig.result.clone(), args)
            }
            Some((Res::Builtin(b), _)) => {
                self.info.uses.insert(func.id, Res::Builtin(b));
                if spread && b != Builtin::Append {
                    self.error(e.span, CheckError::SpreadBuiltin { name: name.clone() });
                }
                self.builtin(e, b, args, spread)
            }
            Some((Res::Var(id), ty)) => {
                self.info.uses.insert(func.id, Res::Var(id));
                if !ty.is_invalid() {
                    let err = CheckError::CallVariable {
                        name: name.clone(),
                        ty: self.tyname(&ty),
                    };
                    self.error(func.span, err);
                }
                self.check_args_loosely(args);
                Operand::invalid()
            }
            Some((Res::Const(_), _)) => {
                self.error(func.span, CheckError::CallConstant { name: name.clone() });
                self.check_args_loosely(args);
                Operand::invalid()
            }
            None => {
                let err = if self.is_struct_name(name) {
                    CheckError::ConvertToType { name: name.clone() }
                } else if name == "recover" {
                    CheckError::Recover
                } else {
                    CheckError::Undefined { name: name.clone() }
                };
                self.error(func.span, err);
                self.check_args_loosely(args);
                Operand::invalid()
            }
        }
    }

    /// A call of a function (named `name` in messages) with these
    /// parameters and result; `g(f(x))` passes f's several results.
    fn call_with(
        &mut self,
        e: &Expr,
        name: &str,
        params: &[Ty],
        result: Option<Ty>,
        args: &[Expr],
    ) -> Operand {
        let ctx = Context::Argument(name.to_string());
        if args.len() == 1 && params.len() >= 2 && super::stmt::is_multi_source(&args[0]) {
            let op = self.expr(&args[0]);
            match &op.ty {
                Ty::Tuple(ts) if ts.len() == params.len() => {
                    for (t, p) in ts.iter().zip(params) {
                        self.must_fit(&args[0], t, p, &ctx);
                    }
                }
                Ty::Tuple(ts) => {
                    self.arity(e, name, ts.len(), params.len());
                }
                Ty::Invalid => {}
                Ty::Void => {
                    let err = CheckError::NoValue {
                        expr: self.text(args[0].span),
                    };
                    self.error(args[0].span, err);
                }
                _ => {
                    self.arity(e, name, 1, params.len());
                }
            }
        } else {
            self.arity(e, name, args.len(), params.len());
            for (i, a) in args.iter().enumerate() {
                match params.get(i) {
                    Some(t) => {
                        self.value_to(a, t, &ctx);
                    }
                    None => {
                        self.value(a);
                    }
                }
            }
        }
        Operand {
            ty: result.unwrap_or(Ty::Void),
            val: None,
        }
    }

    fn check_args_loosely(&mut self, args: &[Expr]) {
        for a in args {
            if !matches!(a.kind, ExprKind::Type(_)) {
                self.expr(a);
            }
        }
    }

    /// Reports a wrong argument count; true when it is right.
    fn arity(&mut self, e: &Expr, name: &str, have: usize, want: usize) -> bool {
        if have == want {
            return true;
        }
        let name = name.to_string();
        self.error(e.span, CheckError::ArgCount { name, have, want });
        false
    }

    fn builtin(&mut self, e: &Expr, b: Builtin, args: &[Expr], spread: bool) -> Operand {
        let name = b.name();
        let ctx = Context::Argument(name.to_string());
        if let Some((params, result)) = b.fixed_sig() {
            let ok = self.arity(e, name, args.len(), params.len());
            for (a, t) in args.iter().zip(&params) {
                self.value_to(a, t, &ctx);
            }
            for a in args.iter().skip(params.len()) {
                self.expr(a);
            }
            if b == Builtin::LoadDataset {
                self.info.uses_dataset = true;
                if self.struct_names.contains_key("Dataset") {
                    self.error(e.span, CheckError::DatasetShadowed);
                    return Operand::invalid();
                }
            }
            return if ok || result == Ty::Void {
                Operand {
                    ty: result,
                    val: None,
                }
            } else {
                Operand::invalid()
            };
        }
        match b {
            Builtin::Print => {
                for a in args {
                    let op = self.value_default(a, &ctx);
                    if op.ty == Ty::Void {
                        return Operand::invalid();
                    }
                }
                Operand {
                    ty: Ty::Void,
                    val: None,
                }
            }
            Builtin::Len | Builtin::Cap => {
                if !self.arity(e, name, args.len(), 1) {
                    self.check_args_loosely(args);
                    return Operand::invalid();
                }
                let mut op = self.value(&args[0]);
                if op.ty == Ty::UntypedStr {
                    self.convert(&args[0], &mut op, &Ty::Str, &ctx);
                }
                let ok = match (&op.ty, b) {
                    (Ty::Invalid, _) => return Operand::invalid(),
                    (Ty::Chan(_), _) => true,
                    (Ty::Str | Ty::List(_) | Ty::Map(..), Builtin::Len) => true,
                    _ => false,
                };
                if !ok {
                    let err = CheckError::BuiltinArgType {
                        expr: self.text(args[0].span),
                        ty: self.tyname(&op.ty),
                        builtin: name,
                    };
                    self.error(args[0].span, err);
                    return Operand::invalid();
                }
                Operand {
                    ty: Ty::Int,
                    val: None,
                }
            }
            Builtin::Append => {
                let Some(first) = args.first() else {
                    let err = CheckError::BuiltinArgCount {
                        name,
                        have: 0,
                        min: 1,
                        max: None,
                    };
                    self.error(e.span, err);
                    return Operand::invalid();
                };
                let lo = self.value(first);
                let elem = match &lo.ty {
                    Ty::Invalid => {
                        self.check_args_loosely(&args[1..]);
                        return Operand::invalid();
                    }
                    Ty::List(elem) => (**elem).clone(),
                    t => {
                        let err = CheckError::NotAList {
                            expr: self.text(first.span),
                            ty: self.tyname(t),
                        };
                        self.error(first.span, err);
                        self.check_args_loosely(&args[1..]);
                        return Operand::invalid();
                    }
                };
                if spread {
                    if args.len() != 2 {
                        self.error(e.span, CheckError::SpreadNotFinal);
                        return Operand::invalid();
                    }
                    self.value_to(&args[1], &lo.ty, &ctx);
                } else {
                    for a in &args[1..] {
                        self.value_to(a, &elem, &ctx);
                    }
                }
                Operand {
                    ty: lo.ty,
                    val: None,
                }
            }
            Builtin::Str | Builtin::Int | Builtin::Float => {
                if !self.arity(e, name, args.len(), 1) {
                    self.check_args_loosely(args);
                    return Operand::invalid();
                }
                let op = self.value_default(&args[0], &ctx);
                let ok = match (b, &op.ty) {
                    (_, Ty::Invalid) => return Operand::invalid(),
                    (Builtin::Str, t) => *t != Ty::Void,
                    (_, t) => matches!(t, Ty::Int | Ty::Float | Ty::Str),
                };
                let ty = match b {
                    Builtin::Str => Ty::Str,
                    Builtin::Int => Ty::Int,
                    _ => Ty::Float,
                };
                if !ok {
                    let err = CheckError::CannotConvert {
                        expr: self.text(args[0].span),
                        ty: self.tyname(&op.ty),
                        target: self.tyname(&ty),
                    };
                    self.error(args[0].span, err);
                    return Operand::invalid();
                }
                Operand { ty, val: None }
            }
            Builtin::Make => {
                let Some(first) = args.first() else {
                    let err = CheckError::BuiltinArgCount {
                        name,
                        have: 0,
                        min: 1,
                        max: Some(2),
                    };
                    self.error(e.span, err);
                    return Operand::invalid();
                };
                let ty = match &first.kind {
                    ExprKind::Type(t) => self.resolve_type(t),
                    _ => {
                        let err = CheckError::MakeNotAType {
                            expr: self.text(first.span),
                        };
                        self.error(first.span, err);
                        Ty::Invalid
                    }
                };
                self.record(first, &ty);
                if args.len() > 2 {
                    let err = CheckError::BuiltinArgCount {
                        name,
                        have: args.len(),
                        min: 1,
                        max: Some(2),
                    };
                    self.error(e.span, err);
                }
                if let Some(n) = args.get(1) {
                    self.value_to(n, &Ty::Int, &ctx);
                }
                match ty {
                    Ty::Chan(_) | Ty::Map(..) => Operand { ty, val: None },
                    Ty::List(_) if args.len() < 2 => {
                        let err = CheckError::BuiltinArgCount {
                            name,
                            have: args.len(),
                            min: 2,
                            max: Some(2),
                        };
                        self.error(e.span, err);
                        Operand::invalid()
                    }
                    Ty::List(_) => Operand { ty, val: None },
                    Ty::Invalid => Operand::invalid(),
                    t => {
                        let err = CheckError::CannotMake {
                            ty: self.tyname(&t),
                        };
                        self.error(first.span, err);
                        Operand::invalid()
                    }
                }
            }
            Builtin::Close => {
                if !self.arity(e, name, args.len(), 1) {
                    self.check_args_loosely(args);
                    return Operand {
                        ty: Ty::Void,
                        val: None,
                    };
                }
                let op = self.value(&args[0]);
                if !matches!(op.ty, Ty::Chan(_) | Ty::Invalid) {
                    let err = CheckError::CloseNonChan {
                        expr: self.text(args[0].span),
                        ty: self.tyname(&op.ty),
                    };
                    self.error(args[0].span, err);
                }
                Operand {
                    ty: Ty::Void,
                    val: None,
                }
            }
            Builtin::After | Builtin::Sleep | Builtin::Tick => {
                let result = if b != Builtin::Sleep {
                    Ty::chan(Ty::Int)
                } else {
                    Ty::Void
                };
                if !self.arity(e, name, args.len(), 1) {
                    self.check_args_loosely(args);
                    return Operand {
                        ty: result,
                        val: None,
                    };
                }
                let op = self.value_default(&args[0], &ctx);
                if !matches!(op.ty, Ty::Int | Ty::Float | Ty::Invalid) {
                    let err = CheckError::BadMilliseconds {
                        expr: self.text(args[0].span),
                        ty: self.tyname(&op.ty),
                        builtin: name,
                    };
                    self.error(args[0].span, err);
                }
                Operand {
                    ty: result,
                    val: None,
                }
            }
            Builtin::To => {
                // `to(t, dev)`, or `to(t)`: to this task's device.
                if args.is_empty() || args.len() > 2 {
                    let err = CheckError::BuiltinArgCount {
                        name,
                        have: args.len(),
                        min: 1,
                        max: Some(2),
                    };
                    self.error(e.span, err);
                    self.check_args_loosely(args);
                    return Operand::invalid();
                }
                self.value_to(&args[0], &Ty::Tensor, &ctx);
                if let Some(d) = args.get(1) {
                    self.value_to(d, &Ty::Str, &ctx);
                }
                Operand::of(Ty::Tensor)
            }
            Builtin::Delete => {
                if !self.arity(e, name, args.len(), 2) {
                    self.check_args_loosely(args);
                    return Operand::of(Ty::Void);
                }
                let m = self.value(&args[0]);
                match &m.ty {
                    Ty::Map(k, _) => {
                        self.value_to(&args[1], k, &ctx);
                    }
                    Ty::Invalid => {
                        self.value(&args[1]);
                    }
                    t => {
                        let err = CheckError::BuiltinArgType {
                            expr: self.text(args[0].span),
                            ty: self.tyname(t),
                            builtin: name,
                        };
                        self.error(args[0].span, err);
                        self.value(&args[1]);
                    }
                }
                Operand::of(Ty::Void)
            }
            Builtin::Get => {
                let Some(first) = args.first() else {
                    let err = CheckError::BuiltinArgCount {
                        name,
                        have: 0,
                        min: 1,
                        max: None,
                    };
                    self.error(e.span, err);
                    return Operand::invalid();
                };
                self.value_to(first, &Ty::Tensor, &ctx);
                for a in &args[1..] {
                    self.value_to(a, &Ty::Int, &ctx);
                }
                Operand {
                    ty: Ty::Float,
                    val: None,
                }
            }
            Builtin::AllreduceSum
            | Builtin::AllreduceMax
            | Builtin::AllreduceMin
            | Builtin::AllreduceProd
            | Builtin::Broadcast
            | Builtin::Allgather => self.collective(e, b, args),
            Builtin::Abs | Builtin::Exp | Builtin::Log | Builtin::Sort | Builtin::Reverse => {
                self.builtin_one(e, b, args)
            }
            Builtin::Min | Builtin::Max => self.builtin_min_max(e, b, args),
            Builtin::Contains => self.builtin_contains(e, args),
            Builtin::SortBy => self.builtin_sort_by(e, args),
            Builtin::Sprintf => {
                let Some(first) = args.first() else {
                    let err = CheckError::BuiltinArgCount {
                        name,
                        have: 0,
                        min: 1,
                        max: None,
                    };
                    self.error(e.span, err);
                    return Operand::invalid();
                };
                self.value_to(first, &Ty::Str, &ctx);
                for a in &args[1..] {
                    self.value_default(a, &ctx);
                }
                Operand {
                    ty: Ty::Str,
                    val: None,
                }
            }
            _ => Operand::invalid(),
        }
    }

    /// `allreduce_*(c, x)` (x an int, float, tensor or list of tensors),
    /// `broadcast(c, x, root)` and `allgather(c, x)` (x of any type). An
    /// untyped constant `x` takes its default type; the result has x's
    /// type (a list of it for `allgather`).
    fn collective(&mut self, e: &Expr, b: Builtin, args: &[Expr]) -> Operand {
        let name = b.name();
        let ctx = Context::Argument(name.to_string());
        let want = if b == Builtin::Broadcast { 3 } else { 2 };
        if !self.arity(e, name, args.len(), want) {
            self.check_args_loosely(args);
            return Operand::invalid();
        }
        self.value_to(&args[0], &Ty::Comm, &ctx);
        let x = self.value_default(&args[1], &ctx);
        if let Some(root) = args.get(2) {
            self.value_to(root, &Ty::Int, &ctx);
        }
        let reduction = !matches!(b, Builtin::Broadcast | Builtin::Allgather);
        let ty = match x.ty {
            Ty::Invalid => return Operand::invalid(),
            Ty::Int | Ty::Float | Ty::Tensor => x.ty,
            // A list of tensors: a bucketed all-reduce, every tensor
            // reduced elementwise in one rendezvous.
            Ty::List(e) if reduction && *e == Ty::Tensor => Ty::List(e),
            t if reduction => {
                let err = CheckError::ReduceArgType {
                    expr: self.text(args[1].span),
                    ty: self.tyname(&t),
                    builtin: name,
                };
                self.error(args[1].span, err);
                return Operand::invalid();
            }
            t => t,
        };
        let ty = if b == Builtin::Allgather {
            Ty::list(ty)
        } else {
            ty
        };
        Operand { ty, val: None }
    }

    /// `BuiltinArgType` for argument `a` of type `ty`.
    fn bad_builtin_arg(&mut self, a: &Expr, ty: &Ty, builtin: &'static str) -> Operand {
        if !ty.is_invalid() {
            let err = CheckError::BuiltinArgType {
                expr: self.text(a.span),
                ty: self.tyname(ty),
                builtin,
            };
            self.error(a.span, err);
        }
        Operand::invalid()
    }

    /// The builtins of one argument whose result type follows it: `abs`
    /// (int or float), `exp` and `log` (float or tensor), `sort` (a list of
    /// ints, floats or strings), `reverse` (any list).
    fn builtin_one(&mut self, e: &Expr, b: Builtin, args: &[Expr]) -> Operand {
        let name = b.name();
        if !self.arity(e, name, args.len(), 1) {
            self.check_args_loosely(args);
            return Operand::invalid();
        }
        let ctx = Context::Argument(name.to_string());
        let a = &args[0];
        let mut op = self.value(a);
        if matches!(b, Builtin::Exp | Builtin::Log) && op.ty.is_numeric() {
            // Go's math.Exp(x): an untyped constant becomes a float.
            self.convert(a, &mut op, &Ty::Float, &ctx);
        } else {
            self.defaulted(a, &mut op, &ctx);
        }
        let ok = match (b, &op.ty) {
            (_, Ty::Invalid) => return Operand::invalid(),
            (Builtin::Abs, t) => matches!(t, Ty::Int | Ty::Float),
            (Builtin::Exp | Builtin::Log, t) => matches!(t, Ty::Float | Ty::Tensor),
            (Builtin::Sort, Ty::List(el)) => matches!(**el, Ty::Int | Ty::Float | Ty::Str),
            (Builtin::Reverse, Ty::List(_)) => true,
            _ => false,
        };
        if !ok {
            return self.bad_builtin_arg(a, &op.ty, name);
        }
        Operand {
            ty: op.ty,
            val: None,
        }
    }

    /// `min(a, b, ...)` and `max`: ints or floats of one type; untyped
    /// constants take the type of the typed arguments, else `float` if one
    /// of them is a float constant, else `int` (as Go's `min`).
    fn builtin_min_max(&mut self, e: &Expr, b: Builtin, args: &[Expr]) -> Operand {
        let name = b.name();
        if args.is_empty() {
            let err = CheckError::BuiltinArgCount {
                name,
                have: 0,
                min: 1,
                max: None,
            };
            self.error(e.span, err);
            return Operand::invalid();
        }
        let ctx = Context::Argument(name.to_string());
        let mut ops: Vec<Operand> = args.iter().map(|a| self.value(a)).collect();
        let mut target: Option<Ty> = None;
        let mut any_float_const = false;
        for (a, op) in args.iter().zip(&ops) {
            match &op.ty {
                Ty::Invalid => return Operand::invalid(),
                Ty::Int | Ty::Float => {
                    if target.is_none() {
                        target = Some(op.ty.clone());
                    }
                }
                Ty::UntypedFloat => any_float_const = true,
                Ty::UntypedInt => {}
                t => {
                    let t = t.clone();
                    return self.bad_builtin_arg(a, &t, name);
                }
            }
        }
        let target = target.unwrap_or(if any_float_const { Ty::Float } else { Ty::Int });
        for (a, op) in args.iter().zip(ops.iter_mut()) {
            if !self.convert(a, op, &target, &ctx) {
                return Operand::invalid();
            }
        }
        Operand {
            ty: target,
            val: None,
        }
    }

    /// `sort_by(list, less)`: `list` of any `[]T`, `less` a
    /// `func(T, T) bool`; the result is a sorted copy, a `[]T`.
    fn builtin_sort_by(&mut self, e: &Expr, args: &[Expr]) -> Operand {
        let name = "sort_by";
        if !self.arity(e, name, args.len(), 2) {
            self.check_args_loosely(args);
            return Operand::invalid();
        }
        let ctx = Context::Argument(name.to_string());
        let op = self.value_default(&args[0], &ctx);
        let el = match &op.ty {
            Ty::List(el) => (**el).clone(),
            t => {
                let t = t.clone();
                self.value(&args[1]);
                return self.bad_builtin_arg(&args[0], &t, name);
            }
        };
        let less = Ty::func(vec![el.clone(), el], Some(Ty::Bool));
        self.value_to(&args[1], &less, &ctx);
        Operand {
            ty: op.ty,
            val: None,
        }
    }

    /// `contains(s, t)` on strings, `contains(list, v)` on a list of
    /// comparable elements.
    fn builtin_contains(&mut self, e: &Expr, args: &[Expr]) -> Operand {
        let name = "contains";
        if !self.arity(e, name, args.len(), 2) {
            self.check_args_loosely(args);
            return Operand::invalid();
        }
        let ctx = Context::Argument(name.to_string());
        let op = self.value_default(&args[0], &ctx);
        match &op.ty {
            Ty::Invalid => {
                self.value(&args[1]);
                return Operand::invalid();
            }
            Ty::Str => {
                self.value_to(&args[1], &Ty::Str, &ctx);
            }
            Ty::List(el) if comparable(el, &self.info.structs) => {
                let el = (**el).clone();
                self.value_to(&args[1], &el, &ctx);
            }
            t => {
                let t = t.clone();
                self.value(&args[1]);
                return self.bad_builtin_arg(&args[0], &t, name);
            }
        }
        Operand {
            ty: Ty::Bool,
            val: None,
        }
    }
}
