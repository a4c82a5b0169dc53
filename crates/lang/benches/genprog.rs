//! Generates a large, valid Weft program of about `lines` lines for the
//! check benchmark and its test: a struct, then many functions mixing
//! loops, channels, select, switch, go blocks, lists and structs.

use std::fmt::Write as _;

/// The body of one generated function (about 40 lines), numbered `i`.
fn function(out: &mut String, i: usize) {
    let _ = write!(
        out,
        r#"func work{i}(n int, in chan int, out chan Item) int {{
	total := 0
	items := []Item{{}}
	for k := 0; k < n; k++ {{
		v := k * {i} % 7
		if v > 3 && k != 2 || v == 0 {{
			total += v
		}} else {{
			total -= 1
		}}
		items = append(items, Item{{id: k, name: str(k), score: float(v) * 1.5}})
	}}
	switch total % 3 {{
	case 0:
		total++
	case 1, 2:
		total--
	default:
		total = 0
	}}
	done := make(chan bool, 1)
	go {{
		sum := 0
		for _, it := range items {{
			sum += it.id
		}}
		done <- sum > 0
	}}
	select {{
	case x, ok := <-in:
		if ok {{
			total += x
		}}
	case out <- items[0]:
	default:
	}}
	<-done
	items[0].score += 2.0
	return total + len(items)
}}

"#
    );
}

/// A program of roughly `lines` lines that checks without errors.
pub fn program(lines: usize) -> String {
    let mut out = String::from("type Item struct {\n\tid int\n\tname string\n\tscore float\n}\n\n");
    let mut n = 0;
    while out.lines().count() + 60 < lines {
        function(&mut out, n);
        n += 1;
    }
    out.push_str("func main() {\n\tin := make(chan int, 1)\n\tout := make(chan Item, 1)\n");
    for i in 0..n.min(50) {
        let _ = writeln!(out, "\tprint(work{i}(3, in, out))");
    }
    while out.lines().count() < lines {
        out.push_str("\tprint(\"padding\")\n");
    }
    out.push_str("}\n");
    out
}
