//! A shape in words, for people: what `c/contracts/shapes.h` builds from its parameters.

use crate::search::space::Shape;

/// The letters of an alphabet of `k` as shapes.h writes them: `a`, `b`, … or the bytes from 0xe1.
fn letters(k: usize, high: bool) -> String {
    (0..k).map(|i| if high { format!("\\x{:02x}", 0xe1 + i) } else { ((b'a' + i as u8) as char).to_string() }).collect()
}

fn position(v: &str) -> String {
    match v {
        "first" => "first".into(),
        "second" => "second".into(),
        "mid" => "in the middle".into(),
        "last" => "last".into(),
        n => format!("{n} bytes in"),
    }
}

fn aligned(s: &Shape, what: &str) -> String {
    match s.get("align") {
        "" | "0" => String::new(),
        n => format!(", {what} {n} bytes past a 64-byte boundary"),
    }
}

/// The shape in words, e.g. "a needle `a…` with `z` last of m bytes in a haystack `a…` of 2m bytes".
pub fn describe(s: &Shape) -> String {
    let high = s.get("high") == "yes";
    match s.function.as_str() {
        "strstr" | "strcasestr" | "memmem" => search(s, high),
        "strspn" | "strcspn" | "strpbrk" => span(s, high),
        "strchr" | "strchrnul" | "strrchr" | "memchr" | "memrchr" => chr(s),
        "strcmp" | "strncmp" | "memcmp" | "strcasecmp" | "strncasecmp" => cmp(s, high),
        _ => copy(s, high),
    }
}

fn search(s: &Shape, high: bool) -> String {
    let k: usize = s.get("alphabet").parse().unwrap_or(1);
    let cycle = letters(k, high);
    let odd = if high { "\\xfa" } else { "z" };
    let needle = format!("`{cycle}…` with `{odd}` {}", position(s.get("mismatch")));
    let hay = if s.get("case") == "upper" {
        format!("`{}…` in upper case", cycle.to_uppercase())
    } else {
        format!("`{cycle}…`")
    };
    let guard = if s.get("guard") == "yes" { ", the haystack's end against an unreadable page" } else { "" };
    let found = if s.get("found") == "yes" { ", the needle ending it" } else { "" };
    match s.axis.as_str() {
        "needle" => format!("a needle {needle} of m bytes in a haystack {hay} of 2m bytes{found}{guard}"),
        "haystack" => {
            format!("a needle {needle} of {} bytes in a haystack {hay} of n bytes{found}{guard}", s.get("needle"))
        }
        _ => format!("a needle {needle} of 8 bytes found 1 byte into a haystack {hay} of n bytes{guard}"),
    }
}

fn span(s: &Shape, high: bool) -> String {
    let set = s.get("set");
    let from = if high { "0x80" } else { "0x21 (`!`)" };
    let at = if s.get("at") == "last" { "last" } else { "first" };
    let (made, stop) = if s.function == "strspn" {
        (format!("the set's {at} byte"), "a byte outside the set".to_string())
    } else {
        ("a byte outside the set".to_string(), format!("the set's {at} byte"))
    };
    let rest = if s.axis == "remaining" {
        format!("a text of n bytes of {made} whose span ends 1 byte in, at {stop}")
    } else {
        format!("a text of n bytes of {made}, all in its span")
    };
    format!("a set of {set} bytes from {from}; {rest}{}", aligned(s, "the text"))
}

fn chr(s: &Shape) -> String {
    let byte = match s.get("byte") {
        "high" => "the byte 0xe9 among 0xe8s",
        "nul" => "the terminator",
        _ => "`:` among `x`s",
    };
    let guard = if s.get("guard") == "yes" { ", with no terminator, against an unreadable page" } else { "" };
    let place = match (s.axis.as_str(), s.function.as_str()) {
        ("remaining", "memrchr") => "1 byte from its end",
        ("remaining", _) => "1 byte in",
        ("distance", _) => "last",
        ("length", "strrchr") => "first and only",
        _ => "nowhere",
    };
    format!("a text of n bytes with {byte} {place}{guard}{}", aligned(s, "the text"))
}

fn cmp(s: &Shape, high: bool) -> String {
    let c = if high { "0xe1" } else { "a" };
    let case = if s.get("case") == "upper" { ", the second in upper case" } else { "" };
    let what = match s.axis.as_str() {
        "remaining" => format!("two texts of n bytes of `{c}` that differ {} bytes in", s.get("at")),
        "bound" => {
            format!("two arrays of n equal bytes `{c}`, the bound n, no terminator, each against an unreadable page")
        }
        _ => format!("two equal texts of n bytes `{c}`"),
    };
    format!("{what}{case}{}", aligned(s, "the second"))
}

fn copy(s: &Shape, high: bool) -> String {
    let (c, stop) = if high { ("0xe8", "0xe9") } else { ("`x`", "`:`") };
    let what = match s.axis.as_str() {
        "remaining" => format!("n bytes of {c} with the stop byte {stop} {} bytes in", s.get("at")),
        "bound" => format!("n bytes of {c}, the bound n, no terminator, against an unreadable page"),
        _ => format!("a text of n bytes of {c}"),
    };
    format!("{what}{}", aligned(s, "the destination"))
}

#[cfg(test)]
mod tests {
    use super::describe;
    use crate::search::space::Shape;

    #[test]
    fn a_shape_reads_as_the_input_it_builds() {
        let s = Shape::parse("contract.strcasestr.needle~alphabet=1,mismatch=last,case=upper").unwrap();
        assert_eq!(describe(&s), "a needle `a…` with `z` last of m bytes in a haystack `A…` in upper case of 2m bytes");
        let s = Shape::parse("contract.strspn.remaining~set=3").unwrap();
        assert_eq!(
            describe(&s),
            "a set of 3 bytes from 0x21 (`!`); a text of n bytes of the set's first byte whose span ends 1 byte in, at a \
             byte outside the set"
        );
        let s = Shape::parse("contract.strncmp.bound~align=1").unwrap();
        assert!(describe(&s).contains("against an unreadable page, the second 1 bytes past"), "{}", describe(&s));
    }
}
