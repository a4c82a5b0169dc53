//! Builtin functions (docs/language.md, "Builtins" and "Tensors") and call checking.
//!
//! Most builtins have a fixed signature (`fixed_sig`); the rest (`print`,
//! `len`, `cap`, `append`, conversions, `make`, `close`, `after`, `sleep`,
//! `get`) are checked by hand. Builtin names are predeclared and may be
//! shadowed by variables or functions, so they are resolved last.

use super::expr::Operand;
use super::{Checker, Res};
use crate::ast::*;
use crate::types::Ty;

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
    To = "to", LoadDataset = "load_dataset",
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
            Transpose | Relu | ReluMask | Exp | Log | Softmax | SumRows => (vec![t()], t()),
            Sum | Mean => (vec![t()], Ty::Float),
            ArgmaxRows => (vec![t()], Ty::list(Ty::Int)),
            Onehot => (vec![Ty::list(Ty::Int), Ty::Int], t()),
            Rows => (vec![t(), Ty::Int, Ty::Int], t()),
            Gather => (vec![t(), Ty::list(Ty::Int)], t()),
            Devices => (vec![], Ty::list(Ty::Str)),
            Device => (vec![t()], Ty::Str),
            To => (vec![t(), Ty::Str], t()),
            LoadDataset => (vec![Ty::Str], Ty::Struct(0)),
            _ => return None,
        })
    }
}

