use super::*;

#[test]
fn dump() {
    let mut functions: Vec<&str> = crate::builds::contracts::catalogue().iter().map(|p| p.function.as_str()).collect();
    functions.sort();
    functions.dedup();
    for f in std::env::var("DUMP").unwrap_or_default().split(':').filter(|f| !f.is_empty()) {
        let t = std::time::Instant::now();
        let a = scan(Path::new(f), &functions).unwrap();
        eprintln!("{f} ({:?}): {} {:?} {:?}", t.elapsed(), a.libc.name, a.libc.evidence, a.unused);
        for u in &a.uses {
            eprintln!("  {} {:?} calls={} ref={} callers={:?}", u.function, u.aliases, u.call_sites, u.referenced, u.callers.iter().take(3).map(|c| (&c.name, c.sites, c.in_libc)).collect::<Vec<_>>());
        }
    }
}
