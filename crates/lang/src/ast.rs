//! The syntax tree produced by the parser.
//!
//! Every expression, identifier and statement carries a `NodeId` (dense, from
//! 0) so that the checker can record types and name resolutions in side
//! tables indexed by id, and a `Span` into the source.

use crate::diag::Span;

pub type NodeId = u32;

#[derive(Debug, Clone, PartialEq)]
pub struct Ident {
    pub id: NodeId,
    pub name: String,
    pub span: Span,
}

impl Ident {
    pub fn is_blank(&self) -> bool {
        self.name == "_"
    }
}

/// A parsed file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct File {
    pub decls: Vec<Decl>,
    /// One more than the largest `NodeId` used.
    pub node_count: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Decl {
    Const(ConstSpec),
    Type(TypeDecl),
    Func(FuncDecl),
}

#[derive(Debug, Clone, PartialEq)]
pub struct ConstSpec {
    pub name: Ident,
    pub ty: Option<TypeExpr>,
    pub value: Expr,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TypeDecl {
    pub name: Ident,
    pub fields: Vec<FieldDecl>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FieldDecl {
    pub name: Ident,
    pub ty: TypeExpr,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FuncDecl {
    pub name: Ident,
    pub params: Vec<FieldDecl>,
    pub result: Option<TypeExpr>,
    pub body: Block,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TypeExpr {
    pub kind: TypeKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TypeKind {
    Named(Ident),
    Chan(Box<TypeExpr>),
    List(Box<TypeExpr>),
    /// `map[K]V`.
    Map(Box<TypeExpr>, Box<TypeExpr>),
    /// `func(P1, P2) R`; the result may be a `Tuple`.
    Func {
        params: Vec<TypeExpr>,
        result: Option<Box<TypeExpr>>,
    },
    /// The results `(T1, T2, ...)` of a function with several (at least two).
    Tuple(Vec<TypeExpr>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    /// From `{` to `}`.
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Stmt {
    pub id: NodeId,
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    LogAnd,
    LogOr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        use BinOp::*;
        match self {
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Rem => "%",
            And => "&",
            Or => "|",
            Xor => "^",
            Shl => "<<",
            Shr => ">>",
            LogAnd => "&&",
            LogOr => "||",
            Eq => "==",
            Ne => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
        }
    }

    pub fn is_comparison(self) -> bool {
        use BinOp::*;
        matches!(self, Eq | Ne | Lt | Le | Gt | Ge)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Pos,
    Not,
    BitNot,
    Recv,
}

impl UnOp {
    pub fn symbol(self) -> &'static str {
        match self {
            UnOp::Neg => "-",
            UnOp::Pos => "+",
            UnOp::Not => "!",
            UnOp::BitNot => "^",
            UnOp::Recv => "<-",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub enum StmtKind {
    #[default]
    Empty,
    /// `var a, b T = e1, e2` (type and values each optional, not both absent).
    Var {
        names: Vec<Ident>,
        ty: Option<TypeExpr>,
        values: Vec<Expr>,
    },
    Const(Vec<ConstSpec>),
    /// `a, b := e1, e2`, or `v, ok := <-ch` (one value, two names).
    Define {
        names: Vec<Ident>,
        values: Vec<Expr>,
    },
    /// `lhs = rhs` (op None) or `lhs op= rhs` (one target, one value).
    Assign {
        lhs: Vec<Expr>,
        op: Option<BinOp>,
        rhs: Vec<Expr>,
    },
    IncDec {
        target: Expr,
        inc: bool,
    },
    Expr(Expr),
    Send {
        chan: Expr,
        value: Expr,
    },
    /// `go f(args)`, or `go f(args) on DEV` (the placement, a string
    /// expression): the first expression is a call.
    GoCall(Expr, Option<Expr>),
    /// `go { stmts }`, or `go { stmts } on DEV`.
    GoBlock(Block, Option<Expr>),
    /// `defer f(args)`: the expression is a call.
    Defer(Expr),
    /// `return`, `return e`, `return a, b`.
    Return(Vec<Expr>),
    Break(Option<Ident>),
    Continue(Option<Ident>),
    Block(Block),
    If {
        init: Option<Box<Stmt>>,
        cond: Expr,
        then: Block,
        /// An `If` statement or a `Block`.
        els: Option<Box<Stmt>>,
    },
    Switch {
        init: Option<Box<Stmt>>,
        tag: Option<Expr>,
        cases: Vec<CaseClause>,
    },
    Select(Vec<SelectCase>),
    For {
        init: Option<Box<Stmt>>,
        cond: Option<Expr>,
        post: Option<Box<Stmt>>,
        body: Block,
    },
    /// `for k, v := range x { }` or `for range x { }`.
    ForRange {
        key: Option<Ident>,
        value: Option<Ident>,
        expr: Expr,
        body: Block,
    },
    Labeled {
        label: Ident,
        stmt: Box<Stmt>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct CaseClause {
    /// Empty for `default`.
    pub exprs: Vec<Expr>,
    pub is_default: bool,
    pub body: Vec<Stmt>,
    /// The `case` or `default` keyword through the colon.
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SelectCase {
    pub comm: Comm,
    pub body: Vec<Stmt>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Comm {
    Default,
    Send {
        chan: Expr,
        value: Expr,
    },
    /// `case <-c:`, `case v, ok := <-c:`, `case x, ok = <-c:`.
    Recv {
        lhs: RecvLhs,
        chan: Expr,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum RecvLhs {
    None,
    Define(Vec<Ident>),
    Assign(Vec<Expr>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub id: NodeId,
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub enum ExprKind {
    /// Stands in for an expression that did not parse.
    #[default]
    Bad,
    Ident(String),
    Int(u64),
    /// An integer literal too large for 64 bits.
    BigInt,
    Float(f64),
    /// A string literal's bytes, escapes decoded (`"\xff"` is not UTF-8).
    Str(Vec<u8>),
    Bool(bool),
    Nil,
    Paren(Box<Expr>),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `f(args)`; `spread` is set for `append(l, more...)`.
    Call {
        func: Box<Expr>,
        args: Vec<Expr>,
        spread: bool,
    },
    Index(Box<Expr>, Box<Expr>),
    Slice {
        x: Box<Expr>,
        lo: Option<Box<Expr>>,
        hi: Option<Box<Expr>>,
    },
    Field(Box<Expr>, Ident),
    /// `Name{...}`.
    StructLit {
        name: Ident,
        elems: Vec<Element>,
    },
    /// `[]T{...}`: `ty` is the whole list type.
    ListLit {
        ty: TypeExpr,
        elems: Vec<Element>,
    },
    /// `{...}` inside a list literal: its type is the list's element type.
    Elided(Vec<Element>),
    /// A type in expression position (`make(chan int)`).
    Type(TypeExpr),
    /// `map[K]V{k: v, ...}`: `ty` is the whole map type.
    MapLit {
        ty: TypeExpr,
        entries: Vec<(Expr, Expr)>,
    },
    /// `func(params) results { body }`.
    FuncLit(Box<FuncLit>),
}

/// A function literal.
#[derive(Debug, Clone, PartialEq)]
pub struct FuncLit {
    pub params: Vec<FieldDecl>,
    pub result: Option<TypeExpr>,
    pub body: Block,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Element {
    pub key: Option<Ident>,
    pub value: Expr,
}

/// Chains (`a + b + c ...`, `x.f.g ...`, `else if ...`) are as long as the
/// source makes them and do not count as nesting (`parser::MAX_DEPTH`), so
/// the passes walk them in loops; dropping one must not recurse once per
/// link either. An expression's boxed children are unlinked into a work list
/// and dropped one by one (each empty by then); the other children are
/// bounded by the nesting limit. The derived `Clone`, `Debug` and
/// `PartialEq` do recurse: they serve tests and tools on small trees.
impl Drop for Expr {
    fn drop(&mut self) {
        let mut work: Vec<Expr> = Vec::new();
        unlink(&mut self.kind, &mut work);
        while let Some(mut e) = work.pop() {
            unlink(&mut e.kind, &mut work);
        }
    }
}

/// Moves the boxed children of `kind` to `work`.
fn unlink(kind: &mut ExprKind, work: &mut Vec<Expr>) {
    match kind {
        ExprKind::Paren(_)
        | ExprKind::Unary(..)
        | ExprKind::Binary(..)
        | ExprKind::Call { .. }
        | ExprKind::Index(..)
        | ExprKind::Slice { .. }
        | ExprKind::Field(..) => {}
        _ => return,
    }
    match std::mem::take(kind) {
        ExprKind::Paren(x) | ExprKind::Unary(_, x) | ExprKind::Field(x, _) => work.push(*x),
        ExprKind::Binary(_, x, y) | ExprKind::Index(x, y) => {
            work.push(*x);
            work.push(*y);
        }
        ExprKind::Call { func, .. } => work.push(*func),
        ExprKind::Slice { x, lo, hi } => {
            work.push(*x);
            work.extend(lo.map(|e| *e));
            work.extend(hi.map(|e| *e));
        }
        _ => {}
    }
}

/// An `else if` chain is dropped link by link (see `Drop for Expr`).
impl Drop for Stmt {
    fn drop(&mut self) {
        let mut next = else_link(&mut self.kind);
        while let Some(mut s) = next {
            next = else_link(&mut s.kind);
        }
    }
}

fn else_link(kind: &mut StmtKind) -> Option<Box<Stmt>> {
    match kind {
        StmtKind::If { els, .. } => els.take(),
        _ => None,
    }
}