impl<'a> Checker<'a> {
    pub(crate) fn call(&mut self, e: &Expr, func: &Expr, args: &[Expr], spread: bool) -> Operand {
        let ExprKind::Ident(name) = &func.kind else {
            let f = self.value(func);
            if !f.ty.is_invalid() {
                self.error(
                    func.span,
                    format!(
                        "invalid operation: cannot call non-function {} (type {})",
                        self.text(func.span),
                        self.tyname(&f.ty)
                    ),
                );
            }
            self.check_args_loosely(args);
            return Operand::invalid();
        };
        match self.resolve(name) {
            Some((Res::Func(id), _)) => {
                self.info.uses.insert(func.id, Res::Func(id));
                if spread {
                    self.error(
                        e.span,
                        format!("cannot use ... in call to non-variadic {name}"),
                    );
                }
                let f = self.info.funcs[id as usize].clone();
                self.arity(e, name, args.len(), f.params.len());
                let ctx = format!("argument to {name}");
                for (i, a) in args.iter().enumerate() {
                    match f.params.get(i) {
                        Some((_, t)) => {
                            self.value_to(a, t, &ctx);
                        }
                        None => {
                            self.value(a);
                        }
                    }
                }
                Operand {
                    ty: f.result.clone().unwrap_or(Ty::Void),
                    val: None,
                }
            }
            Some((Res::Builtin(b), _)) => {
                self.info.uses.insert(func.id, Res::Builtin(b));
                if spread && b != Builtin::Append {
                    self.error(e.span, format!("invalid use of ... with built-in {name}"));
                }
                self.builtin(e, b, args, spread)
            }
            Some((Res::Var(id), ty)) => {
                self.info.uses.insert(func.id, Res::Var(id));
                if !ty.is_invalid() {
                    self.error(func.span, format!("invalid operation: cannot call non-function {name} (variable of type {})", self.tyname(&ty)));
                }
                self.check_args_loosely(args);
                Operand::invalid()
            }
            Some((Res::Const(_), _)) => {
                self.error(
                    func.span,
                    format!("invalid operation: cannot call non-function {name} (constant)"),
                );
                self.check_args_loosely(args);
                Operand::invalid()
            }
            None => {
                if self.is_struct_name(name) {
                    self.error_help(
                        func.span,
                        format!("cannot convert to {name}"),
                        "conversions are int(x), float(x) and str(x)",
                    );
                } else {
                    self.error(func.span, format!("undefined: {name}"));
                }
                self.check_args_loosely(args);
                Operand::invalid()
            }
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
        let which = if have < want {
            "not enough"
        } else {
            "too many"
        };
        self.error(
            e.span,
            format!("{which} arguments in call to {name} (have {have}, want {want})"),
        );
        false
    }

    fn builtin(&mut self, e: &Expr, b: Builtin, args: &[Expr], spread: bool) -> Operand {
        let name = b.name();
        let ctx = format!("argument to {name}");
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
                    self.error_help(
                        e.span,
                        "load_dataset returns the predeclared Dataset, but this file declares its own Dataset",
                        "rename your struct",
                    );
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
                    let op = self.value_default(a, "argument to print");
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
                    (Ty::Str | Ty::List(_), Builtin::Len) => true,
                    _ => false,
                };
                if !ok {
                    let msg = format!(
                        "invalid argument: {} (type {}) for built-in {name}",
                        self.text(args[0].span),
                        self.tyname(&op.ty)
                    );
                    if b == Builtin::Cap {
                        self.error_help(args[0].span, msg, "cap applies to channels only");
                    } else {
                        self.error(args[0].span, msg);
                    }
                    return Operand::invalid();
                }
                Operand {
                    ty: Ty::Int,
                    val: None,
                }
            }
            Builtin::Append => {
                let Some(first) = args.first() else {
                    self.error(
                        e.span,
                        "not enough arguments for append (have 0, want at least 1)",
                    );
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
                        self.error(
                            first.span,
                            format!(
                                "invalid argument: {} (type {}) is not a list",
                                self.text(first.span),
                                self.tyname(t)
                            ),
                        );
                        self.check_args_loosely(&args[1..]);
                        return Operand::invalid();
                    }
                };
                if spread {
                    if args.len() != 2 {
                        self.error(e.span, "can only use ... with a final list argument");
                        return Operand::invalid();
                    }
                    self.value_to(&args[1], &lo.ty, "argument to append");
                } else {
                    for a in &args[1..] {
                        self.value_to(a, &elem, "argument to append");
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
                    (Builtin::Int, t) => matches!(t, Ty::Int | Ty::Float | Ty::Str),
                    (_, t) => matches!(t, Ty::Int | Ty::Float),
                };
                if !ok {
                    self.error(
                        args[0].span,
                        format!(
                            "cannot convert {} (type {}) to type {}",
                            self.text(args[0].span),
                            self.tyname(&op.ty),
                            if b == Builtin::Str { "string" } else { name }
                        ),
                    );
                    return Operand::invalid();
                }
                let ty = match b {
                    Builtin::Str => Ty::Str,
                    Builtin::Int => Ty::Int,
                    _ => Ty::Float,
                };
                Operand { ty, val: None }
            }
            Builtin::Make => {
                let Some(first) = args.first() else {
                    self.error(
                        e.span,
                        "not enough arguments for make (have 0, want 1 or 2)",
                    );
                    return Operand::invalid();
                };
                let ty = match &first.kind {
                    ExprKind::Type(t) => self.resolve_type(t),
                    _ => {
                        self.error_help(
                            first.span,
                            format!("{} is not a type", self.text(first.span)),
                            "write make(chan T) or make(chan T, n)",
                        );
                        Ty::Invalid
                    }
                };
                self.record(first, &ty);
                if args.len() > 2 {
                    self.error(
                        e.span,
                        format!(
                            "too many arguments for make (have {}, want 1 or 2)",
                            args.len()
                        ),
                    );
                }
                if let Some(n) = args.get(1) {
                    self.value_to(n, &Ty::Int, "argument to make");
                }
                match ty {
                    Ty::Chan(_) => Operand { ty, val: None },
                    Ty::Invalid => Operand::invalid(),
                    t => {
                        self.error_help(
                            first.span,
                            format!("invalid argument: cannot make {}", self.tyname(&t)),
                            "make creates channels; write []T{} for an empty list",
                        );
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
                    self.error(
                        args[0].span,
                        format!(
                            "invalid operation: non-chan argument {} (type {}) for close",
                            self.text(args[0].span),
                            self.tyname(&op.ty)
                        ),
                    );
                }
                Operand {
                    ty: Ty::Void,
                    val: None,
                }
            }
            Builtin::After | Builtin::Sleep => {
                let result = if b == Builtin::After {
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
                    self.error(
                        args[0].span,
                        format!(
                            "cannot use {} (type {}) as milliseconds in {ctx} (want int or float)",
                            self.text(args[0].span),
                            self.tyname(&op.ty)
                        ),
                    );
                }
                Operand {
                    ty: result,
                    val: None,
                }
            }
            Builtin::Get => {
                let Some(first) = args.first() else {
                    self.error(
                        e.span,
                        "not enough arguments for get (have 0, want at least 1)",
                    );
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
            _ => Operand::invalid(),
        }
    }
}
