//! The editor files in `crates/lang/editor/` are valid JSON, the VS Code manifest
//! points at the grammar for `.weft` files, and the grammar highlights every
//! keyword of docs/language.md, "Lexical rules" and every builtin the compiler knows.

use std::path::Path;

fn json(rel: &str) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("editor")
        .join(rel);
    let text = std::fs::read_to_string(&path).expect("read editor file");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn manifest_uses_the_grammar() {
    let pkg = json("package.json");
    let lang = &pkg["contributes"]["languages"][0];
    assert_eq!(lang["id"], "weft");
    assert_eq!(lang["extensions"][0], ".weft");
    let grammar = &pkg["contributes"]["grammars"][0];
    assert_eq!(grammar["scopeName"], "source.weft");
    let path = grammar["path"].as_str().expect("grammar path");
    let g = json(path.trim_start_matches("./"));
    assert_eq!(g["scopeName"], "source.weft");
    json("language-configuration.json");
}

#[test]
fn grammar_knows_every_keyword_and_builtin() {
    let g = json("syntaxes/weft.tmLanguage.json");
    let text = g["repository"].to_string();
    let keywords = "func go chan select switch case default for range if else break continue return var const type struct true false nil";
    for k in keywords.split(' ') {
        assert!(
            text.contains(&format!("|{k}|"))
                || text.contains(&format!("({k}|"))
                || text.contains(&format!("|{k})")),
            "keyword {k}"
        );
    }
    let builtins = g["repository"]["builtins"]["match"]
        .as_str()
        .expect("builtins");
    for b in weft_lang::check::Builtin::ALL {
        assert!(
            builtins.contains(&format!("|{}|", b.name()))
                || builtins.contains(&format!("({}|", b.name()))
                || builtins.contains(&format!("|{})", b.name())),
            "builtin {}",
            b.name()
        );
    }
}
