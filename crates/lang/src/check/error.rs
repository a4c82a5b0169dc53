//! The checker's errors: one [`CheckError`] variant per kind of problem,
//! carrying its data, so that the same problem always reads the same. Its
//! `Display` is the message (lowercase, no final period, in the wording of
//! the Go compiler where Go has the same rule); [`Message::help`] adds the
//! `help:` line some kinds have. The checker reports every error through
//! this catalogue ([`crate::diag::Diagnostics::report`]).
//!
//! Operands are named by their source text (`Checker::text`) and types by
//! their names (`TyName`), both taken when the error is made.

use std::fmt;

use crate::diag::Message;

/// Where a value is used, as messages name it (`... value in CONTEXT`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Context {
    /// A list or string index.
    Index,
    /// A bound of a slice expression.
    SliceIndex,
    /// The operand of a slice expression.
    Slice,
    /// The scalar side of `tensor ⊕ float`.
    TensorOperation,
    /// The untyped side of a binary operation.
    Operation,
    /// An untyped side of a comparison.
    Comparison,
    /// An element of a list literal.
    ListLiteral,
    /// A field value of a struct literal.
    StructLiteral,
    /// `var x T = v`.
    VariableDeclaration,
    /// `x = v` or `x := v`.
    Assignment,
    /// `ch <- v`.
    Send,
    /// `return v`.
    ReturnStatement,
    /// An argument of the named function or builtin.
    Argument(String),
    /// The tag of `switch x { }`.
    SwitchExpression,
    /// A `case` expression of a switch.
    SwitchCase,
    /// The condition of an `if`.
    IfStatement,
    /// The condition of a `for`.
    ForStatement,
    /// The operand of `for ... range`.
    Range,
    /// An untyped operand of `<<` or `>>`.
    Shift,
    /// `const X T = v`.
    ConstantDeclaration,
    /// The operand of `<-`.
    Receive,
    /// The device of `go ... on DEV`.
    Placement,
    /// A key or value of a map literal.
    MapLiteral,
    /// The key of `m[k]`.
    MapIndex,
}

impl fmt::Display for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Context::Index => "index",
            Context::SliceIndex => "slice index",
            Context::Slice => "slice",
            Context::TensorOperation => "tensor operation",
            Context::Operation => "operation",
            Context::Comparison => "comparison",
            Context::ListLiteral => "list literal",
            Context::StructLiteral => "struct literal",
            Context::VariableDeclaration => "variable declaration",
            Context::Assignment => "assignment",
            Context::Send => "send",
            Context::ReturnStatement => "return statement",
            Context::Argument(name) => return write!(f, "argument to {name}"),
            Context::SwitchExpression => "switch expression",
            Context::SwitchCase => "switch case",
            Context::IfStatement => "if statement",
            Context::ForStatement => "for statement",
            Context::Range => "range",
            Context::Shift => "shift",
            Context::ConstantDeclaration => "constant declaration",
            Context::Receive => "receive",
            Context::Placement => "go placement",
            Context::MapLiteral => "map literal",
            Context::MapIndex => "map index",
        })
    }
}

/// Why an untyped numeric constant is not a value of the wanted type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unrepresentable {
    /// A float constant with a fraction used as an `int`.
    Truncated,
    /// Outside the 64-bit `int` range.
    OverflowsInt,
    /// Outside the finite `float` range.
    OverflowsFloat,
}

impl fmt::Display for Unrepresentable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Unrepresentable::Truncated => "truncated",
            Unrepresentable::OverflowsInt => "overflows int",
            Unrepresentable::OverflowsFloat => "overflows float",
        })
    }
}

/// What a name that is not a variable refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameKind {
    /// A constant.
    Constant,
    /// A declared function.
    Function,
    /// A builtin.
    Builtin,
}

impl fmt::Display for NameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NameKind::Constant => "constant",
            NameKind::Function => "function",
            NameKind::Builtin => "built-in function",
        })
    }
}

/// A statement that names a label: `break` or `continue`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Jump {
    /// `break`.
    Break,
    /// `continue`.
    Continue,
}

impl fmt::Display for Jump {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Jump::Break => "break",
            Jump::Continue => "continue",
        })
    }
}

/// A statement with cases and at most one `default`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaseStmt {
    /// `switch`.
    Switch,
    /// `select`.
    Select,
}

impl fmt::Display for CaseStmt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CaseStmt::Switch => "switch",
            CaseStmt::Select => "select",
        })
    }
}

/// How an operand reads in `cannot use X (DESC) as ...`: `untyped int constant` or `type T`.
fn operand(ty: &str, constant: bool) -> String {
    if constant {
        format!("{ty} constant")
    } else {
        format!("type {ty}")
    }
}

/// `not enough` or `too many`, for an argument count `have` against the least `min`.
fn how_many(have: usize, min: usize) -> &'static str {
    if have < min {
        "not enough"
    } else {
        "too many"
    }
}

