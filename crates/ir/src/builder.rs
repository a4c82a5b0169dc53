//! [`ProgramBuilder`]: build IR programs from Rust (the front end's lowering,
//! tests, fuzzers, other front ends).
//!
//! The builder only assembles messages; it checks nothing, so tests can build
//! malformed programs too. What it builds passes [`crate::verify()`] when used as
//! documented: create sub-blocks with [`ProgramBuilder::block`] under the block
//! of the op that will own them, declare every variable before the end, and
//! give each variable a name unique within its function
//! ([`ProgramBuilder::temp`] makes fresh ones).
//!
//! ```
//! use weft_ir::builder::ProgramBuilder;
//! use weft_ir::pb::Type;
//!
//! let mut b = ProgramBuilder::new();
//! let main = b.func("main").loc("ex.weft", 1, 1).finish();
//! b.var(main, "c", Type::chan(Type::int()));
//! b.var(main, "x", Type::int());
//! b.op(main, "make_chan").output("Out", ["c"]).loc("ex.weft", 2, 7).finish();
//! // go { c <- 1 }: the go op's block is a child of main's body.
//! let task = b.block(main);
//! b.var(task, "one", Type::int());
//! b.op(task, "const").output("Out", ["one"]).attr("value", 1).finish();
//! b.op(task, "send").input("Chan", ["c"]).input("Value", ["one"]).finish();
//! b.op(main, "go").input("Captures", ["c"]).attr("block", task).finish();
//! b.op(main, "recv").input("Chan", ["c"]).output("Out", ["x"]).finish();
//! b.op(main, "print").input("Args", ["x"]).finish();
//! let program = b.build_verified().expect("a valid program");
//! assert_eq!(program.blocks.len(), 3);
//! ```

use crate::codec::FORMAT_VERSION;
use crate::pb::{attr, Attr, BlockDesc, Field, FunctionDesc, OpDesc, OpVar, SourceLoc, StructDesc};
use crate::pb::{Bools, Floats, Ints, ProgramDesc, Strings, Type, VarDesc};
use crate::verify::{verify, VerifyError};

/// A block of the program being built (its index in `ProgramDesc.blocks`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockId(i32);

impl BlockId {
    /// The root block, 0.
    pub const ROOT: BlockId = BlockId(0);
    /// The block's index in `ProgramDesc.blocks`.
    pub fn idx(self) -> i32 {
        self.0
    }
}

/// Builds a [`ProgramDesc`]; see the module docs for an example.
#[derive(Clone, Debug)]
pub struct ProgramBuilder {
    program: ProgramDesc,
    temps: u64,
}

impl Default for ProgramBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ProgramBuilder {
    /// A program with only the root block, entry `main`, the current format version.
    pub fn new() -> Self {
        let root = BlockDesc {
            idx: 0,
            parent_idx: -1,
            ..Default::default()
        };
        ProgramBuilder {
            program: ProgramDesc {
                version: FORMAT_VERSION,
                blocks: vec![root],
                entry: "main".into(),
                ..Default::default()
            },
            temps: 0,
        }
    }

    /// Sets the entry function's name (default `main`).
    pub fn entry(&mut self, name: impl Into<String>) -> &mut Self {
        self.program.entry = name.into();
        self
    }

    /// Declares a struct with its fields in order.
    pub fn struct_decl<N: Into<String>>(
        &mut self,
        name: impl Into<String>,
        fields: impl IntoIterator<Item = (N, Type)>,
    ) -> &mut Self {
        self.program.structs.push(StructDesc {
            name: name.into(),
            fields: fields.into_iter().map(|(n, t)| field(n, t)).collect(),
        });
        self
    }

    /// Declares the predeclared struct `Dataset { x tensor; y []int }` (the
    /// result of `load_dataset`) unless already declared; returns its type.
    pub fn dataset_struct(&mut self) -> Type {
        if !self.program.structs.iter().any(|s| s.name == "Dataset") {
            self.struct_decl(
                "Dataset",
                [("x", Type::tensor()), ("y", Type::list(Type::int()))],
            );
        }
        Type::struct_named("Dataset")
    }

