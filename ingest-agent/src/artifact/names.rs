//! From the names a symbol table gives a function to the name the catalogue gives it, and to the
//! name a person reads.
//!
//! A libc names one function several ways: `strspn` and Zig 0.16's `c.string.strspn`; glibc's
//! `__GI_strspn` and its ifunc variants `__strspn_sse42`; musl's `__strchrnul` beside
//! `strchrnul`; a dynamic import `strspn@GLIBC_2.2.5`; a fortified `__memcpy_chk`; glibc's
//! `__isoc99_sscanf` for `sscanf`. Each leads back to one catalogue name; `strspn_foo` or
//! `__strspn_foo` do not.

/// The catalogue name `name` stands for on its own, where one of its forms says so; `None` for
/// a bare leading-underscore alias (`__strchrnul`), which [`underscored`] decides with the other
/// names of the artifact in view.
pub fn catalogue_name<'f>(name: &str, functions: &[&'f str]) -> Option<&'f str> {
    let name = unversioned(name);
    let find = |n: &str| functions.iter().copied().find(|f| *f == n);
    if let Some(f) = find(name) {
        return Some(f);
    }
    if let Some(f) = zig_alias(name).and_then(find) {
        return Some(f);
    }
    if let Some(f) = ["__GI_", "__isoc99_", "__isoc23_"].iter().find_map(|p| name.strip_prefix(p)).and_then(find) {
        return Some(f);
    }
    let inner = name.strip_prefix("__")?;
    if let Some(f) = inner.strip_suffix("_chk").and_then(find) {
        return Some(f);
    }
    // glibc's ifunc variants: `__strspn_sse42`, `__memmove_avx_unaligned_erms`, `__memcpy_chk_avx2`.
    inner.match_indices('_').find_map(|(at, _)| {
        let (base, suffix) = (&inner[..at], &inner[at + 1..]);
        let suffix = suffix.strip_prefix("chk_").unwrap_or(suffix);
        find(base).filter(|_| is_variant(suffix))
    })
}

/// The catalogue name a leading-underscore alias such as `__strchrnul` or `__stpcpy` stands for:
/// the name without its underscores, when the catalogue has it and no other function of the
/// artifact carries it (`beside` is every catalogue name found on another address).
pub fn underscored<'f>(name: &str, functions: &[&'f str], beside: &[&str]) -> Option<&'f str> {
    let bare = unversioned(name).trim_start_matches('_');
    if bare.len() + 2 > unversioned(name).len() {
        return None;
    }
    functions.iter().copied().find(|f| *f == bare && !beside.contains(f))
}

/// `name` without a symbol version: `strspn@GLIBC_2.2.5` and `memcpy@@GLIBC_2.14` as `strspn`
/// and `memcpy`.
pub fn unversioned(name: &str) -> &str {
    name.split_once('@').map_or(name, |(n, _)| n)
}

/// The function a Zig alias names: `strspn` of `c.string.strspn` (Zig 0.16's libc) and `strlen`
/// of `compiler_rt.strlen`; none for a longer path such as `compiler_rt.memcpy.memcpyFast`.
pub fn zig_alias(name: &str) -> Option<&str> {
    if let Some(rest) = name.strip_prefix("c.") {
        let (module, function) = rest.split_once('.')?;
        return (!module.is_empty() && is_identifier(module) && is_identifier(function)).then_some(function);
    }
    name.strip_prefix("compiler_rt.").filter(|f| is_identifier(f))
}

/// Whether `name` is one of Zig 0.16's libc aliases, `c.<module>.<function>`.
pub fn is_zig_libc(name: &str) -> bool {
    name.starts_with("c.") && zig_alias(name).is_some()
}

/// Whether `name` is a name a libc's own functions carry: Zig's `c.*` and `compiler_rt.*`
/// aliases, or a name C reserves to the implementation
/// (a leading underscore: glibc's `__GI_*`, `_dl_*`, `_IO_*` and ifunc variants, musl's
/// `__copy_tls`). Mangled
/// names (`_Z…`, `_R…`) and the C++ runtime's (`__cxa_*`, `__gxx_*`, `_GLOBAL__*`) are not.
pub fn is_libc_internal(name: &str) -> bool {
    const NOT_LIBC: &[&str] = &["_Z", "_R", "__cxa_", "__gxx_", "__cxx", "_GLOBAL__", "__rust", "__rdl_", "__rg_"];
    zig_alias(name).is_some() || (name.starts_with('_') && !NOT_LIBC.iter().any(|p| name.starts_with(p)))
}

