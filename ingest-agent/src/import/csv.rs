//! A CSV of samples: the header `workload,size,ns`, then one sample per row. A field may be
//! double-quoted (a name with a comma), with `""` for a quote inside it.

use super::{sample_ns, valid_size, At, Parsed};
use anyhow::{bail, Result};
use std::path::Path;

const HEADER: [&str; 3] = ["workload", "size", "ns"];

pub(super) fn parse(path: &Path, text: &str) -> Result<Parsed> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    let header = lines.next().map_or("", |(_, l)| l).trim_start_matches('\u{feff}');
    let line1 = At::new(path, "line 1");
    let fields = split(header, &line1)?;
    if fields.iter().map(|f| f.trim()).ne(HEADER) {
        bail!("{line1}: the header must be {}, not {header:?}", HEADER.join(","));
    }
    let mut parsed = Parsed::default();
    for (n, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let at = At::new(path, format!("line {n}"));
        let fields = split(line, &at)?;
        let [name, size, ns] = fields.as_slice() else {
            bail!("{at}: {} fields; expected 3 ({})", fields.len(), HEADER.join(","));
        };
        let (size, ns) = (size.trim(), ns.trim());
        let Some(size) = size.parse::<i128>().ok().and_then(valid_size) else {
            bail!("{at}: size {size:?} is not a whole number from 1 to 2^50");
        };
        let ns = match ns.parse::<f64>() {
            Ok(v) => sample_ns(v, &At::new(path, format!("line {n}, ns")))?,
            Err(_) => bail!("{at}: ns {ns:?} is not a number"),
        };
        parsed.family(name.trim(), || at.clone()).samples.entry(size).or_default().push(ns);
    }
    if parsed.families.is_empty() {
        bail!("{}: no samples after the header", At::new(path, ""));
    }
    Ok(parsed)
}

/// The fields of one line; quotes group, `""` inside quotes is a quote.
fn split(line: &str, at: &At) -> Result<Vec<String>> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = line.trim_end_matches('\r').chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.trim().is_empty() => {
                field.clear();
                quoted = true;
            }
            (false, ',') => fields.push(std::mem::take(&mut field)),
            (false, c) => field.push(c),
        }
    }
    if quoted {
        bail!("{at}: a quote is not closed");
    }
    fields.push(field);
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::super::tests::import;
    use super::super::Format;

    #[test]
    fn each_row_is_one_sample_of_its_workload_at_its_size() {
        let text =
            "workload,size,ns\r\nlex,1024,100\nlex,1024,110\n\n\"parse, fast\",1024,5\nlex,2048,200.5\nlex,4096,4e2\n\
                    \"parse, fast\",2048,10\n\"parse, fast\",4096,20\n";
        let imported = import(Format::Csv, "r.csv", text).unwrap();
        let lex = &imported.workloads[0];
        assert_eq!(lex.name, "lex");
        let samples: Vec<(u64, Vec<f64>)> = lex.measurements.iter().map(|m| (m.size, m.samples_ns.clone())).collect();
        assert_eq!(samples, [(1024, vec![100.0, 110.0]), (2048, vec![200.5]), (4096, vec![400.0])]);
        assert_eq!(imported.workloads[1].name, "parse, fast");
        assert_eq!(lex.metadata["import.format"], "csv");
        assert!(imported.warnings.is_empty());
    }

    #[test]
    fn a_bad_row_is_an_error_naming_its_line() {
        let ok = "lex,1,1\nlex,2,2\nlex,4,4\n";
        let cases = [
            ("size,workload,ns\n", "r.csv: line 1: the header must be workload,size,ns"),
            ("", "r.csv: line 1: the header must be workload,size,ns"),
            ("workload,size,ns\n", "r.csv: no samples after the header"),
            ("workload,size,ns\nlex,1,1\nlex,2,2\nlex,4,abc\n", "r.csv: line 4: ns \"abc\" is not a number"),
            ("workload,size,ns\nlex,1,1\nlex,two,2\n", "r.csv: line 3: size \"two\" is not a whole number"),
            ("workload,size,ns\nlex,0,1\n", "r.csv: line 2: size \"0\" is not a whole number from 1"),
            ("workload,size,ns\nlex,1,-3\n", "r.csv: line 2, ns: the time must be positive"),
            ("workload,size,ns\nlex,1,NaN\n", "r.csv: line 2, ns: the time is not a finite number"),
            ("workload,size,ns\nlex,1\n", "r.csv: line 2: 2 fields; expected 3"),
            ("workload,size,ns\n\"lex,1,1\n", "r.csv: line 2: a quote is not closed"),
            (
                "workload,size,ns\nlex,1,1\nlex,2,2\n",
                "r.csv: line 2: lex has 2 size(s) (1, 2); a slope needs at least 3",
            ),
            ("workload,size,ns\n ,1,1\n", "r.csv: line 2: workload \"\" is empty"),
        ];
        for (text, expected) in cases {
            let e = import(Format::Csv, "r.csv", text).unwrap_err();
            assert!(e.starts_with(expected), "{text:?}: {e}");
        }
        assert!(import(Format::Csv, "r.csv", &format!("workload,size,ns\n{ok}")).is_ok());
    }
}
