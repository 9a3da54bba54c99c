//! A pack expansion among a lambda's parameters as GNU's demangler writes it
//! (`{lambda((auto:1&)...)#1}` for `UlDpRT_E_`); cpp_demangle writes the element's type
//! alone (`{lambda(auto:1&)#1}`), so the packs are read from the mangled name.

use super::mangled::{Token, Tokens};
use super::matching;

/// A lambda signature (`Ul <type>+ E [<number>] _`) that holds a pack expansion.
#[derive(Debug, PartialEq)]
struct LambdaPacks {
    /// The closure's number as written (`#1` for `E_`, `#2` for `E0_`).
    number: usize,
    /// How many parameters the signature has.
    params: usize,
    /// Which of them are pack expansions (`Dp`).
    packs: Vec<usize>,
}

/// A lambda signature being read: the parameters seen so far.
struct Signature {
    /// The bracket depth of the signature's own parameters.
    depth: usize,
    params: usize,
    packs: Vec<usize>,
    /// Inside a parameter's type (after its qualifiers, before its end).
    in_type: bool,
    /// A type this reader does not count; the signature is left as it is.
    unknown: bool,
}

impl Signature {
    /// A parameter starts here unless one is being read.
    fn start_param(&mut self) {
        if !self.in_type {
            self.params += 1;
            self.in_type = true;
        }
    }
}

/// The lambda signatures of the mangled `name` that hold a pack expansion.
fn lambda_packs(name: &str) -> Vec<LambdaPacks> {
    let b = name.as_bytes();
    let mut found = Vec::new();
    let mut signatures: Vec<Signature> = Vec::new();
    let mut depth = 0usize;
    for token in Tokens::new(b) {
        let at_signature = signatures.last_mut().filter(|s| s.depth == depth);
        match token {
            Token::Open(i) => {
                if let Some(s) = at_signature {
                    // Template arguments continue the type before them.
                    if !(b[i] == b'I' && !s.in_type && s.params > 0) {
                        s.start_param();
                    }
                }
                depth += 1;
                if b[i] == b'U' {
                    signatures.push(Signature {
                        depth,
                        params: 0,
                        packs: Vec::new(),
                        in_type: false,
                        unknown: false,
                    });
                }
            }
            Token::Close(i) => {
                let ends_signature = signatures.last().is_some_and(|s| s.depth == depth);
                if let Some(s) = ends_signature.then(|| signatures.pop()).flatten() {
                    // `E_` is the first closure, `E<n>_` the (n + 2)th.
                    let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
                    let number = match &name[i + 1..i + 1 + digits] {
                        "" => Some(1),
                        n => n.parse::<usize>().ok().and_then(|n| n.checked_add(2)),
                    };
                    if let Some(number) = number.filter(|_| !s.unknown && !s.packs.is_empty()) {
                        found.push(LambdaPacks {
                            number,
                            params: s.params,
                            packs: s.packs,
                        });
                    }
                }
                depth = depth.saturating_sub(1);
                if let Some(s) = signatures.last_mut().filter(|s| s.depth == depth) {
                    s.in_type = false;
                }
            }
            Token::Abbreviation(i) => {
                if let Some(s) = at_signature {
                    s.start_param();
                    // `St` is a prefix (`St3foo`); the others are whole types.
                    s.in_type = &b[i..i + 2] == b"St";
                }
            }
            Token::BackReference(_) | Token::SourceName(..) => {
                if let Some(s) = at_signature {
                    s.start_param();
                    s.in_type = false;
                }
            }
            Token::Other(i) | Token::CtorDtor(i) => {
                let Some(s) = at_signature else {
                    continue;
                };
                match b[i] {
                    b'D' if b.get(i + 1) == Some(&b'p') => {
                        s.start_param();
                        s.packs.push(s.params - 1);
                    }
                    b'r' | b'V' | b'K' | b'R' | b'O' | b'P' => s.start_param(),
                    // `v` alone: no parameters.
                    b'v' if !s.in_type && s.params == 0 => {}
                    b'T' | b'a'..=b'z' if b[i] != b'u' => {
                        s.start_param();
                        s.in_type = false;
                    }
                    _ => s.unknown = true,
                }
            }
        }
    }
    found
}

