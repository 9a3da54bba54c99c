//! x86-64's sampled registers (`PERF_REG_X86_*`): their names as perf 6.1 gives them,
//! and the register lists of `perf record --intr-regs` and `--user-regs`.

/// The registers perf samples when none are named (its `PERF_REGS_MASK`: AX to R15
/// without DS, ES, FS and GS).
pub const X86_64_DEFAULT_REGS: u64 = super::unwind::X86_64_USER_REGS;

/// `PERF_REG_X86_*` names, by register number (perf's `__perf_reg_name_x86`).
const X86_64_REGS: [&str; 24] = [
    "AX", "BX", "CX", "DX", "SI", "DI", "BP", "SP", "IP", "FLAGS", "CS", "SS", "DS", "ES", "FS",
    "GS", "R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15",
];

/// The name perf 6.1 gives register `reg`: the XMM registers are two numbers each,
/// the first named.
pub fn x86_64_reg_name(reg: u32) -> String {
    match reg {
        0..=23 => X86_64_REGS[reg as usize].to_string(),
        32..=63 if reg % 2 == 0 => format!("XMM{}", (reg - 32) / 2),
        _ => "unknown".to_string(),
    }
}

/// The mask of a comma-separated register list (`ax,bx,r15`, any case), as perf's
/// `--intr-regs=REGS`; an empty list is perf's default set.
pub fn parse_reg_list(list: &str) -> Result<u64, String> {
    if list.trim().is_empty() {
        return Ok(X86_64_DEFAULT_REGS);
    }
    let mut mask = 0;
    for name in list.split(',').map(str::trim) {
        // DS, ES, FS and GS are not sampled on x86-64 (the kernel refuses them).
        let reg = X86_64_REGS
            .iter()
            .position(|r| r.eq_ignore_ascii_case(name))
            .filter(|&r| X86_64_DEFAULT_REGS & (1 << r) != 0)
            .ok_or_else(|| {
                format!(
                    "unknown register '{name}'; available: {}",
                    (0..24)
                        .filter(|r| X86_64_DEFAULT_REGS & (1 << r) != 0)
                        .map(|r| X86_64_REGS[r])
                        .collect::<Vec<_>>()
                        .join(" ")
                )
            })?;
        mask |= 1 << reg;
    }
    Ok(mask)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reg_lists() {
        assert_eq!(parse_reg_list(""), Ok(0xff0fff));
        assert_eq!(parse_reg_list("ax,IP,r15"), Ok(1 | 1 << 8 | 1 << 23));
        assert!(parse_reg_list("ds").unwrap_err().contains("'ds'"));
        assert_eq!(x86_64_reg_name(9), "FLAGS");
        assert_eq!(x86_64_reg_name(34), "XMM1");
    }
}