/// The argument counts a builtin takes: `1`, `1 or 2`, `at least 1`.
fn wanted(min: usize, max: Option<usize>) -> String {
    match max {
        None => format!("at least {min}"),
        Some(max) if max == min => format!("{min}"),
        Some(max) => format!("{min} or {max}"),
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn inc_dec(inc: bool) -> &'static str {
    if inc {
        "++"
    } else {
        "--"
    }
}

/// ` on TAG`, or nothing for a tagless switch.
fn on_tag(tag: &Option<String>) -> String {
    tag.as_ref().map(|t| format!(" on {t}")).unwrap_or_default()
}

/// What the checker reports. `expr` fields hold the source text of the
/// expression at fault, `ty`-like fields type names.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    // ---- declarations and names ----
    /// A struct declares a field name twice.
    #[error("{name} redeclared")]
    FieldRedeclared {
        /// The field name.
        name: String,
    },
    /// Two top-level declarations share a name.
    #[error("{name} redeclared in this file")]
    RedeclaredInFile {
        /// The name.
        name: String,
    },
    /// A block declares a name twice.
    #[error("{name} redeclared in this block")]
    RedeclaredInBlock {
        /// The name.
        name: String,
    },
    /// `_` as the name of a top-level declaration.
    #[error("cannot declare _ at the top level")]
    BlankTopLevel,
    /// A struct that contains itself.
    #[error("invalid recursive type {name}")]
    RecursiveType {
        /// The struct.
        name: String,
    },
    /// A top-level constant whose value depends on itself.
    #[error("initialization cycle: {name} refers to itself")]
    InitCycle {
        /// The constant.
        name: String,
    },
    /// `func main` with parameters or a result.
    #[error("func main must have no arguments and no return values")]
    MainSignature,
    /// No `func main`.
    #[error("function main is undeclared")]
    NoMain,
    /// A file with no declarations at all (empty, or only comments).
    #[error("empty program: no function main")]
    EmptyProgram,
    /// A type nesting `[]` and `chan` deeper than a `.pb` file can hold.
    #[error("type nested too deeply: more than {limit} levels of [] and chan")]
    TypeTooDeep {
        /// `weft_ir::MAX_TYPE_NESTING`.
        limit: usize,
    },
    /// A name that is declared nowhere.
    #[error("undefined: {name}")]
    Undefined {
        /// The name.
        name: String,
    },
    /// A name in type position that is not a type.
    #[error("{name} is not a type")]
    NotAType {
        /// The name.
        name: String,
    },
    /// A function with a result whose body can end without `return`.
    #[error("missing return")]
    MissingReturn,
    /// A label declared twice in one function.
    #[error("label {label} already defined")]
    LabelRedefined {
        /// The label.
        label: String,
    },

    // ---- values ----
    /// A call without a result where a value is needed.
    #[error("{expr} (no value) used as value")]
    NoValue {
        /// The call.
        expr: String,
    },
    /// `_` read as a value.
    #[error("cannot use _ as value")]
    BlankAsValue,
    /// A type where a value is needed.
    #[error("{ty} (type) is not an expression")]
    TypeAsValue {
        /// The type.
        ty: String,
    },
    /// A builtin named without calling it.
    #[error("{name} (built-in function) must be called")]
    BuiltinNotCalled {
        /// The builtin.
        name: String,
    },
    /// An expression statement whose value is dropped.
    #[error("{expr} (value of type {ty}) is not used")]
    Unused {
        /// The expression.
        expr: String,
        /// Its type.
        ty: String,
    },

    // ---- constants ----
    /// An integer literal past 64 bits.
    #[error("integer constant {lit} is too large")]
    IntTooLarge {
        /// The literal.
        lit: String,
    },
    /// A float literal past the finite range.
    #[error("floating-point constant is too large")]
    FloatTooLarge,
    /// Constant arithmetic past the exact range.
    #[error("constant overflow")]
    ConstOverflow,
    /// A typed `int` constant past 64 bits.
    #[error("constant {value} overflows int")]
    ConstOverflowsInt {
        /// The value.
        value: i128,
    },
    /// A constant shift past the exact range.
    #[error("constant shift overflow")]
    ShiftOverflow,
    /// `/` or `%` by a constant zero.
    #[error("invalid operation: division by zero")]
    DivisionByZero,
    /// A constant declaration whose value is not constant.
    #[error("{expr} (value of type {ty}) is not constant")]
    NotConstant {
        /// The value.
        expr: String,
        /// Its type.
        ty: String,
    },
    /// A constant declared with a type constants cannot have.
    #[error("invalid constant type {ty}")]
    InvalidConstType {
        /// The type.
        ty: String,
    },

    // ---- conversions ----
    /// A value not assignable to the type its context wants.
    #[error("cannot use {expr} ({}) as {target} value in {ctx}", operand(.ty, *.constant))]
    CannotUse {
        /// The value.
        expr: String,
        /// Its type.
        ty: String,
        /// Whether it is an untyped constant.
        constant: bool,
        /// The wanted type.
        target: String,
        /// Where it is used.
        ctx: Context,
        /// Whether both types are numeric (a conversion would do).
        numeric: bool,
    },
    /// An untyped numeric constant that the wanted type cannot hold.
    #[error("cannot use {value} ({ty} constant) as {target} value in {ctx} ({why})")]
    Unrepresentable {
        /// The constant's value.
        value: String,
        /// Its (untyped) type.
        ty: String,
        /// The wanted type.
        target: String,
        /// Where it is used.
        ctx: Context,
        /// Why not.
        why: Unrepresentable,
    },
    /// `nil` where its type cannot be inferred.
    #[error("use of untyped nil in {ctx}")]
    UntypedNil {
        /// Where it is used.
        ctx: Context,
    },
    /// `int(x)`, `float(x)` or `str(x)` of a type it does not convert.
    #[error("cannot convert {expr} (type {ty}) to type {target}")]
    CannotConvert {
        /// The operand.
        expr: String,
        /// Its type.
        ty: String,
        /// The conversion's type.
        target: String,
    },
    /// A call of a type name other than the conversions.
    #[error("cannot convert to {name}")]
    ConvertToType {
        /// The type.
        name: String,
    },

    // ---- operators ----
    /// An operator applied to a type it is not defined on.
    #[error("invalid operation: operator {op} not defined on {expr} (type {ty})")]
    OperatorNotDefined {
        /// The operator.
        op: &'static str,
        /// The (left) operand.
        expr: String,
        /// Its type.
        ty: String,
    },
    /// A binary operation on two different types.
    #[error("invalid operation: {expr} (mismatched types {left} and {right})")]
    MismatchedTypes {
        /// The operation.
        expr: String,
        /// The left operand's type.
        left: String,
        /// The right operand's type.
        right: String,
        /// Whether both types are numeric (a conversion would do).
        numeric: bool,
    },
    /// A comparison of `nil` with `nil`.
    #[error("invalid operation: {expr} (operator {op} not defined on nil)")]
    NilOperator {
        /// The comparison.
        expr: String,
        /// The operator.
        op: &'static str,
    },
    /// `==` or `!=` on a type that is not comparable.
    #[error("invalid operation: {expr} ({ty} is not comparable)")]
    NotComparable {
        /// The comparison.
        expr: String,
        /// The operands' type.
        ty: String,
    },
    /// A shift count that is not an integer.
    #[error("invalid operation: shift count {count} (type {ty}) must be int")]
    ShiftCountNotInt {
        /// The count.
        count: String,
        /// Its type.
        ty: String,
    },
    /// A constant negative shift count.
    #[error("invalid operation: negative shift count {count}")]
    NegativeShift {
        /// The count.
        count: String,
    },
    /// `x++` or `x--` on a non-numeric variable.
    #[error("invalid operation: {expr}{} (non-numeric type {ty})", inc_dec(*.inc))]
    IncDecNonNumeric {
        /// The target.
        expr: String,
        /// `++` (or `--`).
        inc: bool,
        /// Its type.
        ty: String,
    },
    /// `x op= y` whose result is not of `x`'s type.
    #[error("cannot assign {value_ty} to {expr} (type {ty})")]
    CompoundAssignType {
        /// The operation's result type.
        value_ty: String,
        /// The target.
        expr: String,
        /// The target's type.
        ty: String,
    },

    // ---- indexing, slicing, fields ----
    /// A constant negative index or slice bound.
    #[error("invalid argument: index {index} must not be negative")]
    NegativeIndex {
        /// The index.
        index: i128,
    },
    /// Indexing a value that is neither a list nor a string.
    #[error("invalid operation: cannot index {expr} (type {ty})")]
    CannotIndex {
        /// The indexed value.
        expr: String,
        /// Its type.
        ty: String,
        /// Whether to point at `get` (a tensor read).
        hint_get: bool,
    },
    /// Slicing a value that is neither a list nor a string.
    #[error("cannot slice {expr} (type {ty})")]
    CannotSlice {
        /// The sliced value.
        expr: String,
        /// Its type.
        ty: String,
    },
    /// A field a struct does not have.
    #[error("{expr}.{field} undefined (type {ty} has no field {field})")]
    NoField {
        /// The struct value.
        expr: String,
        /// The field.
        field: String,
        /// The struct.
        ty: String,
    },
    /// A field of a value that is not a struct.
    #[error("{expr}.{field} undefined (type {ty} has no fields)")]
    NoFields {
        /// The value.
        expr: String,
        /// The field.
        field: String,
        /// Its type.
        ty: String,
    },

    // ---- composite literals ----
    /// A literal of a type that has no literals.
    #[error("invalid composite literal type {ty}")]
    InvalidCompositeType {
        /// The type.
        ty: String,
    },
    /// `{...}` where no type can be inferred.
    #[error("missing type in composite literal")]
    MissingCompositeType,
    /// `key: value` in a list literal.
    #[error("unexpected key in list literal")]
    KeyInListLiteral,
    /// A struct literal with both keyed and positional elements.
    #[error("mixture of field:value and value elements in struct literal")]
    MixedStructLiteral,
    /// A field given twice in a struct literal.
    #[error("duplicate field name {field} in struct literal")]
    DuplicateField {
        /// The field.
        field: String,
    },
    /// A key that is not a field of the struct.
    #[error("unknown field {field} in struct literal of type {ty}")]
    UnknownField {
        /// The key.
        field: String,
        /// The struct.
        ty: String,
    },
    /// More positional values than fields.
    #[error("too many values in struct literal of type {ty}")]
    TooManyValues {
        /// The struct.
        ty: String,
    },
    /// Fewer positional values than fields (but some).
    #[error("too few values in struct literal of type {ty}")]
    TooFewValues {
        /// The struct.
        ty: String,
    },

    // ---- assignments ----
    /// Different numbers of targets and values.
    #[error("assignment mismatch: {} but {}", plural(*.vars, "variable", "variables"), plural(*.vals, "value", "values"))]
    AssignMismatch {
        /// The number of targets.
        vars: usize,
        /// The number of values.
        vals: usize,
    },
    /// The `ok` of `v, ok := <-ch` (or `=`, `var`) bound to a non-bool.
    #[error("cannot use ok (type bool) as {ty} value in {ctx}")]
    OkNotBool {
        /// The target's type.
        ty: String,
        /// `assignment` or `variable declaration`.
        ctx: Context,
    },
    /// A select receive case assigning to a target of another type.
    #[error("cannot use value of type {value_ty} as {ty} value in assignment")]
    RecvAssignType {
        /// The received value's type (or `bool` for `ok`).
        value_ty: String,
        /// The target's type.
        ty: String,
    },
    /// `:=` declaring nothing new.
    #[error("no new variables on left side of :=")]
    NoNewVariables,
    /// Assigning, in a go block, to a variable captured from outside it.
    #[error("cannot assign to {name} in a go block: it is a captured copy, and tasks share nothing but channels")]
    AssignCaptured {
        /// The variable.
        name: String,
    },
    /// Assigning to a constant, function or builtin.
    #[error("cannot assign to {name} (it is a {what}, not a variable)")]
    AssignNotVariable {
        /// The name.
        name: String,
        /// What it is.
        what: NameKind,
    },
    /// Assigning to a byte of a string.
    #[error("cannot assign to {expr} (strings are immutable)")]
    AssignString {
        /// The target.
        expr: String,
    },
    /// Assigning to something that is neither a variable nor an element.
    #[error("cannot assign to {expr} (neither a variable nor an element)")]
    AssignNonPlace {
        /// The target.
        expr: String,
    },

    // ---- channels ----
    /// `<-x` on a non-channel.
    #[error("invalid operation: cannot receive from non-channel {expr} (type {ty})")]
    RecvNonChan {
        /// The operand.
        expr: String,
        /// Its type.
        ty: String,
    },
    /// `x <- v` on a non-channel.
    #[error("invalid operation: cannot send to non-channel {expr} (type {ty})")]
    SendNonChan {
        /// The operand.
        expr: String,
        /// Its type.
        ty: String,
    },
    /// `close(x)` on a non-channel.
    #[error("invalid operation: non-chan argument {expr} (type {ty}) for close")]
    CloseNonChan {
        /// The argument.
        expr: String,
        /// Its type.
        ty: String,
    },

    // ---- statements ----
    /// An `if` or `for` condition that is not a bool.
    #[error("non-boolean condition in {ctx} ({expr} has type {ty})")]
    NonBoolCondition {
        /// `if statement` or `for statement`.
        ctx: Context,
        /// The condition.
        expr: String,
        /// Its type.
        ty: String,
    },
    /// `return` without a value in a function with a result.
    #[error("not enough return values (want {want})")]
    NotEnoughReturnValues {
        /// The result type.
        want: String,
    },
    /// `return v` in a function without a result.
    #[error("too many return values (the function has no result)")]
    TooManyReturnValues,
    /// `return v` in a go block.
    #[error("too many return values")]
    ReturnValueInGo,
    /// `break` outside any loop, switch or select.
    #[error("break is not in a loop, switch, or select")]
    BreakOutside,
    /// `continue` outside any loop.
    #[error("continue is not in a loop")]
    ContinueOutside,
    /// `break L` or `continue L` where `L` labels no enclosing statement it can leave.
    #[error("invalid {stmt} label {label}")]
    InvalidLabel {
        /// `break` or `continue`.
        stmt: Jump,
        /// The label.
        label: String,
    },
    /// `break L` or `continue L` with `L` declared nowhere in the function.
    #[error("{stmt} label not defined: {label}")]
    LabelUndefined {
        /// `break` or `continue`.
        stmt: Jump,
        /// The label.
        label: String,
    },
    /// `range` over a type that has no iteration.
    #[error("cannot range over {expr} (type {ty})")]
    CannotRange {
        /// The operand.
        expr: String,
        /// Its type.
        ty: String,
    },
    /// A second iteration variable where there is one value.
    #[error("range over {expr} permits only one iteration variable")]
    RangeOneVariable {
        /// The operand.
        expr: String,
    },
    /// A switch tag that is not comparable.
    #[error("cannot switch on {expr} (type {ty} is not comparable)")]
    SwitchNotComparable {
        /// The tag.
        expr: String,
        /// Its type.
        ty: String,
    },
    /// A second `default` in a switch or select.
    #[error("multiple defaults in {stmt}")]
    MultipleDefaults {
        /// `switch` or `select`.
        stmt: CaseStmt,
    },
    /// A case of another type than the switch tag.
    #[error("invalid case {case} in switch{} (mismatched types {case_ty} and {tag_ty})", on_tag(.tag))]
    InvalidCase {
        /// The case expression.
        case: String,
        /// The tag, if the switch has one.
        tag: Option<String>,
        /// The case's type.
        case_ty: String,
        /// The tag's type (`bool` without a tag).
        tag_ty: String,
    },
    /// `go` applied to a builtin call.
    #[error("go requires a function declared in the program, not the built-in {name}")]
    GoBuiltin {
        /// The builtin.
        name: String,
    },

    // ---- calls ----
    /// A call of a value that is not a function.
    #[error("invalid operation: cannot call non-function {expr} (type {ty})")]
    CallNonFunction {
        /// The callee.
        expr: String,
        /// Its type.
        ty: String,
    },
    /// A call of a variable.
    #[error("invalid operation: cannot call non-function {name} (variable of type {ty})")]
    CallVariable {
        /// The variable.
        name: String,
        /// Its type.
        ty: String,
    },
    /// A call of a constant.
    #[error("invalid operation: cannot call non-function {name} (constant)")]
    CallConstant {
        /// The constant.
        name: String,
    },
    /// A call with the wrong number of arguments.
    #[error("{} arguments in call to {name} (have {have}, want {want})", how_many(*.have, *.want))]
    ArgCount {
        /// The function or builtin.
        name: String,
        /// The arguments given.
        have: usize,
        /// The parameters.
        want: usize,
    },
    /// A call of a builtin with a variable argument count outside its range.
    #[error("{} arguments for {name} (have {have}, want {})", how_many(*.have, *.min), wanted(*.min, *.max))]
    BuiltinArgCount {
        /// The builtin.
        name: &'static str,
        /// The arguments given.
        have: usize,
        /// The fewest it takes.
        min: usize,
        /// The most it takes, if bounded.
        max: Option<usize>,
    },
    /// `f(xs...)` for a declared function.
    #[error("cannot use ... in call to non-variadic {name}")]
    SpreadNonVariadic {
        /// The function.
        name: String,
    },
    /// `b(xs...)` for a builtin other than `append`.
    #[error("invalid use of ... with built-in {name}")]
    SpreadBuiltin {
        /// The builtin.
        name: String,
    },
    /// `append(l, a, b...)`.
    #[error("can only use ... with a final list argument")]
    SpreadNotFinal,
    /// `load_dataset` in a file that declares its own `Dataset`.
    #[error(
        "load_dataset returns the predeclared Dataset, but this file declares its own Dataset"
    )]
    DatasetShadowed,
    /// An argument of a type the builtin does not take (`len`, `cap`).
    #[error("invalid argument: {expr} (type {ty}) for built-in {builtin}")]
    BuiltinArgType {
        /// The argument.
        expr: String,
        /// Its type.
        ty: String,
        /// The builtin.
        builtin: &'static str,
    },
    /// The first argument of `append` is not a list.
    #[error("invalid argument: {expr} (type {ty}) is not a list")]
    NotAList {
        /// The argument.
        expr: String,
        /// Its type.
        ty: String,
    },
    /// The first argument of `make` is not a type.
    #[error("{expr} is not a type")]
    MakeNotAType {
        /// The argument.
        expr: String,
    },
    /// `make` of a type other than a channel, a map or a list.
    #[error("invalid argument: cannot make {ty}")]
    CannotMake {
        /// The type.
        ty: String,
    },
    /// The duration of `after` or `sleep` is not a number.
    #[error("cannot use {expr} (type {ty}) as milliseconds in argument to {builtin} (want int or float)")]
    BadMilliseconds {
        /// The argument.
        expr: String,
        /// Its type.
        ty: String,
        /// `after` or `sleep`.
        builtin: &'static str,
    },
    /// `recover()`: a panic ends the program.
    #[error("recover is not supported in Weft")]
    Recover,
    /// A map key type that is not comparable.
    #[error("invalid map key type {ty}")]
    InvalidMapKey {
        /// The key type.
        ty: String,
    },
    /// A call with several results where one value is needed.
    #[error("multiple-value {expr} (value of type {ty}) in single-value context")]
    MultiValue {
        /// The call.
        expr: String,
        /// Its results.
        ty: String,
    },
    /// `return` with a number of values other than the results.
    #[error("wrong number of return values (have {have}, want {want})")]
    ReturnCount {
        /// The values given.
        have: usize,
        /// The result types.
        want: String,
    },
    /// The same constant key twice in a map literal.
    #[error("duplicate key {key} in map literal")]
    DuplicateMapKey {
        /// The key.
        key: String,
    },
    /// Assigning, in a function literal, to a variable captured from outside it.
    #[error("cannot assign to {name} in a function literal: it is a copy captured when the literal was evaluated")]
    AssignCapturedInFunc {
        /// The variable.
        name: String,
    },
    /// `f == g` of two func values, or `m == n` of two maps.
    #[error("invalid operation: {expr} ({kind} can only be compared to nil)")]
    FuncCompare {
        /// The comparison.
        expr: String,
        /// `func` or `map`.
        kind: &'static str,
    },
    /// `defer` of a builtin whose result would be discarded.
    #[error("defer discards result of {name}(...)")]
    DeferBuiltin {
        /// The builtin.
        name: String,
    },
    /// The value of a reduction (`allreduce_sum` and the like) is not an
    /// `int`, `float`, `tensor` or `[]tensor`.
    #[error(
        "invalid argument: {expr} (type {ty}) for built-in {builtin} (want int, float, tensor or []tensor)"
    )]
    ReduceArgType {
        /// The argument.
        expr: String,
        /// Its type.
        ty: String,
        /// The reduction.
        builtin: &'static str,
    },

    // ---- after checking ----
    /// The lowering produced a program the IR verifier rejects (a compiler bug).
    #[error("internal error: the lowered program does not verify: {error}")]
    LoweringInvalid {
        /// The verifier's report.
        error: String,
    },
}