/// Whether `suffix` names only CPU features or tunings, as glibc's ifunc variants end:
/// `sse42`, `avx2_rtm`, `avx_unaligned_erms`, `sse4_1`, `evex512`; aarch64's `simd`, `sve`, ….
fn is_variant(suffix: &str) -> bool {
    const TOKENS: &[&str] = &[
        "sse2",
        "ssse3",
        "sse4",
        "sse42",
        "avx",
        "avx2",
        "avx512",
        "avx512f",
        "avx512vl",
        "avx512bw",
        "evex",
        "evex512",
        "rtm",
        "erms",
        "unaligned",
        "aligned",
        "generic",
        "back",
        "nocacheline",
        "no",
        "bsf",
        "vzeroupper",
        "x86_64",
        "ia32",
        "simd",
        "nosimd",
        "sve",
        "mops",
        "thunderx",
        "thunderx2",
        "falkor",
        "a64fx",
        "oryon1",
        "zva64",
        "emag",
        "kunpeng",
        "asimd",
    ];
    let mut tokens = suffix.split('_').peekable();
    let mut any = false;
    while let Some(t) = tokens.next() {
        match t {
            // `sse4_1` and `sse4_2` split at their underscore.
            "sse4" => {
                if !matches!(tokens.next(), Some("1" | "2")) {
                    return false;
                }
            }
            "x86" => {
                if tokens.next() != Some("64") {
                    return false;
                }
            }
            t if TOKENS.contains(&t) => {}
            _ => return false,
        }
        any = true;
    }
    any
}

fn is_identifier(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// `name` demangled for people: Rust first (without its hash), then C++; any other as it is.
pub fn demangle(name: &str) -> String {
    if let Ok(d) = rustc_demangle::try_demangle(name) {
        return format!("{d:#}");
    }
    if name.starts_with("_Z") {
        if let Ok(s) = cpp_demangle::Symbol::new(name) {
            if let Ok(d) = s.demangle(&cpp_demangle::DemangleOptions::default()) {
                return d;
            }
        }
    }
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CATALOGUE: &[&str] = &["strspn", "strchrnul", "memcpy", "memmove", "strchr", "sscanf", "stpcpy", "strcmp"];

    #[test]
    fn each_form_of_a_libc_name_leads_to_its_catalogue_name() {
        for (symbol, expected) in [
            ("strspn", "strspn"),
            ("c.string.strspn", "strspn"),
            ("compiler_rt.memcpy", "memcpy"),
            ("strspn@GLIBC_2.2.5", "strspn"),
            ("memcpy@@GLIBC_2.14", "memcpy"),
            ("__GI_strspn", "strspn"),
            ("__memcpy_chk", "memcpy"),
            ("__memcpy_chk@GLIBC_2.3.4", "memcpy"),
            ("__strspn_sse42", "strspn"),
            ("__strchr_avx2_rtm", "strchr"),
            ("__memmove_avx_unaligned_erms", "memmove"),
            ("__memmove_chk_avx512_unaligned_erms", "memmove"),
            ("__strchr_sse2_no_bsf", "strchr"),
            ("__strcmp_sse4_2", "strcmp"),
            ("__isoc99_sscanf", "sscanf"),
            ("__isoc23_sscanf@GLIBC_2.38", "sscanf"),
        ] {
            assert_eq!(catalogue_name(symbol, CATALOGUE), Some(expected), "{symbol}");
        }
    }

    #[test]
    fn a_name_that_only_begins_like_a_libc_function_is_not_it() {
        for symbol in [
            "strspn_foo",
            "__strspn_foo",
            "my_strspn",
            "c.string.strspn.state",
            "compiler_rt.memcpy.memcpyFast",
            "__memcpy_fwd",
            "__strcmp_sse4_3",
            "__strcmp_",
            "__strchrnul",
        ] {
            assert_eq!(catalogue_name(symbol, CATALOGUE), None, "{symbol}");
        }
    }

    #[test]
    fn a_leading_underscore_alias_counts_unless_the_bare_name_is_elsewhere() {
        assert_eq!(underscored("__strchrnul", CATALOGUE, &[]), Some("strchrnul"));
        assert_eq!(underscored("__stpcpy", CATALOGUE, &["strspn"]), Some("stpcpy"));
        assert_eq!(underscored("__strchrnul", CATALOGUE, &["strchrnul"]), None);
        assert_eq!(underscored("strchrnul", CATALOGUE, &[]), None, "no underscore, no alias");
        assert_eq!(underscored("_strchrnul", CATALOGUE, &[]), None, "one underscore is a name of its own");
        assert_eq!(underscored("__strtok", CATALOGUE, &[]), None, "not in the catalogue");
    }

    #[test]
    fn libc_internal_names_are_told_apart_from_the_programs() {
        assert!(is_libc_internal("c.string.strtok"));
        assert!(is_libc_internal("__GI_strtok"));
        assert!(is_libc_internal("__libc_start_main"));
        assert!(is_libc_internal("__strspn_sse42"));
        assert!(is_libc_internal("_dl_relocate_object"));
        assert!(!is_libc_internal("count_spans"));
        assert!(!is_libc_internal("__cxa_finalize"));
        assert!(!is_libc_internal("_ZN4core3fmt5write17h0123456789abcdefE"));
        assert!(is_zig_libc("c.wchar.wcsspn"));
        assert!(!is_zig_libc("compiler_rt.strlen"));
    }

    #[test]
    fn mangled_names_are_demangled() {
        assert_eq!(demangle("_ZN4core3fmt5write17h0123456789abcdefE"), "core::fmt::write");
        assert_eq!(demangle("_Z5helloi"), "hello(int)");
        assert_eq!(demangle("count_spans"), "count_spans");
    }
}