/// `text` (cpp_demangle's, of the mangled `name`) with each pack expansion among a
/// lambda's parameters written as GNU writes it: `(auto:1&)...`.
pub(super) fn lambda_pack_expansions(text: String, name: &str) -> String {
    if !name.contains("Dp") || !name.contains("Ul") {
        return text;
    }
    let signatures = lambda_packs(name);
    if signatures.is_empty() {
        return text;
    }
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 16);
    let mut last = 0;
    for (start, _) in text.match_indices("{lambda(") {
        let open = start + "{lambda".len();
        let Some(close) = matching(b, open) else {
            continue;
        };
        let Some(number) = text[close + 1..]
            .strip_prefix('#')
            .and_then(|t| t.split('}').next())
            .and_then(|n| n.parse::<usize>().ok())
        else {
            continue;
        };
        // The parameters at the list's own depth.
        let mut params = Vec::new();
        let mut depth = 0usize;
        let mut from = open + 1;
        for i in open + 1..close {
            match b[i] {
                b'(' | b'<' | b'[' | b'{' => depth += 1,
                b')' | b'>' | b']' | b'}' => depth = depth.saturating_sub(1),
                b',' if depth == 0 && b.get(i + 1) == Some(&b' ') => {
                    params.push(from..i);
                    from = i + 2;
                }
                _ => {}
            }
        }
        if from < close {
            params.push(from..close);
        }
        let Some(signature) = signatures.iter().find(|s| {
            s.number == number
                && s.params == params.len()
                && s.packs
                    .iter()
                    .all(|&p| text[params[p].clone()].starts_with("auto:"))
        }) else {
            continue;
        };
        for &p in &signature.packs {
            let param = params[p].clone();
            if param.start < last {
                continue;
            }
            out.push_str(&text[last..param.start]);
            out.push('(');
            // cpp_demangle writes a pack of a parameter alone as `auto:1...`.
            let element = &text[param.clone()];
            out.push_str(element.strip_suffix("...").unwrap_or(element));
            out.push_str(")...");
            last = param.end;
        }
    }
    if last == 0 {
        return text;
    }
    out.push_str(&text[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::super::demangle;

    /// The expected names are binutils 2.40 `c++filt -p -i`'s output for these names,
    /// pasted.
    #[test]
    fn cxx_pack_expansions_in_lambda_signatures_as_gnu_spells_them() {
        for (mangled, gnu) in [
            ("_ZZ1fvENKUlDpT_E_clEv", "f()::{lambda((auto:1)...)#1}::operator()"),
            ("_ZZ1fvENKUlDpRT_E_clEv", "f()::{lambda((auto:1&)...)#1}::operator()"),
            ("_ZZ1fvENKUliDpT_E_clEv", "f()::{lambda(int, (auto:1)...)#1}::operator()"),
            ("_ZZ1fvENKUlDpRKT_E_clEv", "f()::{lambda((auto:1 const&)...)#1}::operator()"),
            ("_Z1gIZ1fvEUlDpRT_E_EvT_", "g<f()::{lambda((auto:1&)...)#1}>"),
            ("_ZZ1fvENKUlT_DpT0_E_clEv", "f()::{lambda(auto:1, (auto:2)...)#1}::operator()"),
            (
                "_ZSt13__invoke_implIbZN4llvm14SDPatternMatch23ReassociatableOpc_matchIJNS1_10Value_bindES3_NS1_10Ones_matchEEE5matchINS1_17BasicMatchContextEEEbRKT_NS0_7SDValueEEUlDpRT_E_JRS3_SG_RS4_EES8_St14__invoke_otherOT0_DpOT1_",
                "std::__invoke_impl<bool, llvm::SDPatternMatch::ReassociatableOpc_match<llvm::SDPatternMatch::Value_bind, llvm::SDPatternMatch::Value_bind, llvm::SDPatternMatch::Ones_match>::match<llvm::SDPatternMatch::BasicMatchContext>(llvm::SDPatternMatch::BasicMatchContext const&, llvm::SDValue)::{lambda((auto:1&)...)#1}, llvm::SDPatternMatch::Value_bind&, llvm::SDPatternMatch::Value_bind&, llvm::SDPatternMatch::Ones_match&>",
            ),
        ] {
            assert_eq!(demangle(mangled), gnu, "{mangled}");
        }
    }
}
