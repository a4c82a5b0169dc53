//! Property: `decode` never panics on any bytes: random bytes, every
//! truncation of a valid program, and random byte corruptions. Whatever
//! decodes is then verified and dumped, which must not panic either.

mod common;

use proptest::prelude::*;
use weft_ir::irdoc::example_program;
use weft_ir::{decode, dump, encode, verify, DecodeError};

/// Decodes, and exercises verify and dump on whatever decodes.
fn check(bytes: &[u8]) -> Result<(), DecodeError> {
    let p = decode(bytes)?;
    let _ = verify(&p);
    let _ = dump(&p);
    Ok(())
}

#[test]
fn every_truncation_of_a_valid_program_is_handled() {
    let bytes = encode(&example_program());
    let mut errors = 0;
    for n in 0..bytes.len() {
        if let Err(e) = check(&bytes[..n]) {
            errors += 1;
            let msg = e.to_string();
            assert!(
                msg.starts_with("malformed program file: ")
                    || msg.starts_with("missing format version"),
                "{msg}"
            );
        }
    }
    assert!(errors > bytes.len() / 2, "most truncations are errors");
    check(&bytes).unwrap();
}

#[test]
fn deeply_nested_types_are_an_error_not_a_stack_overflow() {
    // 10_000 nested `chan` types: each level is a length-delimited field 3.
    let mut ty: Vec<u8> = Vec::new();
    for _ in 0..10_000 {
        let mut outer = vec![0x1a];
        prost::encoding::encode_varint(ty.len() as u64, &mut outer);
        outer.extend_from_slice(&ty);
        ty = outer;
    }
    let mut var = vec![0x0a, 0x01, b'x', 0x12];
    prost::encoding::encode_varint(ty.len() as u64, &mut var);
    var.extend_from_slice(&ty);
    let mut block = vec![0x1a];
    prost::encoding::encode_varint(var.len() as u64, &mut block);
    block.extend_from_slice(&var);
    let mut prog = vec![0x08, 0x01, 0x12];
    prost::encoding::encode_varint(block.len() as u64, &mut prog);
    prog.extend_from_slice(&block);
    let err = decode(&prog).unwrap_err();
    // One line, naming the limit once (prost lists `Type.kind: ` per level).
    assert_eq!(
        err.to_string(),
        "malformed program file: messages nested more than 100 deep (the decoder's limit; \
         a type nests at most 64 levels of [] and chan)"
    );
}

/// Whatever verifies decodes (issue 26): the deepest type `verify` accepts
/// round-trips wherever a type can sit, and one level more is a single
/// verifier error, not a decode failure of the written file.
#[test]
fn the_deepest_type_that_verifies_round_trips() {
    use weft_ir::builder::ProgramBuilder;
    use weft_ir::pb::Type;
    use weft_ir::MAX_TYPE_NESTING;
    let nest = |n: usize| {
        (0..n).fold(Type::int(), |t, i| {
            if i % 2 == 0 {
                Type::list(t)
            } else {
                Type::chan(t)
            }
        })
    };
    let program = |n: usize| {
        let mut b = ProgramBuilder::new();
        b.struct_decl("S", [("f", nest(n))]);
        let f = b.function("f", [("p", nest(n))], Some(nest(n)));
        b.var(f, "r", nest(n));
        b.op(f, "zero").output("Out", ["r"]).finish();
        b.op(f, "return").input("Value", ["r"]).finish();
        let main = b.func("main").finish();
        b.var(main, "c", nest(n));
        b.op(main, "zero").output("Out", ["c"]).finish();
        b.build()
    };
    let ok = program(MAX_TYPE_NESTING);
    verify(&ok).unwrap();
    assert_eq!(decode(&encode(&ok)).unwrap(), ok);
    let deep = program(MAX_TYPE_NESTING + 1);
    let err = verify(&deep).unwrap_err().to_string();
    assert!(
        err.contains("type nests more than 64 levels of list and chan"),
        "{err}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = check(&bytes);
    }

    #[test]
    fn corrupted_programs_never_panic(
        steps in common::recipe(25),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut bytes = encode(&common::build(&steps));
        if !bytes.is_empty() {
            for (at, b) in flips {
                let i = at.index(bytes.len());
                bytes[i] = b;
            }
            let n = cut.index(bytes.len() + 1);
            bytes.truncate(n);
        }
        let _ = check(&bytes);
    }
}