impl Message for CheckError {
    fn help(&self) -> Option<String> {
        use CheckError::*;
        let help = match self {
            NoMain | EmptyProgram => "add `func main() { ... }`",
            CannotUse {
                numeric: true,
                target,
                ..
            } => {
                let conv = if target == "int" { "int" } else { "float" };
                return Some(format!(
                    "there are no implicit conversions; write {conv}(...)"
                ));
            }
            ConvertToType { .. } => "conversions are int(x), float(x) and str(x)",
            MismatchedTypes { numeric: true, .. } => {
                "there are no implicit conversions; convert with int(...) or float(...)"
            }
            CannotIndex { hint_get: true, .. } => "use get(t, i, j) to read one element",
            TooFewValues { .. } => {
                "a positional literal lists every field; name fields (`f: v`) to leave some zero"
            }
            NoNewVariables => "use = to assign to existing variables",
            AssignCaptured { name } => {
                return Some(format!(
                    "declare a new variable (`{name} := {name}`) inside the block, or send the value on a channel"
                ))
            }
            ReturnValueInGo => "return in a go block ends its task and returns nothing",
            GoBuiltin { name } => return Some(format!("write go {{ {name}(...) }}")),
            DatasetShadowed => "rename your struct",
            BuiltinArgType { builtin: "cap", .. } => "cap applies to channels only",
            MakeNotAType { .. } => "write make(chan T), make(chan T, n), make(map[K]V) or make([]T, n)",
            CannotMake { .. } => "make creates channels, maps and lists: make(chan T, n), make(map[K]V), make([]T, n)",
            Recover => "a panic ends the program; return an error value (`v, ok := f()`) instead",
            InvalidMapKey { .. } => "map keys are ints, floats, strings, bools, channels, comms or structs of those",
            MultiValue { .. } => "assign the results to as many variables: `a, b := f()`",
            AssignCapturedInFunc { name } => return Some(format!("return the new value instead, or declare a new variable (`{name} := {name}`) inside the literal")),
            _ => return None,
        };
        Some(help.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::catalogue_checks::{assert_message_style, assert_one_example_each};

    fn s(x: &str) -> String {
        x.to_string()
    }

    /// The position of `e`'s variant in the catalogue. Exhaustive, so that
    /// a new variant must be listed here (and then in `one_of_each`).
    fn variant(e: &CheckError) -> usize {
        use CheckError::*;
        match e {
            FieldRedeclared { .. } => 0,
            RedeclaredInFile { .. } => 1,
            RedeclaredInBlock { .. } => 2,
            BlankTopLevel => 3,
            RecursiveType { .. } => 4,
            InitCycle { .. } => 5,
            MainSignature => 6,
            NoMain => 7,
            Undefined { .. } => 8,
            NotAType { .. } => 9,
            MissingReturn => 10,
            LabelRedefined { .. } => 11,
            NoValue { .. } => 12,
            BlankAsValue => 13,
            TypeAsValue { .. } => 14,
            BuiltinNotCalled { .. } => 15,
            Unused { .. } => 16,
            IntTooLarge { .. } => 17,
            FloatTooLarge => 18,
            ConstOverflow => 19,
            ConstOverflowsInt { .. } => 20,
            ShiftOverflow => 21,
            DivisionByZero => 22,
            NotConstant { .. } => 23,
            InvalidConstType { .. } => 24,
            CannotUse { .. } => 25,
            Unrepresentable { .. } => 26,
            UntypedNil { .. } => 27,
            CannotConvert { .. } => 28,
            ConvertToType { .. } => 29,
            OperatorNotDefined { .. } => 30,
            MismatchedTypes { .. } => 31,
            NilOperator { .. } => 32,
            NotComparable { .. } => 33,
            ShiftCountNotInt { .. } => 34,
            NegativeShift { .. } => 35,
            IncDecNonNumeric { .. } => 36,
            CompoundAssignType { .. } => 37,
            NegativeIndex { .. } => 38,
            CannotIndex { .. } => 39,
            CannotSlice { .. } => 40,
            NoField { .. } => 41,
            NoFields { .. } => 42,
            InvalidCompositeType { .. } => 43,
            MissingCompositeType => 44,
            KeyInListLiteral => 45,
            MixedStructLiteral => 46,
            DuplicateField { .. } => 47,
            UnknownField { .. } => 48,
            TooManyValues { .. } => 49,
            TooFewValues { .. } => 50,
            AssignMismatch { .. } => 51,
            OkNotBool { .. } => 52,
            RecvAssignType { .. } => 53,
            NoNewVariables => 54,
            AssignCaptured { .. } => 55,
            AssignNotVariable { .. } => 56,
            AssignString { .. } => 57,
            AssignNonPlace { .. } => 58,
            RecvNonChan { .. } => 59,
            SendNonChan { .. } => 60,
            CloseNonChan { .. } => 61,
            NonBoolCondition { .. } => 62,
            NotEnoughReturnValues { .. } => 63,
            TooManyReturnValues => 64,
            ReturnValueInGo => 65,
            BreakOutside => 66,
            ContinueOutside => 67,
            InvalidLabel { .. } => 68,
            LabelUndefined { .. } => 69,
            CannotRange { .. } => 70,
            RangeOneVariable { .. } => 71,
            SwitchNotComparable { .. } => 72,
            MultipleDefaults { .. } => 73,
            InvalidCase { .. } => 74,
            GoBuiltin { .. } => 75,
            CallNonFunction { .. } => 76,
            CallVariable { .. } => 77,
            CallConstant { .. } => 78,
            ArgCount { .. } => 79,
            BuiltinArgCount { .. } => 80,
            SpreadNonVariadic { .. } => 81,
            SpreadBuiltin { .. } => 82,
            SpreadNotFinal => 83,
            DatasetShadowed => 84,
            BuiltinArgType { .. } => 85,
            NotAList { .. } => 86,
            MakeNotAType { .. } => 87,
            CannotMake { .. } => 88,
            BadMilliseconds { .. } => 89,
            LoweringInvalid { .. } => 90,
            EmptyProgram => 91,
            TypeTooDeep { .. } => 92,
            Recover => 93,
            InvalidMapKey { .. } => 94,
            MultiValue { .. } => 95,
            ReturnCount { .. } => 96,
            DuplicateMapKey { .. } => 97,
            AssignCapturedInFunc { .. } => 98,
            FuncCompare { .. } => 99,
            DeferBuiltin { .. } => 100,
            ReduceArgType { .. } => 101,
        }
    }

    const VARIANTS: usize = 102;

    fn one_of_each() -> Vec<CheckError> {
        use CheckError::*;
        vec![
            FieldRedeclared { name: s("x") },
            RedeclaredInFile { name: s("f") },
            RedeclaredInBlock { name: s("x") },
            BlankTopLevel,
            RecursiveType { name: s("node") },
            InitCycle { name: s("n") },
            MainSignature,
            NoMain,
            Undefined { name: s("y") },
            NotAType { name: s("x") },
            MissingReturn,
            LabelRedefined { label: s("outer") },
            NoValue { expr: s("f()") },
            BlankAsValue,
            TypeAsValue { ty: s("int") },
            BuiltinNotCalled { name: s("len") },
            Unused {
                expr: s("x + 1"),
                ty: s("int"),
            },
            IntTooLarge {
                lit: s("99999999999999999999"),
            },
            FloatTooLarge,
            ConstOverflow,
            ConstOverflowsInt { value: 1 << 70 },
            ShiftOverflow,
            DivisionByZero,
            NotConstant {
                expr: s("f()"),
                ty: s("int"),
            },
            InvalidConstType { ty: s("[]int") },
            CannotUse {
                expr: s("x"),
                ty: s("int"),
                constant: false,
                target: s("float"),
                ctx: Context::Argument(s("f")),
                numeric: true,
            },
            Unrepresentable {
                value: s("1.5"),
                ty: s("untyped float"),
                target: s("int"),
                ctx: Context::Assignment,
                why: super::Unrepresentable::Truncated,
            },
            UntypedNil {
                ctx: Context::Receive,
            },
            CannotConvert {
                expr: s("l"),
                ty: s("[]int"),
                target: s("int"),
            },
            ConvertToType { name: s("string") },
            OperatorNotDefined {
                op: "-",
                expr: s("s"),
                ty: s("string"),
            },
            MismatchedTypes {
                expr: s("i * f"),
                left: s("int"),
                right: s("float"),
                numeric: true,
            },
            NilOperator {
                expr: s("nil == nil"),
                op: "==",
            },
            NotComparable {
                expr: s("a == b"),
                ty: s("[]int"),
            },
            ShiftCountNotInt {
                count: s("f"),
                ty: s("float"),
            },
            NegativeShift { count: s("-1") },
            IncDecNonNumeric {
                expr: s("s"),
                inc: true,
                ty: s("string"),
            },
            CompoundAssignType {
                value_ty: s("tensor"),
                expr: s("f"),
                ty: s("float"),
            },
            NegativeIndex { index: -1 },
            CannotIndex {
                expr: s("t"),
                ty: s("tensor"),
                hint_get: true,
            },
            CannotSlice {
                expr: s("x"),
                ty: s("int"),
            },
            NoField {
                expr: s("p"),
                field: s("z"),
                ty: s("point"),
            },
            NoFields {
                expr: s("x"),
                field: s("z"),
                ty: s("int"),
            },
            InvalidCompositeType { ty: s("int") },
            MissingCompositeType,
            KeyInListLiteral,
            MixedStructLiteral,
            DuplicateField { field: s("x") },
            UnknownField {
                field: s("z"),
                ty: s("point"),
            },
            TooManyValues { ty: s("point") },
            TooFewValues { ty: s("point") },
            AssignMismatch { vars: 2, vals: 1 },
            OkNotBool {
                ty: s("int"),
                ctx: Context::VariableDeclaration,
            },
            RecvAssignType {
                value_ty: s("int"),
                ty: s("string"),
            },
            NoNewVariables,
            AssignCaptured { name: s("n") },
            AssignNotVariable {
                name: s("n"),
                what: NameKind::Constant,
            },
            AssignString { expr: s("s[0]") },
            AssignNonPlace { expr: s("f()") },
            RecvNonChan {
                expr: s("p"),
                ty: s("int"),
            },
            SendNonChan {
                expr: s("p"),
                ty: s("int"),
            },
            CloseNonChan {
                expr: s("p"),
                ty: s("int"),
            },
            NonBoolCondition {
                ctx: Context::IfStatement,
                expr: s("n"),
                ty: s("int"),
            },
            NotEnoughReturnValues { want: s("int") },
            TooManyReturnValues,
            ReturnValueInGo,
            BreakOutside,
            ContinueOutside,
            InvalidLabel {
                stmt: Jump::Continue,
                label: s("outer"),
            },
            LabelUndefined {
                stmt: Jump::Break,
                label: s("outer"),
            },
            CannotRange {
                expr: s("f"),
                ty: s("float"),
            },
            RangeOneVariable { expr: s("10") },
            SwitchNotComparable {
                expr: s("l"),
                ty: s("[]int"),
            },
            MultipleDefaults {
                stmt: CaseStmt::Switch,
            },
            InvalidCase {
                case: s("\"a\""),
                tag: Some(s("n")),
                case_ty: s("untyped string"),
                tag_ty: s("int"),
            },
            GoBuiltin { name: s("print") },
            CallNonFunction {
                expr: s("l[0]"),
                ty: s("int"),
            },
            CallVariable {
                name: s("x"),
                ty: s("int"),
            },
            CallConstant { name: s("n") },
            ArgCount {
                name: s("add"),
                have: 1,
                want: 2,
            },
            BuiltinArgCount {
                name: "make",
                have: 3,
                min: 1,
                max: Some(2),
            },
            SpreadNonVariadic { name: s("f") },
            SpreadBuiltin { name: s("len") },
            SpreadNotFinal,
            DatasetShadowed,
            BuiltinArgType {
                expr: s("l"),
                ty: s("[]int"),
                builtin: "cap",
            },
            NotAList {
                expr: s("x"),
                ty: s("int"),
            },
            MakeNotAType { expr: s("x") },
            CannotMake { ty: s("int") },
            BadMilliseconds {
                expr: s("s"),
                ty: s("string"),
                builtin: "sleep",
            },
            LoweringInvalid {
                error: s("block 1: bad"),
            },
            EmptyProgram,
            TypeTooDeep { limit: 64 },
            Recover,
            InvalidMapKey { ty: s("[]int") },
            MultiValue {
                expr: s("f()"),
                ty: s("(int, bool)"),
            },
            ReturnCount {
                have: 1,
                want: s("(int, bool)"),
            },
            DuplicateMapKey { key: s("\"a\"") },
            AssignCapturedInFunc { name: s("n") },
            FuncCompare {
                expr: s("f == g"),
                kind: "func",
            },
            DeferBuiltin { name: s("len") },
            ReduceArgType {
                expr: s("names"),
                ty: s("[]string"),
                builtin: "allreduce_sum",
            },
        ]
    }

    #[test]
    fn one_example_of_every_variant() {
        assert_one_example_each(one_of_each().iter().map(variant), VARIANTS);
    }

    #[test]
    fn messages_follow_the_style() {
        one_of_each().iter().for_each(assert_message_style);
    }

    #[test]
    fn computed_parts_read_as_before() {
        use CheckError::*;
        let cases = [
            (
                AssignMismatch { vars: 1, vals: 2 },
                "assignment mismatch: 1 variable but 2 values",
            ),
            (
                AssignMismatch { vars: 2, vals: 1 },
                "assignment mismatch: 2 variables but 1 value",
            ),
            (
                ArgCount {
                    name: s("len"),
                    have: 0,
                    want: 1,
                },
                "not enough arguments in call to len (have 0, want 1)",
            ),
            (
                BuiltinArgCount {
                    name: "append",
                    have: 0,
                    min: 1,
                    max: None,
                },
                "not enough arguments for append (have 0, want at least 1)",
            ),
            (
                BuiltinArgCount {
                    name: "make",
                    have: 0,
                    min: 1,
                    max: Some(2),
                },
                "not enough arguments for make (have 0, want 1 or 2)",
            ),
            (
                BuiltinArgCount {
                    name: "make",
                    have: 3,
                    min: 1,
                    max: Some(2),
                },
                "too many arguments for make (have 3, want 1 or 2)",
            ),
            (
                InvalidCase {
                    case: s("1"),
                    tag: None,
                    case_ty: s("untyped int"),
                    tag_ty: s("bool"),
                },
                "invalid case 1 in switch (mismatched types untyped int and bool)",
            ),
            (
                CannotUse {
                    expr: s("1"),
                    ty: s("untyped int"),
                    constant: true,
                    target: s("string"),
                    ctx: Context::Send,
                    numeric: false,
                },
                "cannot use 1 (untyped int constant) as string value in send",
            ),
        ];
        for (e, want) in cases {
            assert_eq!(e.to_string(), want);
        }
    }
}
