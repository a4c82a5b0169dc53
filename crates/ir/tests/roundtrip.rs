//! Property: random programs built with `ProgramBuilder` survive
//! encode → decode unchanged (equal messages, equal dumps); `verify` and
//! `dump` never panic on them and are deterministic.

mod common;

use proptest::prelude::*;
use weft_ir::{decode, dump, encode, verify};

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn encode_decode_dump_round_trip(steps in common::recipe(40)) {
        let p = common::build(&steps);
        let bytes = encode(&p);
        let back = decode(&bytes).expect("a built program decodes");
        prop_assert_eq!(&back, &p);
        prop_assert_eq!(dump(&back), dump(&p));
        prop_assert_eq!(encode(&back), bytes);
    }

    #[test]
    fn verify_and_dump_are_total_and_deterministic(steps in common::recipe(40)) {
        let p = common::build(&steps);
        prop_assert_eq!(verify(&p), verify(&p));
        prop_assert_eq!(dump(&p), dump(&p));
        if let Err(e) = verify(&p) {
            prop_assert!(!e.issues.is_empty());
            prop_assert_eq!(e.to_string().lines().count(), e.issues.len());
        }
    }
}
