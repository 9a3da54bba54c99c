//! Robustness: every format of the committed all-events tree, mutated at random (bytes
//! flipped, lines cut, text truncated), parses or fails with an error, and printing
//! random payloads through whatever parsed never panics. And the plans the print-fmt
//! compiler makes (fields read and printed without the evaluator) print exactly what the
//! evaluator prints, for every format, mutant and payload, in both styles.

use crate::support::skips;

use std::path::Path;

use tracectl::event::{PrintEnv, PrintStyle, Record, Schema};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn formats() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tracefs-fixtures/linux-6.18-all/events");
    let mut out = Vec::new();
    let Ok(systems) = std::fs::read_dir(&root) else {
        return out;
    };
    for s in systems.flatten() {
        let Ok(evs) = std::fs::read_dir(s.path()) else {
            continue;
        };
        for e in evs.flatten() {
            if let Ok(t) = std::fs::read_to_string(e.path().join("format")) {
                out.push((s.file_name().to_string_lossy().into_owned(), t));
            }
        }
    }
    out.sort();
    out
}

/// Prints random payloads in both styles; returns how many printed through the print fmt
/// (rather than falling back to `field=value`).
fn print_random(s: &Schema, rng: &mut Rng) -> usize {
    let (mut planned, mut general) = (Vec::new(), Vec::new());
    let mut printed = 0;
    for len in [0usize, 3, 8, 64, 300, 300, 300] {
        let mut data: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        if len >= 2 {
            data[..2].copy_from_slice(&s.id.to_le_bytes());
        }
        // Small values too: zero tests, flag tables and symbols take other branches.
        if rng.below(2) == 0 {
            for b in data.iter_mut().skip(8) {
                *b = [0, 1, 2, 0x80, 0xff][rng.below(5)];
            }
        }
        let rec = Record {
            cpu: 0,
            ts: 0,
            data: &data,
        };
        for style in [PrintStyle::Kernel, PrintStyle::TraceCmd] {
            let env = PrintEnv {
                style,
                long_size: s.long_size,
                ..PrintEnv::default()
            };
            planned.clear();
            general.clear();
            let a = s.write_text(&rec, &env, &mut planned);
            let b = s.write_text_unplanned(&rec, &env, &mut general);
            assert_eq!(
                (a, String::from_utf8_lossy(&planned)),
                (b, String::from_utf8_lossy(&general)),
                "{}:{} ({style:?}) planned and evaluated differ on {data:02x?}",
                s.system,
                s.name
            );
            printed += usize::from(a && !planned.is_empty());
        }
    }
    printed
}

#[test]
fn mutated_formats_and_random_payloads_never_panic() {
    let fmts = formats();
    if fmts.is_empty() {
        skips::skip("tracefs-fixtures/linux-6.18-all is not in this checkout");
        return;
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut parsed, mut rejected, mut printed, mut prints) = (0, 0, 0, 0);
    for (sys, text) in &fmts {
        // The original, with random payloads.
        let s = Schema::parse(sys, text, 8).expect("an unmodified format parses");
        printed += print_random(&s, &mut rng);
        prints += 14;
        let per = std::env::var("MUTATIONS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(3);
        for _ in 0..per {
            let mut b = text.clone().into_bytes();
            match rng.below(3) {
                0 => {
                    for _ in 0..1 + rng.below(4) {
                        let i = rng.below(b.len());
                        // ASCII syntax, and bytes that turn into non-ASCII text.
                        const ALPHABET: &[u8] = b"\"(){},;:%*-0123456789abcREC->\n\t[]\xff\xc3";
                        b[i] = ALPHABET[rng.below(ALPHABET.len())];
                    }
                }
                1 => b.truncate(rng.below(b.len())),
                _ => {
                    let i = rng.below(b.len());
                    let j = (i + rng.below(40)).min(b.len());
                    b.drain(i..j);
                }
            }
            let m = String::from_utf8_lossy(&b);
            match Schema::parse(sys, &m, if rng.below(2) == 0 { 8 } else { 4 }) {
                Ok(s) => {
                    parsed += 1;
                    print_random(&s, &mut rng);
                }
                Err(e) => {
                    rejected += 1;
                    assert!(!e.to_string().is_empty());
                }
            }
        }
    }
    eprintln!(
        "{} formats, {printed} of {prints} random payloads printed through their print fmt, \
         {parsed} mutants parsed, {rejected} rejected",
        fmts.len()
    );
    // The tree has every event of its kernel; both outcomes of a mutation occur, and the
    // originals print random payloads through their print fmts, not only as fallbacks.
    assert!(fmts.len() > 1000, "only {} formats", fmts.len());
    assert!(parsed > fmts.len() / 2, "only {parsed} mutants parsed");
    assert!(
        rejected > fmts.len() / 10,
        "only {rejected} mutants rejected"
    );
    assert!(
        printed > prints / 3,
        "only {printed} of {prints} payloads printed through the print fmt"
    );
}