    /// Starts declaring a function; [`FunctionBuilder::finish`] returns its body block.
    pub fn func(&mut self, name: impl Into<String>) -> FunctionBuilder<'_> {
        FunctionBuilder {
            b: self,
            desc: FunctionDesc {
                name: name.into(),
                ..Default::default()
            },
        }
    }

    /// Declares a function with its parameters and result; returns its body
    /// block, where the parameters are declared as variables.
    pub fn function<N: Into<String>>(
        &mut self,
        name: impl Into<String>,
        params: impl IntoIterator<Item = (N, Type)>,
        result: Option<Type>,
    ) -> BlockId {
        let mut f = self.func(name);
        for (n, t) in params {
            f = f.param(n, t);
        }
        if let Some(r) = result {
            f = f.result(r);
        }
        f.finish()
    }

    /// Creates an empty sub-block whose parent is `parent`; give it to the op
    /// that owns it as a block attribute.
    pub fn block(&mut self, parent: BlockId) -> BlockId {
        self.new_block(parent.0)
    }

    /// The block with index `idx`, if it exists (for fuzzers picking blocks).
    pub fn block_id(&self, idx: i32) -> Option<BlockId> {
        (0..self.program.blocks.len() as i64)
            .contains(&i64::from(idx))
            .then_some(BlockId(idx))
    }

    /// Declares variable `name` of type `ty` in `block`.
    pub fn var(&mut self, block: BlockId, name: impl Into<String>, ty: Type) -> &mut Self {
        self.block_mut(block).vars.push(VarDesc {
            name: name.into(),
            r#type: Some(ty),
        });
        self
    }

    /// Declares a fresh temporary (`%1`, `%2`, ...; unique in the program) of
    /// type `ty` in `block` and returns its name.
    pub fn temp(&mut self, block: BlockId, ty: Type) -> String {
        self.temps += 1;
        let name = format!("%{}", self.temps);
        self.var(block, name.clone(), ty);
        name
    }

    /// Starts an op of type `ty` to append to `block`; [`OpBuilder::finish`] appends it.
    pub fn op(&mut self, block: BlockId, ty: impl Into<String>) -> OpBuilder<'_> {
        OpBuilder {
            b: self,
            block,
            desc: OpDesc {
                r#type: ty.into(),
                ..Default::default()
            },
        }
    }

    /// The program built so far.
    pub fn program(&self) -> &ProgramDesc {
        &self.program
    }

    /// The program built so far, for changes the builder has no method for.
    pub fn program_mut(&mut self) -> &mut ProgramDesc {
        &mut self.program
    }

    /// The finished program (not verified).
    pub fn build(self) -> ProgramDesc {
        self.program
    }

    /// The finished program, if it passes [`verify`].
    pub fn build_verified(self) -> Result<ProgramDesc, VerifyError> {
        verify(&self.program)?;
        Ok(self.program)
    }

    fn new_block(&mut self, parent: i32) -> BlockId {
        let idx = self.program.blocks.len() as i32;
        self.program.blocks.push(BlockDesc {
            idx,
            parent_idx: parent,
            ..Default::default()
        });
        BlockId(idx)
    }

    /// The block, created (with no owner, so `verify` reports it) if a
    /// [`BlockId`] from another builder points past this one's blocks.
    fn block_mut(&mut self, block: BlockId) -> &mut BlockDesc {
        let want = usize::try_from(block.0).unwrap_or(0);
        while self.program.blocks.len() <= want {
            self.new_block(0);
        }
        &mut self.program.blocks[want]
    }
}

/// Declares one function; made by [`ProgramBuilder::func`].
#[must_use = "call finish() to add the function"]
pub struct FunctionBuilder<'a> {
    b: &'a mut ProgramBuilder,
    desc: FunctionDesc,
}

impl FunctionBuilder<'_> {
    /// Adds a parameter (declared as a variable of the body block).
    pub fn param(mut self, name: impl Into<String>, ty: Type) -> Self {
        self.desc.params.push(field(name, ty));
        self
    }
    /// Sets the result type.
    pub fn result(mut self, ty: Type) -> Self {
        self.desc.result = Some(ty);
        self
    }
    /// Sets the declaration's source location.
    pub fn loc(mut self, file: impl Into<String>, line: u32, col: u32) -> Self {
        self.desc.loc = Some(loc(file, line, col));
        self
    }
    /// Adds the function; returns its body block (parameters already declared).
    pub fn finish(self) -> BlockId {
        let FunctionBuilder { b, mut desc } = self;
        let body = b.new_block(0);
        desc.body_block = body.0;
        for p in &desc.params {
            b.program.blocks[body.0 as usize].vars.push(VarDesc {
                name: p.name.clone(),
                r#type: p.r#type.clone(),
            });
        }
        b.program.functions.push(desc);
        body
    }
}

/// Builds one op; made by [`ProgramBuilder::op`].
#[must_use = "call finish() to append the op"]
pub struct OpBuilder<'a> {
    b: &'a mut ProgramBuilder,
    block: BlockId,
    desc: OpDesc,
}

