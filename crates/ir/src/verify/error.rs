//! The verifier's errors: each [`Issue`] names where it is (program, struct,
//! function, block, or block + op index + op type) and what is wrong
//! ([`IssueKind`]); [`VerifyError`] holds every issue found, in program order.

use std::fmt;

/// Where an issue is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Site {
    /// The program as a whole.
    Program,
    /// A struct declaration.
    Struct(String),
    /// A function declaration.
    Function(String),
    /// A block (its variables or its place in the tree).
    Block(i32),
    /// One op: its block, its index there and its type.
    Op {
        /// The block index.
        block: i32,
        /// The op's index in the block.
        op: usize,
        /// The op's type.
        ty: String,
    },
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Site::Program => f.write_str("program"),
            Site::Struct(n) => write!(f, "struct {n:?}"),
            Site::Function(n) => write!(f, "function {n:?}"),
            Site::Block(b) => write!(f, "block {b}"),
            Site::Op { block, op, ty } => write!(f, "block {block}, op {op} ({ty})"),
        }
    }
}

/// What is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IssueKind {
    /// `version` is not [`crate::FORMAT_VERSION`].
    #[error("unsupported format version {found} (expected {expected})")]
    Version {
        /// The version in the program.
        found: u32,
        /// The version this build reads.
        expected: u32,
    },
    /// The program has no root block.
    #[error("program has no blocks")]
    NoBlocks,
    /// `blocks[i].idx != i`.
    #[error("idx is {found}, expected its position {expected}")]
    BlockIdx {
        /// The stored idx.
        found: i32,
        /// The block's position.
        expected: i32,
    },
    /// Block 0's parent is not -1.
    #[error("root block has parent {0}, expected -1")]
    RootParent(i32),
    /// Block 0 declares variables or holds ops.
    #[error("root block must hold no variables and no ops")]
    RootNotEmpty,
    /// A non-root block's parent is not a block.
    #[error("parent {0} is not a block")]
    BadParent(i32),
    /// Following parents from a block comes back to it.
    #[error("block is its own ancestor (parent cycle)")]
    ParentCycle,
    /// A block attribute points past the block list.
    #[error("attribute {attr:?} refers to block {target}, past the {count} blocks")]
    DanglingBlock {
        /// The attribute.
        attr: String,
        /// The index it holds.
        target: i64,
        /// The number of blocks.
        count: usize,
    },
    /// A block attribute points at the op's own block or an ancestor of it.
    #[error("attribute {attr:?} refers to block {target}, the op's own block or an ancestor of it (cycle)")]
    CyclicBlock {
        /// The attribute.
        attr: String,
        /// The block it refers to.
        target: i32,
    },
    /// A block is owned by two attributes or functions.
    #[error("{what} refers to block {target}, already owned by {owner}")]
    OwnedTwice {
        /// The second owner's attribute or role.
        what: String,
        /// The block.
        target: i32,
        /// The first owner.
        owner: String,
    },
    /// An owned block's parent is not its owner's block.
    #[error("{what} refers to block {target}, whose parent is {parent}, not {expected}")]
    WrongParent {
        /// The owner's attribute or role.
        what: String,
        /// The block.
        target: i32,
        /// The block's parent.
        parent: i32,
        /// The parent it should have.
        expected: i32,
    },
    /// A non-root block that no op or function owns.
    #[error("block is not owned by any op or function")]
    Orphan,
    /// The op type is not in the registry.
    #[error("unknown op type {0:?}")]
    UnknownOp(String),
    /// A required input slot is absent.
    #[error("missing required input {0:?}")]
    MissingInput(&'static str),
    /// A required output slot is absent.
    #[error("missing required output {0:?}")]
    MissingOutput(&'static str),
    /// A required attribute is absent.
    #[error("missing required attribute {0:?}")]
    MissingAttr(&'static str),
    /// A slot the op type does not have.
    #[error("unknown {dir} slot {slot:?}")]
    UnknownSlot {
        /// `input` or `output`.
        dir: &'static str,
        /// The slot name.
        slot: String,
    },
    /// A slot listed twice.
    #[error("{dir} slot {slot:?} listed twice")]
    DuplicateSlot {
        /// `input` or `output`.
        dir: &'static str,
        /// The slot name.
        slot: String,
    },
    /// A slot bound to the wrong number of variables.
    #[error("slot {slot:?} takes {takes}, got {got}")]
    SlotArity {
        /// The slot name.
        slot: &'static str,
        /// `one variable` or `at most one variable`.
        takes: &'static str,
        /// How many it got.
        got: usize,
    },
    /// An attribute the op type does not have.
    #[error("unknown attribute {0:?}")]
    UnknownAttr(String),
    /// An attribute listed twice.
    #[error("attribute {0:?} listed twice")]
    DuplicateAttr(String),
    /// An attribute of the wrong kind.
    #[error("attribute {name:?} must be {expected}, got {got}")]
    AttrKind {
        /// The attribute.
        name: String,
        /// The kind the registry gives.
        expected: String,
        /// The kind it holds.
        got: String,
    },
    /// A variable used but not in scope.
    #[error("variable {0:?} is not declared in this block or an ancestor")]
    Undeclared(String),
    /// `_` as an input, or an empty name in any slot.
    #[error("slot {0:?} names {1:?}, which is not a variable")]
    NotAVariable(&'static str, String),
    /// A variable declared twice in one block.
    #[error("variable {0:?} declared twice")]
    DuplicateVar(String),
    /// A variable declared with an empty name or `_`.
    #[error("variable declared with the reserved name {0:?}")]
    ReservedVarName(String),
    /// A variable with the name of one in an ancestor block of the same function.
    #[error("variable {name:?} shadows the one declared in block {outer}")]
    Shadow {
        /// The name.
        name: String,
        /// The ancestor block declaring it.
        outer: i32,
    },
    /// A variable bound to a slot whose type it does not have.
    #[error("slot {slot:?} needs {expected} but {var:?} is {got}")]
    SlotType {
        /// The slot.
        slot: &'static str,
        /// The slot's type.
        expected: String,
        /// The variable.
        var: String,
        /// Its type.
        got: String,
    },
    /// A channel operand that is not a channel.
    #[error("operand {var:?} of slot {slot:?} is {got}, not a channel")]
    NotChan {
        /// The slot.
        slot: &'static str,
        /// The variable.
        var: String,
        /// Its type.
        got: String,
    },
    /// A value whose type is not the channel's element type.
    #[error("channel {chan:?} carries {elem} but {role}{var:?} is {got}")]
    ChanElem {
        /// The channel variable.
        chan: String,
        /// Its element type.
        elem: String,
        /// `value ` for a sent value, empty for a received one.
        role: &'static str,
        /// The value variable.
        var: String,
        /// Its type.
        got: String,
    },
    /// A type relation of the op's meaning does not hold.
    #[error("{0}")]
    Mismatch(String),
    /// A call to a function that does not exist.
    #[error("unknown function {0:?}")]
    UnknownFunc(String),
    /// A call with the wrong number of arguments.
    #[error("function {func:?} takes {expected} arguments, got {got}")]
    ArgCount {
        /// The function.
        func: String,
        /// Its parameter count.
        expected: usize,
        /// The argument count.
        got: usize,
    },
    /// The entry function does not exist.
    #[error("entry function {0:?} is not defined")]
    NoEntry(String),
    /// The entry function has parameters or a result.
    #[error("entry function {0:?} must take no parameters and return nothing")]
    EntrySignature(String),
    /// A struct type naming an undeclared struct.
    #[error("{0}: struct {1:?} is not declared")]
    UnknownStruct(String, String),
    /// A type with no kind set.
    #[error("{0}: type has no kind set")]
    TypeUnset(String),
    /// A scalar or tensor type with an unknown enum value.
    #[error("{0}: invalid {1}")]
    BadType(String, String),
    /// A type nesting `[]` and `chan` deeper than `MAX_TYPE_NESTING` (a
    /// `.pb` file could not hold it: `crate::codec::DECODE_DEPTH_LIMIT`).
    #[error(
        "{0}: type nests more than {limit} levels of list and chan",
        limit = crate::MAX_TYPE_NESTING
    )]
    TypeTooDeep(String),
    /// Two functions, structs or fields with one name.
    #[error("{0} {1:?} declared twice")]
    DuplicateName(&'static str, String),
    /// A struct that contains itself by value.
    #[error("struct contains itself by value through field {0:?}")]
    StructCycle(String),
    /// A parameter not declared in the body block with its type.
    #[error("parameter {0:?} is not declared in the body block with its type")]
    ParamNotDeclared(String),
    /// A device string that is not empty, `cpu` or `cuda:N`.
    #[error("invalid device {0:?} (expected \"\", \"cpu\" or \"cuda:N\")")]
    BadDevice(String),
    /// `break` or `continue` with nothing to leave.
    #[error("{0} is not inside a {1}")]
    NoTarget(&'static str, &'static str),
    /// `break` or `continue` naming a label no enclosing op has.
    #[error("{0} names label {1:?}, which no enclosing {2} has")]
    UnknownLabel(&'static str, String, &'static str),
    /// A go block using an outer variable it does not capture.
    #[error("go block uses {var:?} of an enclosing block but block {go_block}, op {go_op} (go) does not capture it")]
    NotCaptured {
        /// The variable.
        var: String,
        /// The go op's block.
        go_block: i32,
        /// The go op's index.
        go_op: usize,
    },
}

/// One problem found by the verifier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issue {
    /// Where it is.
    pub site: Site,
    /// What is wrong.
    pub kind: IssueKind,
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.site {
            Site::Program => write!(f, "{}", self.kind),
            site => write!(f, "{site}: {}", self.kind),
        }
    }
}

/// Every problem the verifier found (at least one). Display: one per line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyError {
    /// The problems, in program order.
    pub issues: Vec<Issue>,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, issue) in self.issues.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{issue}")?;
        }
        Ok(())
    }
}

impl std::error::Error for VerifyError {}