impl OpBuilder<'_> {
    /// Binds input slot `slot` to `args` (appends to the slot if it is already bound).
    pub fn input<S: Into<String>>(mut self, slot: &str, args: impl IntoIterator<Item = S>) -> Self {
        bind(&mut self.desc.inputs, slot, args);
        self
    }
    /// Binds output slot `slot` to `args` (`_` discards a value).
    pub fn output<S: Into<String>>(
        mut self,
        slot: &str,
        args: impl IntoIterator<Item = S>,
    ) -> Self {
        bind(&mut self.desc.outputs, slot, args);
        self
    }
    /// Sets attribute `name` (an int, float, string, bool, `Vec<i64>`, [`BlockId`],
    /// `Vec<BlockId>`, [`Type`], ...).
    pub fn attr(mut self, name: impl Into<String>, value: impl Into<attr::Value>) -> Self {
        self.desc.attrs.push(Attr {
            name: name.into(),
            value: Some(value.into()),
        });
        self
    }
    /// Sets the source location.
    pub fn loc(mut self, file: impl Into<String>, line: u32, col: u32) -> Self {
        self.desc.loc = Some(loc(file, line, col));
        self
    }
    /// Sets the source location from a [`SourceLoc`] (or clears it with `None`).
    pub fn loc_opt(mut self, loc: Option<SourceLoc>) -> Self {
        self.desc.loc = loc;
        self
    }
    /// Places the op on a device (`cpu`, `cuda:0`, ...).
    pub fn device(mut self, device: impl Into<String>) -> Self {
        self.desc.device = device.into();
        self
    }
    /// Appends the op to its block; returns its index there.
    pub fn finish(self) -> usize {
        let OpBuilder { b, block, desc } = self;
        let ops = &mut b.block_mut(block).ops;
        ops.push(desc);
        ops.len() - 1
    }
}

fn bind<S: Into<String>>(slots: &mut Vec<OpVar>, slot: &str, args: impl IntoIterator<Item = S>) {
    let args = args.into_iter().map(Into::into);
    match slots.iter_mut().find(|s| s.slot == slot) {
        Some(s) => s.args.extend(args),
        None => slots.push(OpVar {
            slot: slot.into(),
            args: args.collect(),
        }),
    }
}

fn field(name: impl Into<String>, ty: Type) -> Field {
    Field {
        name: name.into(),
        r#type: Some(ty),
    }
}

/// A [`SourceLoc`].
pub fn loc(file: impl Into<String>, line: u32, col: u32) -> SourceLoc {
    SourceLoc {
        file: file.into(),
        line,
        col,
    }
}

impl From<i64> for attr::Value {
    fn from(v: i64) -> Self {
        attr::Value::I(v)
    }
}
impl From<i32> for attr::Value {
    fn from(v: i32) -> Self {
        attr::Value::I(v.into())
    }
}
impl From<f64> for attr::Value {
    fn from(v: f64) -> Self {
        attr::Value::F(v)
    }
}
impl From<bool> for attr::Value {
    fn from(v: bool) -> Self {
        attr::Value::B(v)
    }
}
impl From<&str> for attr::Value {
    fn from(v: &str) -> Self {
        attr::Value::S(v.into())
    }
}
impl From<String> for attr::Value {
    fn from(v: String) -> Self {
        attr::Value::S(v)
    }
}
impl From<Vec<i64>> for attr::Value {
    fn from(v: Vec<i64>) -> Self {
        attr::Value::Ints(Ints { v })
    }
}
impl From<Vec<f64>> for attr::Value {
    fn from(v: Vec<f64>) -> Self {
        attr::Value::Floats(Floats { v })
    }
}
impl From<Vec<String>> for attr::Value {
    fn from(v: Vec<String>) -> Self {
        attr::Value::Strings(Strings { v })
    }
}
impl From<Vec<bool>> for attr::Value {
    fn from(v: Vec<bool>) -> Self {
        attr::Value::Bools(Bools { v })
    }
}
impl From<BlockId> for attr::Value {
    fn from(v: BlockId) -> Self {
        attr::Value::Block(v.0)
    }
}
impl From<Vec<BlockId>> for attr::Value {
    fn from(v: Vec<BlockId>) -> Self {
        attr::Value::Blocks(Ints {
            v: v.into_iter().map(|b| i64::from(b.0)).collect(),
        })
    }
}
impl From<Type> for attr::Value {
    fn from(v: Type) -> Self {
        attr::Value::Type(v)
    }
}
